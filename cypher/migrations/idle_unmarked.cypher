// Up to $batch operations stored before the writer marked idle ones (ingest/create_operations)
// that have no inputs or no outputs, marked idle (audit idle_operations seeks the mark). Run
// until it changes none. On a store written by this version it finds none, and the label scan
// with each operation's two edge checks is the whole cost.
// $params: batch (int)
MATCH (op:Operation)
WHERE op.idle IS NULL
  AND (NOT EXISTS { (op)-[:CONSUMES]->() } OR NOT EXISTS { (op)-[:PRODUCES]->() })
WITH op
LIMIT $batch
SET op.idle = true
RETURN count(op) AS changed
