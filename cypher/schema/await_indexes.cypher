// Blocks until every index is ONLINE, so the first MERGE after start-up uses them.
// $params: none
CALL db.awaitIndexes(300)
