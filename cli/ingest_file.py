"""``memtrace ingest`` of a JSONL file: streamed, with progress, resumable (``cli.ingest_state``).

Batches are read one line at a time and sent one at a time; after each acknowledged batch the byte
offset that follows it is saved. Memory therefore stays at one batch whatever the file's size.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memtrace_client import MemTraceClient, RejectedBatch, ServiceUnavailable
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

from cli import ingest_state
from cli.batch_files import count_operations, jsonl_from
from cli.ingest_state import IngestState

COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    DownloadColumn(),
    TransferSpeedColumn(),
    TextColumn("{task.fields[batches]} batches, {task.fields[operations]} operations"),
    TextColumn("{task.fields[rate]} ops/s"),
    TimeElapsedColumn(),
)


def send_jsonl(
    file: Path, client: MemTraceClient, project: str | None, state: IngestState, console: Console
) -> IngestState:
    """Send the batches of ``file`` after ``state.offset``; ``state`` is saved after each one."""
    started, sent_ops = time.monotonic(), 0
    with Progress(*COLUMNS, console=console) as progress:
        task = progress.add_task(
            f"ingesting {file.name}",
            total=state.source["size"],
            completed=state.offset,
            batches=state.batches,
            operations=state.operations,
            rate=0,
        )
        for item in jsonl_from(file, state.offset, state.line):
            batch = {**item.batch, "project": project} if project else item.batch
            with _naming_the_line(file, item.line):
                result = client.send_json(batch)
            operations = count_operations(batch)
            state.acknowledged(item.line, item.end_offset, operations, result)
            ingest_state.save(file, state)
            sent_ops += operations
            _show(progress, task, state, sent_ops / max(time.monotonic() - started, 1e-6))
    return state


def _show(progress: Progress, task: TaskID, state: IngestState, rate: float) -> None:
    progress.update(
        task,
        completed=state.offset,
        batches=state.batches,
        operations=state.operations,
        rate=f"{rate:,.0f}",
    )


@contextmanager
def _naming_the_line(file: Path, line: int) -> Iterator[None]:
    """Say which line was refused or not delivered, and what a rerun does."""
    try:
        yield
    except RejectedBatch as e:
        # Editing the file makes it another file version: a rerun then starts from the top,
        # which re-sends the stored batches harmlessly.
        e.args = (f"{file.name}:{line} refused: {e}; the batches before it are stored",)
        raise
    except ServiceUnavailable as e:
        hint = f"run the same command again to go on from line {line}"
        e.args = (f"{file.name}:{line} not sent: {e}; the batches before it are stored: {hint}",)
        raise
