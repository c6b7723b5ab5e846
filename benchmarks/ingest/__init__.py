"""Ingest benchmarks: the API against the plain-``CREATE`` limit and the subgraph's cost as the
graph grows, ``memtrace serve --workers N``, the CLI on big files, and what the writer's marks
cost. Run ``python -m benchmarks.ingest`` for the list of variants."""
