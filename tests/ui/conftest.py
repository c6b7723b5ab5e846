"""The browser the UI tests drive: Debian's chromium through Playwright's client library
(``/usr/bin/chromium``, or ``MEMTRACE_TEST_CHROMIUM``), which ``make test`` installs from Debian
when it is missing; Playwright never downloads a browser here. A missing browser fails these
tests (it does not skip them): a skipped browser test would hide that the page was never drawn.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.support.browser import CHROMIUM, Watched


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One browser per module (a new context per test keeps their pages apart)."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: the case-view tests drive Debian's chromium. Run "
            "`make test` as root (it installs it), or `apt-get install -y chromium`, or point "
            "MEMTRACE_TEST_CHROMIUM at another Chromium build",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    handle = Watched(browser)
    try:
        yield handle
    finally:
        handle.context.close()
