// Creates units the batch defines and the graph does not hold yet (the writer looked them up in
// the same transaction; a concurrent creator makes this fail on the uniqueness constraint, and
// the writer retries the whole transaction).
// $params: project (string),
//          rows (list of {id, kind, content, ts (datetime or null), attributes (JSON string or null), fp})
UNWIND $rows AS row
CREATE (:Unit {
  project: $project, id: row.id, kind: row.kind, content: row.content, ts: row.ts,
  attributes: row.attributes, fp: row.fp, defined: true
})
