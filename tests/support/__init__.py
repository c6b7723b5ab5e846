"""Helpers the test modules and the benchmarks share: service and Neo4j processes (``servers``:
``run_service``, ``neo4j_for_tests``, ``fresh_neo4j``; ``serve``: ``memtrace serve --workers``),
the scripted OpenAI-compatible server (``llm_server``), the real llama.cpp one (``llama_server``),
trace batches, OTLP export, the CLI runner. Test modules import from here, never from each other.

This is the one home of the process helpers: a benchmark starts its Neo4j and its service with
the same code the tests do, so a fix to how either starts or stops reaches both. It stays under
``tests/`` rather than becoming a package of its own at the top level, because it is test code
(not installed, not part of the service) and the top level is the one the project was specified
with; the benchmarks run from the repository root, where ``tests`` imports.
"""
