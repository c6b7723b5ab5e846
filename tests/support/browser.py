"""A browser page with everything that went wrong on it recorded, for the UI tests
(tests/ui/conftest.py makes them)."""

from __future__ import annotations

import os
from typing import Any

from playwright.sync_api import Browser, Page

from tests.support.servers import ServiceHandle

CHROMIUM = os.environ.get("MEMTRACE_TEST_CHROMIUM", "/usr/bin/chromium")
"""Debian's chromium; Playwright never downloads a browser here."""


class Watched:
    """A page with every console error, page error and dialog it raised recorded."""

    def __init__(self, browser: Browser, width: int = 1600, height: int = 1000) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "response",
            lambda r: self.errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )
        self.page.on(
            "console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None
        )

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        self.page.on("dialog", on_dialog)

    def open_case(self, service: ServiceHandle, project: str, case_id: str) -> Page:
        response = self.page.goto(f"{service.url}/ui/cases/{case_id}?project={project}")
        assert response is not None and response.status == 200
        self.page.wait_for_function("() => document.body?.dataset.graphReady === 'true'")
        return self.page
