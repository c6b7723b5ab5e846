// Finds a project's failed cases (attribute --all-failed, reports).
// $params: none
CREATE INDEX case_verdict IF NOT EXISTS FOR (c:Case) ON (c.project, c.verdict)
