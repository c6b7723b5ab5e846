// What some cases add to their project's kept report counts now: the key and sums stored on
// each when it was last counted (null: never counted).
// $params: project (string), ids (list of string)
UNWIND $ids AS case_id
MATCH (c:Case {project: $project, id: case_id})
RETURN c.id AS case_id, c.report_key AS key, c.report_sums AS sums
