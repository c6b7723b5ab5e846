"""The browser views of MemTrace: a case's ancestor graph with its attribution, and case lists.

``router`` is registered by ``service.app`` like the JSON routers, and ``PAGE_ERRORS`` is how the
server's errors look on a page (``service.ui.errors``).
"""

from service.ui.errors import PAGE_ERRORS
from service.ui.routes import router

__all__ = ["PAGE_ERRORS", "router"]
