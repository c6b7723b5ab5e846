// Creates units the batch defines and the graph does not hold yet (the writer looked them up in
// the same transaction; a concurrent creator makes this fail on the uniqueness constraint, and
// the writer retries the whole transaction).
// $params: project (string),
//          rows (list of {id, kind, content, ts (datetime or null), attributes (JSON string or null),
//                memory_id (string or null: the entry from attributes.memory_id/entry_id), fp})
UNWIND $rows AS row
CREATE (:Unit {
  project: $project, id: row.id, kind: row.kind, content: row.content, ts: row.ts,
  attributes: row.attributes, memory_id: row.memory_id, fp: row.fp, defined: true
})
