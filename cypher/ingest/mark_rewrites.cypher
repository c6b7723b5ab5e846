// Sets rewrites_memory on operations: true when the operation wrote a next version of a memory
// that does not hold the version it read verbatim, i.e. when audits/degraded_updates has a
// candidate for it (the two statements test the same pairs the same way: change both together).
// The audit then walks only these operations. A version pair is found as in the audit: a
// memory output with memory_id and a consumed memory of the same entry, or the only output of an
// update, a memory without memory_id, and a consumed memory without one, among the operation's
// own inputs (read once per operation: the work does not grow with the entry's history); reads
// (retrieval, response, evaluation) write none. A pair whose new version holds the old content
// verbatim between word boundaries (or whose old content is empty) loses no word and does not
// count; a pair with a content not yet defined counts (the writer sets the flag again when it
// is).
// $params: project (string),
//          ops (list of string: operations to set the flag on, e.g. a batch's new ones),
//          units (list of string: units just defined; the operations reading or writing them
//                 are set again)
CALL () {
  UNWIND $ops AS id
  MATCH (op:Operation {project: $project, id: id})
  RETURN op
  UNION
  UNWIND $units AS id
  MATCH (:Unit {project: $project, id: id})<-[:CONSUMES|PRODUCES]-(op:Operation)
  RETURN op
}
CALL (op) {
  WITH op
  WHERE NOT op.kind IN ['retrieval', 'response', 'evaluation']
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
  WITH old, split(new.content, old.content) AS around
  WHERE NOT coalesce(
    old.content = ''
    OR (size(around) > 1
        AND (around[0] = '' OR right(around[0], 1) =~ '[\\s\\p{Punct}]')
        AND (around[1] = '' OR left(around[1], 1) =~ '[\\s\\p{Punct}]')),
    false)
  RETURN count(old) > 0 AS rewrites
}
SET op.rewrites_memory = rewrites
RETURN count(op) AS flagged
