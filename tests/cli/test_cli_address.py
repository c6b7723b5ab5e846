"""Where the CLI finds the service: MEMTRACE_URL when set, else MEMTRACE_HOST:MEMTRACE_PORT (the
address `memtrace serve` binds with the same settings), and docs/settings.md lists every
setting the CLI reads."""

from __future__ import annotations

import inspect
import re
from urllib.parse import urlsplit

import httpx

from service.settings import Settings
from tests.support.cli import memtrace
from tests.support.servers import REPO, ServiceHandle, free_port
from tests.support.traces import demo_batch


def _stored(service: ServiceHandle, project: str) -> None:
    sent = httpx.post(f"{service.url}/traces", json=demo_batch(project), timeout=60)
    assert sent.status_code == 200, sent.text


def test_the_cli_follows_memtrace_port(service: ServiceHandle, project: str) -> None:
    _stored(service, project)
    port = str(urlsplit(service.url).port)
    found = memtrace("cases", "--project", project, MEMTRACE_PORT=port, MEMTRACE_URL="")
    assert found.returncode == 0, found.stderr
    assert "6 case(s)" in found.stdout


def test_memtrace_url_wins_over_the_port(service: ServiceHandle, project: str) -> None:
    _stored(service, project)
    nobody = str(free_port())
    found = memtrace("cases", "--project", project, MEMTRACE_PORT=nobody, MEMTRACE_URL=service.url)
    assert found.returncode == 0, found.stderr
    assert "6 case(s)" in found.stdout
    lost = memtrace("cases", "--project", project, MEMTRACE_PORT=nobody, MEMTRACE_URL="")
    assert lost.returncode == 1
    assert f"cannot reach the service at http://127.0.0.1:{nobody}" in lost.stderr


def _settings_the_cli_reads() -> set[str]:
    """Settings fields named in the CLI's code and in what it calls to read them (the service
    address, the local Neo4j launcher)."""
    sources = [p.read_text() for p in (REPO / "cli").glob("*.py")]
    sources.append((REPO / "service" / "neo4j_local" / "launcher.py").read_text())
    sources.append(inspect.getsource(Settings.service_url))
    text = "\n".join(sources)
    return {
        name
        for name in Settings.model_fields
        if re.search(rf"\b(settings|self|get_settings\(\))\.{name}\b", text)
    }


def test_docs_list_every_setting_the_cli_reads() -> None:
    page = (REPO / "docs" / "settings.md").read_text()
    section = page.split("## What the CLI reads", 1)[1].split("\n## ", 1)[0]
    read = _settings_the_cli_reads()
    assert {"url", "host", "port", "api_key", "local_neo4j_port"} <= read  # the scan finds them
    missing = sorted(
        f"MEMTRACE_{n.upper()}" for n in read if f"MEMTRACE_{n.upper()}`" not in section
    )
    assert not missing, missing
