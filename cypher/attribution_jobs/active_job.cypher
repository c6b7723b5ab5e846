// The id of the project's active (running or interrupted) attribution job, if any.
// $params: project (string)
MATCH (j:AttributionJob {active_project: $project})
RETURN j.id AS id
