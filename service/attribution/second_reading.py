"""A second reading of a heuristic result before it says ``attributed``.

The heuristic judge decides "carries" by a line on a lexical score (``HeuristicJudge.threshold``,
0.5). A result whose deciding verdicts sit near that line names one operation at 0.5 and another
at a slightly stricter line; such a result is a coin toss, however sure its least sure verdict
looks. So a result the walk would call ``attributed`` is walked again with the line at
:data:`STRICTER_LINE`; where the second walk blames another operation, the result is
``inconclusive``, still naming the first walk's operation, and says which operation the
stricter reading blames.

Measured on the tuning half (LoCoMo conversations 0-4, heuristic, no hints), the ``attributed``
results the two readings disagree on named the labelled operation 21-47% of the time (rewrite
0.26, observations 0.47, RAG 0.24, long-context 0.21); leaving them out raised the precision of
``attributed`` by 0.02-0.05 (rewrite 0.683 -> 0.721, RAG 0.768 -> 0.821) at a coverage of
0.76-0.81. At 0.7 the second reading disagreed on a third of the cases and coverage fell to
0.57; a looser reading (0.4) separated less (its disagreements were right 0.42-0.67 of the
time). The confidence table alone could not do it: the same share of results kept by
confidence were right 0.68-0.79 of the time.

The second walk reads nothing new from the store: it shares the case graph and the ranked scope
(``engine._Ranking``), and ``source.RememberedSource`` answers its reads from the first walk's. An
``llm`` judge's results are not read twice: the LLM's verdicts have no line to move, and asking
it again would cost calls.
"""

from __future__ import annotations

from service.attribution.confidence import inconclusive_confidence
from service.attribution.judges.base import HeuristicStandIn, Judge
from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.models import AttributionResult

STRICTER_LINE = 0.6
"""The heuristic's carry line in the second reading (the first reading's is 0.5)."""


def stricter_judge(judge: Judge) -> Judge | None:
    """The heuristic at :data:`STRICTER_LINE` when ``judge`` is the heuristic (or stands in for
    an llm judge whose model failed its check); None for a judge that asks an LLM."""
    if isinstance(judge, HeuristicStandIn):
        return stricter_judge(judge.inner)
    if isinstance(judge, HeuristicJudge):
        return judge.at_line(max(judge.threshold, STRICTER_LINE))
    return None


def second_reading(result: AttributionResult, check: AttributionResult) -> AttributionResult:
    """``result`` as it stands when the stricter reading ``check`` blames the same operation;
    else ``inconclusive`` (its confidence capped as every inconclusive one's is), naming what
    the stricter reading blames in ``decided_by``."""
    first = result.operation.id if result.operation else None
    other = check.operation
    if other is not None and other.id == first:
        return result
    blamed = (
        f"{other.id} ({check.error_type})"
        if other is not None
        else f"no operation ({check.status}: {check.reason})"
    )
    return result.model_copy(
        update={
            "status": "inconclusive",
            "confidence": inconclusive_confidence(result.confidence),
            "decided_by": f"its verdicts sit near the heuristic's line: read more strictly, "
            f"they blame {blamed}. The llm judge's verdicts, or the case's evidence_units, "
            "would decide it",
        }
    )
