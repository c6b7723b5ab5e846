// Finds the versions (and tombstones) of one memory entry in a project (audits).
// $params: none
CREATE INDEX unit_memory_id IF NOT EXISTS FOR (u:Unit) ON (u.project, u.memory_id)
