"""The browser views of MemTrace: a case's ancestor graph with its attribution, and case lists.

``router`` is registered by ``service.app`` like the JSON routers.
"""

from service.ui.routes import router

__all__ = ["router"]
