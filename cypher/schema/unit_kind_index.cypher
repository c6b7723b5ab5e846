// Finds a project's units of one kind (source messages for attribution seeds, audits).
// $params: none
CREATE INDEX unit_kind IF NOT EXISTS FOR (u:Unit) ON (u.project, u.kind)
