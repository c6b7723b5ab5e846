"""Service functions: the logic between routes and the repository. They know nothing of HTTP."""
