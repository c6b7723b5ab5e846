"""How the confidence table's levels are made from what the tuning half measured.

A lower level of ``sure`` must never claim more than a higher one; where the measurements say
otherwise the two levels are pooled, so that a large level is reported by its own share, not by
a small level's above it.
"""

from __future__ import annotations

from benchmarks.attribution.calibrate import _levels


def _seen(level: float, right: int, wrong: int) -> list[tuple[float, bool]]:
    return [(level, True)] * right + [(level, False)] * wrong


def test_a_lower_level_measured_righter_is_pooled_with_the_one_above() -> None:
    seen = _seen(0.82, 27, 3) + _seen(0.55, 6, 17) + _seen(0.50, 73, 24)
    levels = _levels(seen, min_cases=15)
    assert [(f, n) for f, _, n in levels] == [(0.82, 30), (0.50, 120)]
    assert levels[0][1] == 27 / 30
    assert levels[1][1] == (6 + 73) / 120  # not capped at the 0.26 of the 23 at 0.55


def test_levels_already_falling_stay_as_measured_and_small_ones_join_the_next_lower() -> None:
    seen = _seen(0.99, 19, 1) + _seen(0.90, 3, 2) + _seen(0.60, 14, 6) + _seen(0.50, 10, 10)
    levels = _levels(seen, min_cases=15)
    assert [(f, n) for f, _, n in levels] == [(0.99, 20), (0.60, 25), (0.50, 20)]
    shares = [a for _, a, _ in levels]
    assert shares == sorted(shares, reverse=True)
    assert shares[1] == (3 + 14) / 25
