// Compares the operations of a batch with the stored ones, answered in one row (see compare_units).
// $params: project (string), rows (list of {id (string), fp (string)})
// Returns: missing (ids not stored), differing (stored with another fingerprint), identical (count stored alike)
UNWIND $rows AS row
OPTIONAL MATCH (o:Operation {project: $project, id: row.id})
RETURN
  collect(CASE WHEN o IS NULL THEN row.id END) AS missing,
  collect(CASE WHEN o.fp <> row.fp THEN row.id END) AS differing,
  count(CASE WHEN o.fp = row.fp THEN 1 END) AS identical
