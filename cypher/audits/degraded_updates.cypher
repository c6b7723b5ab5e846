// Candidate degraded updates: an operation consumed a version of a memory and produced the next
// version. Versions of one entry share memory_id (the unit property set at ingestion from
// attributes.memory_id or entry_id): the next version is an output of the same entry. A memory
// without memory_id (a buffer rewritten each turn, say) has a next version when an operation of
// kind update consumed it and produced exactly one output, a memory without memory_id. Both are
// kind memory (a tombstone is a deletion, not an update). Rows carry both contents: the service
// counts the content words the old version had and the new one lacks, and keeps the rows that
// lost at least min_lost_words (so a page may hold fewer rows than limit). In operation time,
// then id order.
// $params: project (string), skip (int: candidates to skip), limit (int: candidates to read),
//          min_lost_words (int: the service counts lost words; here only a pre-filter, below)
// Plan: the writer flags the operations that have a candidate (rewrites_memory, set by
// cypher/ingest/mark_rewrites.cypher with the same pairs and pre-filter as below: a test holds
// the two texts equal), and only those
// are walked, in time order, from the operation_rewrites index (the ORDER BY names the constant
// properties first, so the planner sees the index's order and sorts only the rows of one
// timestamp): a page reads the operations that can be rows, not the project. Per operation, the
// memories it read are gathered once and each memory it wrote is paired with those of its own
// entry among them: the work is the operation's own inputs and outputs, whatever the length of
// the entry's history (seeking all of an entry's versions for each of its updates made one
// entry of N versions cost N^2: 78 s at 9,997 versions). The flag assumes min_lost_words >= 1
// (the API's minimum).
MATCH (op:Operation {project: $project, rewrites_memory: true})
USING INDEX op:Operation(project, rewrites_memory, ts)
// Reads (a search consumes every memory it returns) cannot write a next version.
WHERE op.ts IS NOT NULL AND NOT op.kind IN ['retrieval', 'response', 'evaluation']
WITH op
ORDER BY op.project, op.rewrites_memory, op.ts
CALL (op) {
  // The memories the operation read, each with its entry, read once for all its outputs (an
  // extraction may read hundreds of messages and write dozens of memories).
  WITH op, [(op)-[:CONSUMES]->(read:Unit {kind: 'memory'}) | {unit: read, entry: read.memory_id}]
       AS reads
  WHERE size(reads) > 0
  MATCH (op)-[:PRODUCES]->(new:Unit {kind: 'memory'})
  // A version without memory_id is the next one only as the only output of an update.
  WITH op, new, new.memory_id AS entry, reads
  WHERE entry IS NOT NULL OR (op.kind = 'update' AND COUNT { (op)-[:PRODUCES]->() } = 1)
  UNWIND [r IN reads WHERE r.unit <> new
          AND (r.entry = entry OR (entry IS NULL AND r.entry IS NULL)) | r.unit] AS old
  RETURN old, new
}
// Pre-filter for min_lost_words >= 1: drop a candidate whose new version holds the old content
// verbatim between word boundaries (an appended buffer, an unchanged entry): then every token of
// the old version is a token of the new one and the service would drop it too (its tokens are
// [a-z0-9]+ of the lower-cased text; a boundary here is ASCII space or punctuation, which
// lower-casing leaves alone). Only the first occurrence is checked; a candidate it cannot
// decide is kept. Without it a page reads every candidate of the project to find a rare loss.
WITH op, old, new, split(new.content, old.content) AS around
WHERE $min_lost_words < 1
   OR NOT coalesce(
     old.content = ''
     OR (size(around) > 1
         AND (around[0] = '' OR right(around[0], 1) =~ '[\\s\\p{Punct}]')
         AND (around[1] = '' OR left(around[1], 1) =~ '[\\s\\p{Punct}]')),
     false)
RETURN old.memory_id AS memory_id,
       old.id AS old_version,
       new.id AS new_version,
       op.id AS operation,
       op.name AS operation_name,
       op.ts AS ts,
       old.content AS _old_content,
       new.content AS _new_content
ORDER BY op.project, op.rewrites_memory, op.ts, op.id, old.id, new.id
SKIP $skip
LIMIT $limit
