"""The catalogue of every Cypher statement MemTrace runs.

Each statement lives in its own ``.cypher`` file in this package; the file opens with ``//``
comments stating its ``$params``. Python code never holds Cypher text: it asks for a statement by
its path, e.g. ``query("audits/dangling_units")``. Values reach Cypher only as parameters.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import LiteralString

_PACKAGE = resources.files(__package__)


@cache
def query(name: str) -> LiteralString:
    """The text of ``cypher/<name>.cypher``; raises ``FileNotFoundError`` for an unknown name."""
    resource = _PACKAGE.joinpath(*f"{name}.cypher".split("/"))
    if not resource.is_file():
        raise FileNotFoundError(f"no Cypher statement named {name!r}")
    # The files are ours and ship with the package: they are literal strings in all but syntax
    # (mypy treats LiteralString as str, so no cast is needed for it).
    text: LiteralString = resource.read_text(encoding="utf-8")  # type: ignore[assignment,unused-ignore]
    return text


def names(folder: str = "") -> list[str]:
    """Every statement name under ``folder`` (all of them by default), sorted."""
    found: list[str] = []

    def walk(node: resources.abc.Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".cypher"):
                found.append(prefix + child.name.removesuffix(".cypher"))

    start = _PACKAGE.joinpath(*folder.split("/")) if folder else _PACKAGE
    walk(start, f"{folder}/" if folder else "")
    return sorted(found)
