"""Reading trace batches from files: one JSON batch, a JSON list of batches, or JSONL.

JSONL is read one line at a time from a byte offset (``jsonl_from``), so a file of any size is
streamed and an interrupted ingest can go on where it stopped. A JSON file is parsed whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class BatchFileError(ValueError):
    """A batch file that is not JSON or JSONL of batch objects; the message names the line."""


@dataclass(frozen=True)
class LineBatch:
    """One batch of a JSONL file, with where its line ends (where reading goes on after it)."""

    batch: dict[str, Any]
    line: int
    end_offset: int


def is_jsonl(path: Path) -> bool:
    return path.suffix == ".jsonl" or _is_jsonl(path)


def read_batches(path: Path) -> Iterator[dict[str, Any]]:
    """Yield each batch object in ``path``; JSONL is read lazily, one line at a time."""
    if is_jsonl(path):
        yield from (item.batch for item in jsonl_from(path))
        return
    try:
        data = json.loads(path.read_bytes())
    except json.JSONDecodeError as e:
        raise BatchFileError(f"{path}: not valid JSON at line {e.lineno}: {e.msg}") from e
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise BatchFileError(f"{path}: item {index} is not a batch object")
        yield item


def _is_jsonl(path: Path) -> bool:
    """A file of several JSON objects, one per line (a pretty-printed object is not)."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


def jsonl_from(path: Path, offset: int = 0, line: int = 0) -> Iterator[LineBatch]:
    """The batches of the JSONL file ``path`` from byte ``offset`` on (the start of line
    ``line + 1``). Only one line is held in memory at a time."""
    with path.open("rb") as handle:
        handle.seek(offset)
        for number, text in enumerate(handle, start=line + 1):
            offset += len(text)
            if not text.strip():
                continue
            try:
                item = json.loads(text)
            except json.JSONDecodeError as e:
                raise BatchFileError(f"{path}:{number}: not valid JSON: {e.msg}") from e
            if not isinstance(item, dict):
                raise BatchFileError(f"{path}:{number}: not a batch object")
            yield LineBatch(item, number, offset)


def count_operations(batch: dict[str, Any]) -> int:
    ops = batch.get("operations")
    return len(ops) if isinstance(ops, list) else 0
