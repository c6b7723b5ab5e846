// Units a batch references by id without defining them, on the optimistic path that has not looked
// them up: a unit already stored (defined or not) is left as it is, a new id is stored without
// content (defined = false) until a batch defines it. MERGE on the unit_key constraint makes two
// concurrent batches naming the same id end with one node. Returns each of them as stored, in
// one row ([id, kind, memory_id, content, reaches_memory] lists: a record per unit costs the
// driver more than the statement), so that the writer settles the batch's marks itself
// (ingest/marks.py) instead of asking the store per operation.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MERGE (u:Unit {project: $project, id: id})
ON CREATE SET u.defined = false, u.reaches_memory = false
RETURN collect([u.id, u.kind, u.memory_id, u.content, u.reaches_memory]) AS units
