"""The browser views of MemTrace: a case's ancestor graph with its attribution, and case lists.

``routes.router`` is registered by ``service.app`` like the JSON routers, and
``errors.PAGE_ERRORS`` is how the server's errors look on a page.
"""
