// Deletes up to $batch nodes of a project (every label: units, operations, cases,
// attributions and anything else stamped with the project) with their relationships. Run
// until it deletes nothing: DELETE /project removes a whole project this way, in bounded
// transactions. Relationships never cross projects, so nothing of another project is touched.
// $params: project (string), batch (integer)
MATCH (n)
WHERE n.project = $project
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
