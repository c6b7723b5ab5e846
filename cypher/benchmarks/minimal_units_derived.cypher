// The minimal graph's units (benchmarks/ingest/ablation.py, variant `+derived`) with the
// properties the service derives on every unit besides what the trace sends: the fingerprint
// re-sends are compared by, defined, and the reaches_memory mark.
// $params: project (string),
//          rows (list of {id, kind, content, ts (ISO-8601 string or null), fp,
//                reaches_memory (boolean or null)})
UNWIND $rows AS row
CREATE (:MinimalUnit {
  project: $project, id: row.id, kind: row.kind, content: row.content, ts: datetime(row.ts),
  fp: row.fp, defined: true, reaches_memory: coalesce(row.reaches_memory, row.kind = 'memory')
})
