// The nodes attribution/ancestors returns, by id only, in the same order: for a reader that
// keeps the rows it has read before (an attribution job, service/attribution/row_cache.py)
// and fetches only the others with attribution/nodes. Each as [id, is operation, cacheable]:
// a unit stored by id only (defined = false) may be defined later, so it is never kept.
// Several units at once list the union of their ancestors (a job's chunk reads its answers'
// in one traversal: service/attribution/shared_graph.py); one unit lists what
// attribution/ancestors lists for it.
// $params: project (string), unit_ids (list of string), limit (int: at most this many nodes)
UNWIND $unit_ids AS unit_id
MATCH (start:Unit {project: $project, id: unit_id})
MATCH (start)-[:PRODUCED_BY|CONSUMES*0..]->(x)
WITH DISTINCT x
LIMIT $limit
RETURN collect([x.id, x:Operation, x:Operation OR x.defined = true]) AS nodes
