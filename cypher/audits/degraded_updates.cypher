// Candidate degraded updates: an operation consumed a version of a memory and produced the next
// version. Versions of one entry share memory_id (the unit property set at ingestion from
// attributes.memory_id or entry_id): the next version is an output of the same entry. A memory
// without memory_id (a buffer rewritten each turn, say) has a next version when an operation of
// kind update consumed it and produced exactly one output, a memory without memory_id. Both are
// kind memory (a tombstone is a deletion, not an update). Rows carry both contents: the service
// counts the content words the old version had and the new one lacks, and keeps the rows that
// lost at least min_lost_words (so a page may hold fewer rows than limit). In operation time,
// then id order.
// $params: project (string), skip (int: candidates to skip), limit (int: candidates to read);
//          min_lost_words (int) is applied by the service, not here
// Plan: operations are walked in time order from the operation_time index (the ORDER BY names
// op.project first, a constant, so the planner sees the index's order and sorts only the rows of
// one timestamp: a page reads the operations it needs, not the project). Per operation, a
// version with memory_id finds the consumed versions of its entry through the memory_id index
// instead of reading every input (an extraction may read hundreds of messages).
MATCH (op:Operation {project: $project})
USING INDEX op:Operation(project, ts)
// Reads (a search consumes every memory it returns) cannot write a next version: skip them
// before expanding their outputs.
WHERE op.ts IS NOT NULL AND NOT op.kind IN ['retrieval', 'response', 'evaluation']
WITH op
ORDER BY op.project, op.ts
CALL (op) {
  MATCH (op)-[:PRODUCES]->(new:Unit {kind: 'memory'})
  WHERE new.memory_id IS NOT NULL
  MATCH (old:Unit {project: $project, memory_id: new.memory_id})
  WHERE old.kind = 'memory' AND old <> new
  MATCH (op)-[:CONSUMES]->(old)
  RETURN old, new
  UNION ALL
  WITH op
  WHERE op.kind = 'update' AND COUNT { (op)-[:PRODUCES]->() } = 1
  MATCH (op)-[:PRODUCES]->(new:Unit {kind: 'memory'})
  WHERE new.memory_id IS NULL
  MATCH (op)-[:CONSUMES]->(old:Unit {kind: 'memory'})
  WHERE old.memory_id IS NULL AND old <> new
  RETURN old, new
}
RETURN old.memory_id AS memory_id,
       old.id AS old_version,
       new.id AS new_version,
       op.id AS operation,
       op.name AS operation_name,
       op.ts AS ts,
       old.content AS _old_content,
       new.content AS _new_content
ORDER BY op.project, op.ts, op.id, old.id, new.id
SKIP $skip
LIMIT $limit
