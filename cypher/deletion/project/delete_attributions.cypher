// Deletes up to $batch attributions of a project being deleted, with their relationships; run
// until it deletes nothing (DELETE /project, one label after another). The seek on the
// attribution_project index ((project, case_id), hence "case_id IS NOT NULL") reads only this
// project's nodes: the plan has no AllNodesScan or label scan (tests/test_project_deletion.py).
// $params: project (string), batch (integer)
MATCH (n:Attribution {project: $project})
WHERE n.case_id IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
