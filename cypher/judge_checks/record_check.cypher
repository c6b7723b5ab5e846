// Stores a judge check's outcome for a project and a model (POST /judge/check with record),
// replacing the one recorded before for the same model: the project's llm results read the
// newest (service/attribution/service.py, check_bearing).
// $params: project (string), model (string: the model checked, the node's id),
//          props (map: outcome (JSON string: the whole JudgeCheckResult), accuracy (float or
//                 null), probe_set (string), checked_at (datetime))
MERGE (j:JudgeCheck {project: $project, id: $model})
SET j += $props
