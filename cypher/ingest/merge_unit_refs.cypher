// Units a batch references by id without defining them, on the optimistic path that has not looked
// them up: a unit already stored (defined or not) is left as it is, a new id is stored without
// content (defined = false) until a batch defines it. MERGE on the unit_key constraint makes two
// concurrent batches naming the same id end with one node.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MERGE (u:Unit {project: $project, id: id})
ON CREATE SET u.defined = false, u.reaches_memory = false
