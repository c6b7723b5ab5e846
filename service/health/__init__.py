"""Health probes (``/healthz``, ``/readyz``): open to every caller, no API key needed.

``routes`` answers them, ``repository`` asks each store. ``routes.router`` is registered by
``service.app``; this package imports nothing itself.
"""
