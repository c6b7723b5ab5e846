// The identity of the database a service writes into (its id, kept for the life of the store's
// data folder): /readyz reports it for the default store and `memtrace demo` reads it from the
// Neo4j it started, so the demo never writes into a service on another Neo4j.
// $params: none
CALL db.info() YIELD id
RETURN id AS store_id
