"""Read one LoCoMo conversation file (``../shared/data/locomo10/NN.json``) into plain records.

The data is referenced, never copied into the project. Dia ids in the file are not always clean
(``"D8:6; D9:17"``, ``"D:11:26"``, ``"D30:05"``), so every citation and evidence string is parsed
into a list of canonical ``D<session>:<turn>`` ids.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = "../shared/data/locomo10"

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime
    turns: list[Turn]


@dataclass(frozen=True)
class Observation:
    """A fact LoCoMo's extraction recorded for a speaker, and the turns it cites (hidden)."""

    session: int
    speaker: str
    text: str
    cites: tuple[str, ...]


@dataclass(frozen=True)
class QA:
    index: int
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class LocomoConversation:
    name: str
    speakers: tuple[str, str]
    sessions: list[Session]
    observations: list[Observation]
    qa: list[QA]


def resolve_dir(path: str | Path | None) -> Path:
    """The data directory; a relative path is taken relative to the repository root, not cwd."""
    directory = Path(path if path is not None else DEFAULT_DIR)
    return (directory if directory.is_absolute() else REPO_ROOT / directory).resolve()


def conversation_files(path: str | Path | None = None) -> list[Path]:
    """The conversation files of the data directory, in numeric order."""
    files = [p for p in resolve_dir(path).glob("*.json") if p.stem.isdigit()]
    if not files:
        raise FileNotFoundError(f"no LoCoMo conversation files in {resolve_dir(path)}")
    return sorted(files, key=lambda p: int(p.stem))


def dia_ids(raw: Any) -> list[str]:
    """Canonical dia ids in a citation or evidence value (a string or a list of strings)."""
    values = raw if isinstance(raw, list) else [raw]
    return [f"D{int(s)}:{int(t)}" for value in values for s, t in _DIA_ID.findall(str(value))]


def _when(raw: str | None, fallback: datetime) -> datetime:
    try:
        return datetime.strptime(str(raw).strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return fallback


def read_conversation(path: Path) -> LocomoConversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    numbers = sorted(int(m.group(1)) for k in data if (m := _SESSION.fullmatch(k)))
    sessions: list[Session] = []
    previous = datetime(2023, 1, 1, tzinfo=UTC)
    for n in numbers:
        when = _when(data.get(f"session_{n}_date_time"), previous + timedelta(days=1))
        turns = [
            Turn(dia_ids(t["dia_id"])[0], t["speaker"], t["text"], t.get("blip_caption"))
            for t in data[f"session_{n}"]
        ]
        sessions.append(Session(n, when, turns))
        previous = when
    observations = [
        Observation(n, speaker, fact, tuple(dia_ids(cites)))
        for n in numbers
        for speaker, facts in data.get(f"session_{n}_observation", {}).items()
        for fact, cites in facts
    ]
    qa = [
        QA(i, q["question"], str(q.get("answer", "")), tuple(dia_ids(q["evidence"])), q["category"])
        for i, q in enumerate(data["qa"])
    ]
    return LocomoConversation(
        path.stem, (data["speaker_a"], data["speaker_b"]), sessions, observations, qa
    )
