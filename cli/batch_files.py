"""Reading trace batches from files: one JSON batch, a JSON list of batches, or JSONL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class BatchFileError(ValueError):
    """A batch file that is not JSON or JSONL of batch objects; the message names the line."""


def read_batches(path: Path) -> Iterator[dict[str, Any]]:
    """Yield each batch object in ``path``; JSONL is read lazily, one line at a time."""
    if path.suffix == ".jsonl" or _is_jsonl(path):
        yield from _read_jsonl(path)
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


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as e:
                raise BatchFileError(f"{path}:{number}: not valid JSON: {e.msg}") from e
            if not isinstance(item, dict):
                raise BatchFileError(f"{path}:{number}: not a batch object")
            yield item


def count_operations(batch: dict[str, Any]) -> int:
    ops = batch.get("operations")
    return len(ops) if isinstance(ops, list) else 0
