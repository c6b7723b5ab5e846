// The nodes attribution/descendants returns, by id only, in the same order (see
// attribution/ancestor_ids): each as [id, is operation, cacheable]. Several units at once list
// the union of their descendants (service/attribution/shared_graph.py).
// $params: project (string), unit_ids (list of string), limit (int: at most this many nodes)
UNWIND $unit_ids AS unit_id
MATCH (start:Unit {project: $project, id: unit_id})
MATCH (start)<-[:PRODUCED_BY|CONSUMES*0..]-(x)
WITH DISTINCT x
LIMIT $limit
RETURN collect([x.id, x:Operation, x:Operation OR x.defined = true]) AS nodes
