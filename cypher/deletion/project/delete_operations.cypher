// Deletes up to $batch operations of a project being deleted, with their relationships; run until
// it deletes nothing (DELETE /project, one label after another). The seek on the operation_key
// index ((project, id), hence "id IS NOT NULL") reads only this project's nodes: the plan has no
// AllNodesScan or label scan (tests/test_project_deletion.py).
// $params: project (string), batch (integer)
MATCH (n:Operation {project: $project})
WHERE n.id IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
