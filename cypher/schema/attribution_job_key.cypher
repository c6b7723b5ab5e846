// Uniqueness of (project, id) for attribution jobs; GET /attribution-jobs/{id} seeks it.
// $params: none
CREATE CONSTRAINT attribution_job_key IF NOT EXISTS
FOR (j:AttributionJob) REQUIRE (j.project, j.id) IS UNIQUE
