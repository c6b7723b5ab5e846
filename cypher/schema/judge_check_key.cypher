// Uniqueness of (project, id) for recorded judge checks (the id is the model checked): one
// outcome per project and model, found by a seek when a project's llm judge is built.
// $params: none
CREATE CONSTRAINT judge_check_key IF NOT EXISTS
FOR (j:JudgeCheck) REQUIRE (j.project, j.id) IS UNIQUE
