// The recorded judge check of a model in a project, as the JSON it was returned with; no row
// when none was recorded. A seek on the judge_check_key index.
// $params: project (string), model (string)
MATCH (j:JudgeCheck {project: $project, id: $model})
RETURN j.outcome AS outcome
