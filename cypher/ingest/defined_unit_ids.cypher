// Which of the unit ids $ids the project holds as defined units (sent with their kind and
// content by some batch), not as bare references (a unit only named by id, defined = false) or
// not at all: POST /traces warns about a case whose answer or evidence unit is neither.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MATCH (u:Unit {project: $project, id: id})
WHERE u.defined
RETURN collect(u.id) AS defined
