"""From outside formats to what the graph writer takes. Pure: no I/O.

- ``rows``: a validated ``TraceBatch`` flattened into the parameter rows of the ingest Cypher
  statements (fingerprints; conflicting definitions inside one batch);
- ``execution_graph*``: the MemTrace paper's execution graphs (MemTraceBench) as batches;
- ``otlp*``: OpenTelemetry trace exports as batches;
- ``ids``: the wire ids the converters make, within the wire format's 256-character limit.
"""
