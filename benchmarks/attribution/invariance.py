"""Are two sets of attribution results the same, field by field?

Used to show that a speed change did not change what attribution answers, and that a case gives
the same result alone and in a big project. Only the fields that measure time (``cost.seconds``,
``created_at``) may differ; everything else, confidence and reason included, must be equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TIMING_FIELDS = ("created_at",)
TIMING_COST_FIELDS = ("seconds",)


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """The result without its timing fields."""
    out = {k: v for k, v in result.items() if k not in TIMING_FIELDS}
    cost = dict(out.get("cost") or {})
    for key in TIMING_COST_FIELDS:
        cost.pop(key, None)
    out["cost"] = cost
    return out


def differences(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], limit: int = 10
) -> dict[str, Any]:
    """How many keys both have and agree on, which differ (the first ``limit``, with the fields
    that differ) and which only one side has."""
    same, differ = 0, []
    for key in sorted(before.keys() & after.keys()):
        a, b = comparable(before[key]), comparable(after[key])
        if a == b:
            same += 1
        else:
            fields = sorted(f for f in a.keys() | b.keys() if a.get(f) != b.get(f))
            differ.append({"key": key, "fields": fields})
    return {
        "same": same,
        "differ": len(differ),
        "examples": differ[:limit],
        "only_before": len(before.keys() - after.keys()),
        "only_after": len(after.keys() - before.keys()),
    }


def failures(name: str, found: dict[str, Any]) -> list[str]:
    """What is wrong in a :func:`differences` answer: results that differ, or cases only one
    side has; empty when the two sides are the same, field by field."""
    wrong = [f"{name}: {found[k]} {k}" for k in ("differ", "only_before", "only_after") if found[k]]
    if found["examples"]:
        wrong.append(f"{name}: for example {found['examples'][:3]}")
    return wrong


def fail_loudly(problems: list[str]) -> None:
    """Exit with status 1, naming every difference, when there is any: a benchmark that
    measured a change also checked that it changed no result."""
    if problems:
        print("RESULTS DIFFER:\n  " + "\n  ".join(problems), file=sys.stderr, flush=True)
        raise SystemExit(1)


def save_results(path: Path, results: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def load_results(path: Path) -> dict[str, dict[str, Any]]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]
