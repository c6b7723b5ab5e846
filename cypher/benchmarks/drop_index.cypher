// Drops one of the service's secondary indexes for a while (benchmarks/ingest/ablation.py: what
// writing the graph costs without it); the benchmark creates it again from cypher/schema/.
// $params: name (string: an index name from cypher/schema/, never a constraint's)
DROP INDEX $name IF EXISTS
