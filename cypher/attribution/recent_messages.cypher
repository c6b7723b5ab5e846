// The last resort of an unnamed case's scope (service/attribution/scope.py): when its lineage
// names no conversation, user or session and reaches no message through the memory (a search
// whose records share no id with what was written), the messages read by the project's last
// $window operations that build the memory, of the case's systems, up to the answer's time.
// The (project, ts) index gives them latest first, so the read stops after the window whatever
// the project's size; how much of the project the window covers depends on its traffic, which
// is why the result says so (searched.scope = "recent").
// $params: project (string), systems (list of string: empty: any), until (datetime or null:
//          the answer's time), window (int: operations)
// Returns: ids (list of string: message unit ids), operations (int: how many were read)
MATCH (o:Operation {project: $project})
USING INDEX o:Operation(project, ts)
WHERE o.ts <= coalesce($until, datetime('9999-12-31T00:00:00Z'))
  AND NOT coalesce(o.kind, '') IN ['retrieval', 'response', 'evaluation']
  AND (size($systems) = 0 OR o.system IN $systems)
WITH o
ORDER BY o.ts DESC
LIMIT $window
WITH collect(o) AS ops
CALL (ops) {
  UNWIND ops AS o
  MATCH (o)-[:CONSUMES]->(u:Unit)
  WHERE coalesce(u.kind, '') = 'message'
  RETURN collect(DISTINCT u.id) AS ids
}
RETURN ids, size(ops) AS operations
