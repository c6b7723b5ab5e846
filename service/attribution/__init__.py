"""Attribution: from a failed case to the earliest decisive faulty operation and its error type.

- ``models``: what an attribution returns and stores;
- ``graph``: the in-memory view of a case's graph the walk runs on;
- ``judges``: "does this unit carry the information the question needs?" (heuristic, LLM);
- ``engine``: the staged walk (response -> evidence -> construction -> retrieval).
"""
