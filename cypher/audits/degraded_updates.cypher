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
MATCH (old:Unit {project: $project, kind: 'memory'})
MATCH (op:Operation)-[:CONSUMES]->(old)
// Reads (a search consumes every memory it returns) cannot write a next version: skip them
// before expanding their outputs.
WHERE NOT op.kind IN ['retrieval', 'response', 'evaluation']
MATCH (op)-[:PRODUCES]->(new:Unit {kind: 'memory'})
WHERE new <> old
  AND CASE
    WHEN old.memory_id IS NOT NULL THEN new.memory_id = old.memory_id
    ELSE new.memory_id IS NULL AND op.kind = 'update' AND COUNT { (op)-[:PRODUCES]->() } = 1
  END
RETURN old.memory_id AS memory_id,
       old.id AS old_version,
       new.id AS new_version,
       op.id AS operation,
       op.name AS operation_name,
       op.ts AS ts,
       old.content AS _old_content,
       new.content AS _new_content
ORDER BY op.ts, op.id, old.id, new.id
SKIP $skip
LIMIT $limit
