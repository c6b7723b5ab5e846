// At most one active (running or interrupted) attribution job per project: an active job holds
// active_project = its project, and nodes without the property are not constrained. Two
// concurrent starts cannot both win.
// $params: none
CREATE CONSTRAINT attribution_job_active IF NOT EXISTS
FOR (j:AttributionJob) REQUIRE j.active_project IS UNIQUE
