// Finds a project's stored attributions (GET /attributions) without a label scan.
// $params: none
CREATE INDEX attribution_project IF NOT EXISTS FOR (a:Attribution) ON (a.project, a.case_id)
