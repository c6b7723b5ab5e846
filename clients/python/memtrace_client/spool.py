"""The on-disk spool: batches waiting for the service, kept in order across restarts.

Layout: ``<root>/slot-<n>/<seq>.json``, one batch per file, ``seq`` increasing. Each process
claims one slot with an exclusive ``flock`` on ``slot-<n>/.lock`` (released by the OS if the
process dies), so two processes never replay the same file. A new process claims the lowest free
slot and first adopts the files of slots no live process holds: a crashed process's batches are
replayed by whichever process starts next. Files are written to a temporary name, flushed to disk
and renamed, so a crash leaves either the whole batch or nothing. A batch the service refuses
(4xx) is moved to ``<root>/rejected/`` rather than deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import IO, Any

MAX_SLOTS = 256


class Spool:
    """One process's slot of the spool directory ``root``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock: IO[bytes] | None = None
        self.dir = self._claim_slot()
        self._seq = max((self._seq_of(p) for p in self._files()), default=0)
        self._adopt_orphans()

    # -- slots -----------------------------------------------------------------------------------

    def _try_lock(self, slot: Path) -> IO[bytes] | None:
        slot.mkdir(exist_ok=True)
        handle = (slot / ".lock").open("ab")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return None
        return handle

    def _claim_slot(self) -> Path:
        for n in range(MAX_SLOTS):
            slot = self.root / f"slot-{n}"
            handle = self._try_lock(slot)
            if handle is not None:
                self._lock = handle
                return slot
        raise RuntimeError(f"all {MAX_SLOTS} spool slots under {self.root} are in use")

    def _adopt_orphans(self) -> None:
        """Move the batches of unheld slots into ours, after our own, in their order."""
        for slot in sorted(self.root.glob("slot-*")):
            if slot == self.dir or not any(slot.glob("*.json")):
                continue
            handle = self._try_lock(slot)
            if handle is None:
                continue  # a live process owns it and replays it itself
            try:
                for path in sorted(slot.glob("*.json"), key=self._seq_of):
                    self._seq += 1
                    os.replace(path, self.dir / f"{self._seq:012d}.json")
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()

    # -- batches ---------------------------------------------------------------------------------

    @staticmethod
    def _seq_of(path: Path) -> int:
        try:
            return int(path.stem)
        except ValueError:
            return 0

    def _files(self) -> list[Path]:
        return sorted(self.dir.glob("*.json"), key=self._seq_of)

    def __len__(self) -> int:
        return len(self._files())

    def append(self, batch: dict[str, Any]) -> Path:
        """Write one batch durably after every batch already spooled."""
        self._seq += 1
        path = self.dir / f"{self._seq:012d}.json"
        tmp = self.dir / f".{self._seq:012d}.tmp"
        with tmp.open("wb") as f:
            f.write(json.dumps(batch, separators=(",", ":")).encode())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return path

    def oldest(self) -> tuple[Any, dict[str, Any]] | None:
        """The first batch waiting, or None when the spool is empty."""
        for path in self._files():
            try:
                return path, json.loads(path.read_bytes())
            except (OSError, ValueError):
                self.reject(path, "unreadable spool file")
        return None

    def remove(self, path: Any) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def reject(self, path: Any, reason: str) -> Path:
        """Keep a refused batch beside the spool with the reason, out of the replay order."""
        target = self._rejected_path(Path(path).name)
        os.replace(path, target)
        target.with_suffix(".reason.txt").write_text(reason + "\n")
        return target

    def keep_rejected(self, batch: dict[str, Any], reason: str) -> Path:
        """Keep a refused batch that was never spooled (refused on its first send)."""
        self._seq += 1
        target = self._rejected_path(f"{self._seq:012d}.json")
        target.write_text(json.dumps(batch, separators=(",", ":")))
        target.with_suffix(".reason.txt").write_text(reason + "\n")
        return target

    def _rejected_path(self, name: str) -> Path:
        rejected = self.root / "rejected"
        rejected.mkdir(exist_ok=True)
        return rejected / f"{self.dir.name}-{name}"

    def close(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None
