// Creates operations (the writer sends only those it did not find). An operation created by a
// concurrent batch in the meantime is left as it is and returned when it differs.
// $params: project (string),
//          rows (list of {id, name, kind, system, session_id, ts (datetime), attributes (JSON string), fp})
UNWIND $rows AS row
MERGE (o:Operation {project: $project, id: row.id})
ON CREATE SET o.name = row.name,
              o.kind = row.kind,
              o.system = row.system,
              o.session_id = row.session_id,
              o.ts = row.ts,
              o.attributes = row.attributes,
              o.fp = row.fp
WITH o, row
WHERE o.fp <> row.fp
RETURN o.id AS conflict
