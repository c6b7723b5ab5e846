"""A result's confidence: how often results like it name the right operation.

The walk's verdicts each say how often a verdict like them is right (the judge's calibration).
A result rests on a few of them: the evidence (when it was searched for), that the context did
or did not carry the information, and the unit where it was lost or last held. The least sure of
those (``sure``) and the kind of result are looked up in :data:`TABLE`, measured on the tuning
half (LoCoMo conversations 0-4: observations, RAG, long-context and store-rewriting traces) with
the heuristic judge: the share of such results that named the labelled operation. So a result
at confidence 0.8 or more is right at least 9 times in 10 on the data it was measured on
(``docs/attribution.md``, "Confidence": how that holds on the held-out half).
"""

from __future__ import annotations

RELIABLE = 0.8
"""Results at this confidence or more are right at least 9 times in 10. A kind of result measured
right between 0.8 and 0.9 of the time reports just below this line (``BELOW_RELIABLE``), so that
the line keeps its promise; every other confidence is the accuracy as measured."""
BELOW_RELIABLE = 0.79

INCONCLUSIVE_CONFIDENCE = 0.3
"""The most an ``inconclusive`` result claims: something it rests on was not decided."""


def inconclusive_confidence(confidence: float | None) -> float:
    """What an ``inconclusive`` result of this confidence reports: at most
    :data:`INCONCLUSIVE_CONFIDENCE` (none given: 0)."""
    return min(confidence or 0.0, INCONCLUSIVE_CONFIDENCE)


TABLE: dict[tuple[str, bool], tuple[tuple[float, float], ...]] = {
    # measured by ``python -m benchmarks.attribution calibrate``: the tuning half's observations,
    # RAG, long-context and store-rewriting traces, each with no case naming its evidence
    # (False) and with every case naming it (True); heuristic judge, the first walk's verdicts.
    # The comment counts the cases behind each level.
    ("DeletionError", False): ((0.50, 0.72),),  # 25
    ("DeletionError", True): ((0.50, 0.79),),  # 34
    ("ExtractionError", False): ((0.50, 0.75),),  # 149
    ("ExtractionError", True): ((0.99, 0.84), (0.55, 0.76)),  # 104, 134
    ("ResponseError", False): ((0.82, 0.80), (0.60, 0.78), (0.50, 0.74)),  # 71, 121, 150
    ("ResponseError", True): ((0.75, 0.89), (0.60, 0.84), (0.50, 0.65)),  # 205, 70, 64
    ("ResponseError-unlinked", False): ((0.50, 0.37),),  # 8: too few to claim more than 0.5
    ("ResponseError-unlinked", True): ((0.50, 0.00),),  # 11 (none right)
    ("RetrievalError", False): ((0.60, 0.88), (0.50, 0.74)),  # 150, 175
    ("RetrievalError", True): ((0.99, 0.99), (0.90, 0.98), (0.82, 0.91), (0.50, 0.79)),
    # ^ 109, 51, 98, 149
    ("UpdateError", False): ((0.82, 0.91), (0.60, 0.85), (0.50, 0.85)),  # 56, 41, 75
    ("UpdateError", True): ((0.90, 0.92), (0.65, 0.88), (0.50, 0.78)),  # 153, 25, 32
}
"""(kind of result, evidence given by the case) -> ((least ``sure`` verdict, confidence), ...),
highest first. ``ResponseError-unlinked``: the carrying context does not descend from the
evidence (it matched in words only, more often than not). A kind not listed (a deletion; sure
below every level) keeps ``sure`` itself."""


UNMEASURED_LLM_VERDICT = 0.5
"""What a verdict of a model nobody measured is worth: the confidence ``judges.llm`` gives each
verdict the LLM made when no judge check of the model applies (none recorded for the project,
and the service's own check at start-up not finished, failed or turned off). A yes/no verdict
known to be no better than a coin toss is worth 0.5; no more is known of an unmeasured model
(SmolLM2-135M answered wrongly at an assumed 0.9 on every held-out case). Being below
:data:`RELIABLE`, a result resting on such verdicts never reads as reliable until the model is
checked (``memtrace judge check --record``); then the measured accuracy replaces it.

Only what results report: how much the walk leans on such a verdict when it chooses (a sure
carrier, the strongest of several) is :data:`UNMEASURED_LLM_WEIGHT`."""

UNMEASURED_LLM_WEIGHT = 0.9
"""What a verdict of an unmeasured model weighs in the walk's choices (``Verdict.confidence``:
whether a memory is a sure carrier, which carrier is strongest), not what any result reports
(:data:`UNMEASURED_LLM_VERDICT`). The walk was tuned with an LLM's verdict at this weight, and a
model's yes is not the chance word match the sure-carrier line guards against; lowering it to
0.5 would change which operation an llm result blames, not only how sure it says it is."""


WALK_CEILING = 0.97
"""With an oracle in the LLM's place, results resting on its verdicts named the labelled
operation 0.96-0.98 of the time (the walk's own share of misses): no result claims more."""


def calibrated(
    kind: str,
    sure: float,
    *,
    given: bool,
    llm: bool = False,
    llm_verdict: float = UNMEASURED_LLM_VERDICT,
) -> float:
    """The confidence of a result of ``kind`` whose least sure verdict is ``sure``.

    ``llm``: the judge was an ``llm`` one, whose verdicts are each worth ``llm_verdict``. A
    result whose every deciding verdict is at least as sure as an LLM's (the LLM's own, the
    case's evidence, the heuristic's surest) rests on the LLM, not on the heuristic this table
    measures: its confidence is the LLM verdict's (at most :data:`WALK_CEILING`). That figure is
    the model's accuracy on its judge check (a model right 9 times in 10 per verdict gives about
    0.9); for a model never checked it is :data:`UNMEASURED_LLM_VERDICT`, which caps every
    result the LLM took part in below the reliable line, since a verdict worth 0.5 is the least
    sure of any deciding set."""
    if llm and sure >= llm_verdict:
        return min(llm_verdict, WALK_CEILING)
    for floor, confidence in TABLE.get((kind, given), ()):
        if sure >= floor:
            return BELOW_RELIABLE if RELIABLE <= confidence < 0.9 else confidence
    return round(min(sure, BELOW_RELIABLE), 3)
