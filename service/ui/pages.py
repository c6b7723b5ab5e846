"""HTML of the browser views, from the templates in ``service/ui/templates``.

The one rule: data never becomes markup. Templates take only values we made (asset names) and one
JSON document, written into a ``<script type="application/json">`` block with every ``<``, ``>``
and ``&`` escaped, so no memory content, question or id can close the block or open a tag; the
page's script reads it with ``JSON.parse`` and puts text on the page with ``textContent`` only.
Error pages escape their message with ``html.escape``. The pages are sent with a Content Security
Policy that runs no inline script, as a second line of defence.
"""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from string import Template
from typing import Any

from pydantic import BaseModel

from service.ui.assets import vis_network
from service.ui.models import ConsolePage

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""Scripts and styles only from our own files (vis-network styles its elements through the DOM,
which this allows; tests/ui/test_ui.py fails on any CSP violation the page reports)."""

PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # The graph changes as traces arrive and cases are attributed: never show a stale one.
    "Cache-Control": "no-store",
}
"""Sent with every page, error pages included."""

_SCRIPT_SAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


@cache
def _template(name: str) -> Template:
    text = resources.files("service.ui").joinpath("templates", name).read_text(encoding="utf-8")
    return Template(text)


def script_json(data: BaseModel | dict[str, Any]) -> str:
    """JSON that is inert inside a ``<script type="application/json">`` element."""
    text = data.model_dump_json() if isinstance(data, BaseModel) else json.dumps(data)
    return text.translate(_SCRIPT_SAFE)


def _page(template: str, data: BaseModel) -> str:
    vis = vis_network()
    return _template(template).substitute(
        data=script_json(data), vis_js=vis.js_name, vis_css=vis.css_name
    )


def case_page(data: BaseModel) -> str:
    """The case view; ``data`` is a ``service.ui.models.CasePage``."""
    return _page("case.html", data)


def console_page(data: ConsolePage) -> str:
    """A console page: the shared frame, the page's own script, and ``data`` to start from."""
    return _template("console.html").substitute(
        data=script_json(data), base=data.base, page=data.page
    )


def login_page(target: str, message: str) -> str:
    """The API-key form (``service.ui.login``)."""
    return _template("login.html").substitute(
        next=html.escape(target, quote=True), message=html.escape(message)
    )


def error_page(status: int, code: str, message: str) -> str:
    """A plain page saying what went wrong (the message may quote user input: escaped)."""
    return _template("error.html").substitute(
        status=status, code=html.escape(code), message=html.escape(message)
    )
