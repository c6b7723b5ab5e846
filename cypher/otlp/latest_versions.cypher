// The version of a memory record an OTLP write consumes when its export has not seen the record
// (ingest/otlp_lineage.py): the unit of that record touched last, before the write, by a stored
// operation (written by it, or read by it, as a search reads what it returns); none when that
// was the record's tombstone (a deletion ends a chain) or nothing touched it yet. Operations at
// the write's time or later never count, so a re-sent export, or one sent after later turns,
// finds what the first send found. An operation already stored (a re-send) keeps what it
// consumed: its edges are immutable.
// Reads the (project, memory_id) index: every unit of the record, then the operations touching them.
// $params: project (string), rows (list of {op: string (operation id), memory_id: string,
//          before: ISO-8601 string (the operation's time)})
UNWIND $rows AS row
OPTIONAL MATCH (stored:Operation {project: $project, id: row.op})
CALL (row, stored) {
  WITH row WHERE stored IS NULL
  MATCH (u:Unit {project: $project, memory_id: row.memory_id})<-[r:PRODUCES|CONSUMES]-(o:Operation)
  WHERE o.ts < datetime(row.before)
  WITH u, o, r
  ORDER BY o.ts DESC, o.id DESC, type(r) = 'PRODUCES' DESC, u.kind = 'tombstone' DESC
  LIMIT 1
  RETURN CASE WHEN u.kind = 'tombstone' THEN null ELSE u.id END AS unit
  UNION
  WITH row WHERE stored IS NOT NULL
  MATCH (stored)-[:CONSUMES]->(u:Unit {memory_id: row.memory_id})
  RETURN u.id AS unit
}
WITH row, unit WHERE unit IS NOT NULL
RETURN row.op AS op, collect(DISTINCT unit) AS units
