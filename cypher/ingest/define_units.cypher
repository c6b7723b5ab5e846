// Fills in units that were known only by id (defined = false). A unit defined in the meantime
// keeps its first definition: units are immutable. A unit that already reaches a memory keeps
// that mark (ingest/mark_reach may have set it while the unit was known only by id).
// $params: project (string),
//          rows (list of {id, kind, content, ts (ISO-8601 string or null), attributes (JSON string or null),
//                memory_id (string or null: the entry from attributes.memory_id/entry_id), fp})
UNWIND $rows AS row
MATCH (u:Unit {project: $project, id: row.id})
WHERE u.fp IS NULL
SET u.kind = row.kind, u.content = row.content, u.ts = datetime(row.ts), u.attributes = row.attributes,
    u.memory_id = row.memory_id, u.fp = row.fp, u.defined = true,
    u.reaches_memory = coalesce(u.reaches_memory, false) OR row.kind = 'memory'
