"""Each benchmark topic has one runner, and every benchmark command the docs print runs.

A command in the docs that names no runner or no variant fails only when someone copies it, long
after the rename that broke it; this reads every ``python -m benchmarks...`` in the docs, the
README, the Makefile and the code's docstrings and checks it against the runners' variants. No
benchmark is run: the variants' modules are imported and their ``main`` looked up.
"""

from __future__ import annotations

import importlib
import re
import subprocess

import pytest

from benchmarks.runner import run
from tests.support.servers import REPO

BENCHMARKS = REPO / "benchmarks"
TOPICS = sorted(p.parent.name for p in BENCHMARKS.glob("*/__main__.py"))
COMMAND = re.compile(r"python -m\s+benchmarks\.([a-z_]\w*(?:\.\w+)*)(?:[ \t]+([\w-]+))?")
"""A benchmark command: its module and the word after it (a variant, an option, a placeholder)."""


def _variants(topic: str) -> dict[str, str] | None:
    """A topic's variant -> module; ``None`` for a topic of one variant (no subcommand)."""
    main = importlib.import_module(f"benchmarks.{topic}.__main__")
    return getattr(main, "VARIANTS", None)


def _texts() -> list[tuple[str, str]]:
    files = subprocess.run(
        ["git", "ls-files", "*.md", "*.py", "Makefile"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [(f, (REPO / f).read_text(encoding="utf-8")) for f in files if (REPO / f).exists()]


def _stale(command: re.Match[str]) -> str | None:
    """Why a ``python -m benchmarks...`` command would not run, or ``None``."""
    topic, word = command.groups()
    if topic not in TOPICS:
        return f"no runner benchmarks.{topic}"
    variants = _variants(topic)
    if variants is None:  # one variant: options follow the topic
        return None if word is None or word.startswith("-") else f"{topic} takes no variant"
    if word is None or word[0].isupper():  # the bare runner (it lists them) or VARIANT
        return None
    return None if word in variants else f"benchmarks.{topic} has no variant {word!r}"


def test_every_topic_has_a_runner_and_every_variant_a_main() -> None:
    assert {"ingest", "attribution", "audits", "client", "closed_loop"} <= set(TOPICS)
    for topic in TOPICS:
        for module in (_variants(topic) or {"": _single_module(topic)}).values():
            assert callable(importlib.import_module(f"benchmarks.{topic}.{module}").main), module


def _single_module(topic: str) -> str:
    """The module a one-variant topic's ``__main__`` hands to ``run_only``."""
    text = (BENCHMARKS / topic / "__main__.py").read_text(encoding="utf-8")
    found = re.search(rf'run_only\("{topic}", "(\w+)"\)', text)
    assert found, f"benchmarks/{topic}/__main__.py runs no module"
    return found.group(1)


def test_every_benchmark_command_in_the_docs_and_code_runs() -> None:
    found = []
    seen = 0
    for path, text in _texts():
        for command in COMMAND.finditer(text):
            seen += 1
            why = _stale(command)
            if why:
                line = text.count("\n", 0, command.start()) + 1
                found.append(f"{path}:{line} {command.group(0)!r}: {why}")
    assert found == []
    assert seen > 20  # the check reads the docs' commands
    # and it sees commands that do not run: an old module, options where the variant goes
    for old in ("benchmarks.attribution_job --quick", "benchmarks.audits --quick"):
        match = COMMAND.search(f"python -m {old}")
        assert match is not None and _stale(match) is not None, old


def test_the_runner_lists_the_variants_and_refuses_an_unknown_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    variants = _variants("audits")
    assert variants is not None
    with pytest.raises(SystemExit) as listed:
        run("audits", variants, ["--help"])
    assert listed.value.code == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in variants)
    with pytest.raises(SystemExit) as refused:
        run("audits", variants, ["no-such-variant"])
    assert refused.value.code == 2
    assert "unknown variant: no-such-variant" in capsys.readouterr().err
