// Creates units the batch defines. On the optimistic path the writer has not looked them up: a unit
// already stored makes this fail on the unit_key constraint (ConstraintError), and the writer
// starts again on the lookup path. On the lookup path these are the ids it did not find; a
// concurrent creator makes it fail the same way, and the writer runs the transaction again.
// reaches_memory is the row's when given (the writer worked it out within the batch,
// ingest/marks.py), else true for a memory and false for anything else; ingest/mark_reach sets
// it on the units a memory descends from through the store.
// $params: project (string),
//          rows (list of {id, kind, content, ts (ISO-8601 string or null), attributes (JSON string or null),
//                memory_id (string or null: the entry from attributes.memory_id/entry_id), fp,
//                conversation_id, user_id, store_id (string or null: graph_schema/scope_names.py),
//                reaches_memory (boolean, optional)})
UNWIND $rows AS row
CREATE (:Unit {
  project: $project, id: row.id, kind: row.kind, content: row.content, ts: datetime(row.ts),
  attributes: row.attributes, memory_id: row.memory_id, fp: row.fp, defined: true,
  conversation_id: row.conversation_id, user_id: row.user_id, store_id: row.store_id,
  reaches_memory: coalesce(row.reaches_memory, row.kind = 'memory')
})
