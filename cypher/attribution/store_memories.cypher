// The units of the memory stores an unnamed case's lineage read (service/attribution/scope.py):
// every version and tombstone the writer kept a `store_id` for, by the (project, store_id)
// index, in id order so that a limit keeps the same ones every time. The neighbourhood of the
// case starts from them: a fact written to the store and never retrieved is found from here.
// $params: project (string), stores (list of string: kept store_id values), limit (int)
// Returns: ids (list of string, at most limit)
UNWIND $stores AS store
MATCH (u:Unit {project: $project, store_id: store})
USING INDEX SEEK u:Unit(project, store_id)
WITH DISTINCT u.id AS id
ORDER BY id
LIMIT $limit
RETURN collect(id) AS ids
