// Compares the units a batch names with the stored ones, answered in one row: decoding one row of
// lists costs the driver far less than a record per unit. A unit known only by id has fp null.
// $params: project (string),
//          rows (list of {id (string), fp (string; null for an id the batch only references)})
// Returns: missing (ids not stored), undefined (defined by the batch, stored by id only),
//          differing (stored with another fingerprint), identical (count stored alike)
UNWIND $rows AS row
OPTIONAL MATCH (u:Unit {project: $project, id: row.id})
RETURN
  collect(CASE WHEN u IS NULL THEN row.id END) AS missing,
  collect(CASE WHEN u IS NOT NULL AND u.fp IS NULL AND row.fp IS NOT NULL THEN row.id END) AS undefined,
  collect(CASE WHEN u.fp <> row.fp THEN row.id END) AS differing,
  count(CASE WHEN u.fp = row.fp THEN 1 END) AS identical
