// The minimal graph: units with what a trace sends for them (id, kind, content, ts) and nothing
// the service derives (no fingerprint, marks, scope names or attributes).
// $params: project (string), rows (list of {id, kind, content, ts (ISO-8601 string or null)})
UNWIND $rows AS row
CREATE (:MinimalUnit {
  project: $project, id: row.id, kind: row.kind, content: row.content, ts: datetime(row.ts)
})
