"""Where an interrupted ``memtrace ingest`` of a JSONL file stopped, so a rerun goes on from there.

The state is a small JSON file next to the input (``FILE.memtrace-progress``; under
``~/.cache/memtrace/ingest/`` when that folder is not writable). It holds the byte offset just
after the last batch the service acknowledged, and is rewritten (atomically: a temporary file
renamed over it) after every acknowledged batch; it is removed when the whole file is sent.

Resuming skips exactly what was acknowledged. A batch that was sent but whose answer was lost is
sent again: an identical re-send stores nothing twice, so the boundary is safe. The state only
applies to the same file (same size and modification time), the same service URL and the same
``--project``; otherwise the ingest starts from the beginning, which is always correct, only
slower.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SUFFIX = ".memtrace-progress"
CACHE = Path.home() / ".cache" / "memtrace" / "ingest"


@dataclass
class IngestState:
    """How far the ingest of one file has come, and what it stored so far."""

    source: dict[str, Any]
    offset: int = 0
    line: int = 0
    batches: int = 0
    operations: int = 0
    created: dict[str, int] = field(default_factory=dict)
    existing: dict[str, int] = field(default_factory=dict)

    def acknowledged(self, line: int, end_offset: int, operations: int, result: Any) -> None:
        """Count a batch the service stored (``result``: its ``IngestResult``)."""
        self.offset, self.line = end_offset, line
        self.batches += 1
        self.operations += operations
        for totals, counts in ((self.created, result.created), (self.existing, result.existing)):
            for kind, n in counts.model_dump().items():
                totals[kind] = totals.get(kind, 0) + n


def state_path(file: Path) -> Path:
    """``FILE.memtrace-progress`` beside the input, or a file in the cache named by its path."""
    beside = file.with_name(file.name + SUFFIX)
    if os.access(file.resolve().parent, os.W_OK):
        return beside
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:24]
    return CACHE / f"{digest}{SUFFIX}"


def _source(file: Path, url: str, project: str | None) -> dict[str, Any]:
    stat = file.stat()
    return {
        "file": str(file.resolve()),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "url": url,
        "project": project,
    }


def load(file: Path, url: str, project: str | None) -> tuple[IngestState, str | None]:
    """The state to go on from, and a note for the user when a stored one is not used."""
    source = _source(file, url, project)
    path = state_path(file)
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return IngestState(source), None
    except (OSError, ValueError):
        return IngestState(source), f"ignoring an unreadable progress file {path}"
    if not isinstance(stored, dict) or stored.get("source") != source:
        return IngestState(source), (
            f"{path} is about another file version, service or project: starting from the beginning"
        )
    try:
        return IngestState(**stored), None
    except TypeError:
        return IngestState(source), f"ignoring an unreadable progress file {path}"


def save(file: Path, state: IngestState) -> None:
    path = state_path(file)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps(asdict(state)), encoding="utf-8")
    os.replace(scratch, path)


def clear(file: Path) -> None:
    state_path(file).unlink(missing_ok=True)
