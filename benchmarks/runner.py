"""The one runner of each topic: ``python -m benchmarks.<topic> <variant> [options]``.

A topic's ``__main__`` names its variants, each a module beside it with ``main(argv)``. The chosen
module alone is imported, so ``--help`` answers at once and one variant's needs (psutil, the
LoCoMo data, a second checkout) never load for another; the list of variants is read from the
modules' docstrings without importing them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from pathlib import Path


def summary(module: str, width: int = 80) -> str:
    """The start of a module's docstring (to its first colon or full stop), read from its source."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    doc = ast.get_docstring(ast.parse(Path(spec.origin).read_text(encoding="utf-8"))) or ""
    text = re.split(r"[:.] ", " ".join(doc.split("\n\n")[0].split()).replace("``", ""))[0]
    text = re.sub(r":\w+:`([^`]+)`", r"\1", text).rstrip(".")
    return text if len(text) <= width else text[: width - 3].rsplit(" ", 1)[0] + " ..."


def run(topic: str, variants: dict[str, str], argv: list[str] | None = None) -> None:
    """Run ``argv[0]``'s variant with the rest of ``argv`` (``sys.argv[1:]`` by default)."""
    argv = sys.argv[1:] if argv is None else argv
    command = f"python -m benchmarks.{topic}"
    if not argv or argv[0] not in variants:
        print(f"usage: {command} VARIANT [options]   ({command} VARIANT --help for its options)\n")
        width = max(map(len, variants))
        for name, module in variants.items():
            print(f"  {name:<{width}}  {summary(f'benchmarks.{topic}.{module}')}")
        known = not argv or argv[0] in {"-h", "--help"}
        if not known:
            print(f"\nunknown variant: {argv[0]}", file=sys.stderr)
        sys.exit(0 if argv and known else 2)
    sys.argv[0] = f"{command} {argv[0]}"  # argparse's prog: the command a user typed
    importlib.import_module(f"benchmarks.{topic}.{variants[argv[0]]}").main(argv[1:])


def run_only(topic: str, module: str) -> None:
    """A topic of one variant: its options follow the topic, no variant name."""
    sys.argv[0] = f"python -m benchmarks.{topic}"
    importlib.import_module(f"benchmarks.{topic}.{module}").main(sys.argv[1:])
