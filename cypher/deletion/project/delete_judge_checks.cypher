// Deletes up to $batch recorded judge checks of a project being deleted; run until it deletes
// nothing (DELETE /project, one label after another). The seek on the judge_check_key index
// ((project, id), hence "id IS NOT NULL") reads only this project's nodes: the plan has no
// AllNodesScan or label scan (tests/test_project_deletion.py).
// $params: project (string), batch (integer)
MATCH (n:JudgeCheck {project: $project})
WHERE n.id IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
