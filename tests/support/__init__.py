"""Helpers the test modules share: service and Neo4j processes, trace batches, the scripted LLM,
OTLP export, the CLI runner. Test modules import from here, never from each other."""
