// Defines units: creates them, or fills in a unit that was known only by id. A unit that is
// already defined is left as it is (units are immutable); its id is returned when its stored
// fingerprint differs, which happens only when a concurrent batch defined it first.
// $params: project (string),
//          rows (list of {id, kind, content, ts (datetime or null), attributes (JSON string), fp})
UNWIND $rows AS row
MERGE (u:Unit {project: $project, id: row.id})
SET u += CASE WHEN u.fp IS NULL THEN {
      kind: row.kind, content: row.content, ts: row.ts, attributes: row.attributes,
      fp: row.fp, defined: true
    } ELSE {} END
WITH u, row
WHERE u.fp <> row.fp
RETURN u.id AS conflict
