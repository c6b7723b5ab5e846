// Fills in units that were known only by id (defined = false). A unit defined in the meantime
// keeps its first definition: units are immutable. A unit that already reaches a memory keeps
// that mark (ingest/mark_reach may have set it while the unit was known only by id). One a
// concurrent deletion removed since the writer found it is returned as lost (the writer runs the
// batch again).
// $params: project (string),
//          rows (list of {id, kind, content, ts (ISO-8601 string or null), attributes (JSON string or null),
//                memory_id (string or null: the entry from attributes.memory_id/entry_id), fp,
//                conversation_id, user_id, store_id (string or null: graph_schema/scope_names.py)})
// Returns: lost (ids of the rows' units that are not stored)
UNWIND $rows AS row
OPTIONAL MATCH (u:Unit {project: $project, id: row.id})
FOREACH (stub IN CASE WHEN u IS NOT NULL AND u.fp IS NULL THEN [u] ELSE [] END |
  SET stub.kind = row.kind, stub.content = row.content, stub.ts = datetime(row.ts),
      stub.attributes = row.attributes, stub.memory_id = row.memory_id, stub.fp = row.fp,
      stub.conversation_id = row.conversation_id, stub.user_id = row.user_id,
      stub.store_id = row.store_id,
      stub.defined = true,
      stub.reaches_memory = coalesce(stub.reaches_memory, false) OR row.kind = 'memory')
RETURN collect(CASE WHEN u IS NULL THEN row.id END) AS lost
