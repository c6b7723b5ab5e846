// One step of an unnamed case scope's neighbourhood (service/attribution/scope.py): from the
// frontier's units, the operations that build the memory (not retrieval, response or
// evaluation: they read the store at question time) and made or read them, of the case's
// systems; then every unit those operations made or read, with its kind. The caller keeps the
// units of the kinds a step goes through as the next frontier, and the messages as the scope.
// The unit_key seek per id, then relationships: nothing here reads beyond the frontier's
// operations, whatever else the project holds.
// $params: project (string), ids (list of string: the frontier's unit ids),
//          systems (list of string: operations of other systems are not stepped through;
//          empty: any)
// Returns: units (list of [id, kind], distinct, in no particular order)
UNWIND $ids AS id
MATCH (u:Unit {project: $project, id: id})
MATCH (u)-[:PRODUCED_BY|CONSUMES]-(o:Operation)
WHERE NOT coalesce(o.kind, '') IN ['retrieval', 'response', 'evaluation']
  AND (size($systems) = 0 OR o.system IN $systems)
WITH DISTINCT o
MATCH (o)-[:CONSUMES|PRODUCES]->(v:Unit)
RETURN collect(DISTINCT [v.id, v.kind]) AS units
