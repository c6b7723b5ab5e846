"""Attribution jobs: every failed case of a project attributed in the background, with progress,
stop and resume (``/attribution-jobs``). ``routes`` -> ``service`` (start, read, stop, resume,
start the takers) -> ``repository`` (the only Cypher: the job, its chunks and their leases, its
claimed cases); ``runner``: every process's takers, on a thread of their own so that they cannot
starve the request loop; ``models``.
"""
