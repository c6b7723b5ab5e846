// The writes of the memory stores an unnamed case's lineage read (Scope.stores,
// service/attribution/scope.py), for the redundancy check (service/attribution/engine.py:
// _redundant_carrier, _store_reads): every version and tombstone the writer kept a `store_id`
// for, by the (project, store_id) index, with the operation that produced it, listed as
// attribution/descendant_ids lists nodes ([id, is operation, cacheable]). A search that names
// its store but lists only the records it returned (an OpenTelemetry search_memory) tells
// nothing of what else the store held; these writes do. Only writes made by $until (the
// answer's time; an operation without a time counts) are listed, latest first, so that a
// limit keeps the store as it stood when the question was asked, every later version of a
// kept entry with it.
// $params: project (string), stores (list of string: kept store_id values), until (datetime or
//   null), limit (int: at most this many writes)
UNWIND $stores AS store
MATCH (u:Unit {project: $project, store_id: store})
USING INDEX SEEK u:Unit(project, store_id)
MATCH (w:Operation)-[:PRODUCES]->(u)
WHERE $until IS NULL OR w.ts IS NULL OR w.ts <= $until
WITH DISTINCT u, w
ORDER BY w.ts DESC, w.id, u.id
LIMIT $limit
RETURN collect(DISTINCT [w.id, true, true]) + collect([u.id, false, u.defined = true]) AS nodes
