"""MemTrace service: ingestion API, graph queries and attribution over a Neo4j memory graph."""
