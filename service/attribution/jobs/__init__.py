"""Attribution jobs: every failed case of a project attributed in the background, with progress,
stop and resume (``/attribution-jobs``). ``routes`` -> ``service`` (start, read, stop, resume)
-> ``repository`` (the only Cypher: the job, its claimed cases, its heartbeat); ``runner`` does
the work in a thread of its own so that it cannot starve the request loop; ``models``.
"""
