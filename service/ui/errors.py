"""How the server's errors look in a browser: the UI's side of ``service.http_errors.PageErrors``.

``service.app`` puts :data:`PAGE_ERRORS` on ``app.state.page_errors``; the error module then
answers a person opening a page with these instead of JSON, without importing the UI.
"""

from __future__ import annotations

from fastapi.responses import HTMLResponse, Response
from starlette.requests import Request

from service.ui import login, pages


class UiPageErrors:
    def is_page_request(self, request: Request) -> bool:
        return login.is_page_request(request)

    def error_page(self, status: int, code: str, message: str) -> Response:
        return HTMLResponse(
            pages.error_page(status, code, message), status_code=status, headers=pages.PAGE_HEADERS
        )

    def login_redirect(self, request: Request) -> Response:
        return login.login_redirect(request)


PAGE_ERRORS = UiPageErrors()
