"""Steps every synthetic pipeline shares: messages in, question answered and judged, case labelled.

The answering step is where a generator bug would silently produce a wrong label, so it checks the
invariant that makes each label true: the context holds the critical fact exactly when the scenario
says retrieval worked (a passed case or a ResponseError).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence

from ..bm25 import BM25
from ..builder import BatchBuilder
from ..conversation import Conversation, Question
from ..labels import ErrorType, Label

IDK = "I don't know."
CONSTRUCTION_ERRORS: frozenset[ErrorType] = frozenset(
    {"ExtractionError", "UpdateError", "DeletionError"}
)


def session_id(index: int) -> str:
    return f"session-{index + 1:03d}"


def emit_messages(b: BatchBuilder, conv: Conversation, session: int) -> list[str]:
    """Create the session's message units (``Speaker: text``), 20 seconds apart."""
    b.jump_to(conv.session_start(session))
    ids = []
    for turn in conv.sessions[session]:
        ids.append(b.unit("message", turn.line, speaker=turn.speaker, session=session_id(session)))
        b.advance(20)
    return ids


def select(ranking: Sequence[int], k: int, include: int | None, exclude: int | None) -> list[int]:
    """Top ``k`` of ``ranking``, forcing ``include`` in (last slot) and ``exclude`` out.

    Synthetic labels must hold by construction, so whether the critical memory is retrieved is
    decided by the scenario, not left to the ranking.
    """
    chosen = [i for i in ranking if i != exclude][:k]
    if include is not None and include not in chosen:
        chosen = [*chosen[: k - 1], include]
    return chosen


def holder(question: Question, texts: Sequence[str]) -> int | None:
    """Index of the text stating the question's fact; checks the scenario expects one."""
    found = next((i for i, text in enumerate(texts) if question.fact.statement in text), None)
    if found is None and question.scenario not in CONSTRUCTION_ERRORS:
        raise RuntimeError(f"generator bug: fact lost before retrieval for {question.scenario}")
    return found


def choose(question: Question, texts: Sequence[str], index: BM25, k: int) -> list[int]:
    """Indices of the ``k`` texts retrieved for ``question``: BM25 order, scenario enforced.

    The text holding the critical fact, if any is live, is retrieved unless the scenario is a
    RetrievalError, in which case it is left out.
    """
    found = holder(question, texts)
    miss = question.scenario == "RetrievalError"
    ranking = index.rank(question.fact.question)
    return select(ranking, k, include=None if miss else found, exclude=found if miss else None)


def answer_and_judge(
    b: BatchBuilder,
    system: str,
    question: Question,
    query_id: str,
    context_id: str,
    evidence_id: str,
    rng: random.Random,
) -> tuple[str, str]:
    """Answer from the context as the scenario dictates, judge it, record the case.

    Returns ``(case_id, response_op_id)``.
    """
    fact = question.fact
    context = b.content[context_id]
    retrieved = fact.statement in context
    if retrieved != (question.scenario in (None, "ResponseError")):
        raise RuntimeError(f"generator bug: context/scenario mismatch for {fact.question!r}")
    if question.scenario is None:
        text = fact.answer
    elif question.scenario == "ResponseError" or fact.corrupted in context:
        text = fact.wrong[0]
    else:
        text = rng.choice([IDK, fact.wrong[1]])
    answer = b.unit("answer", text)
    response_op = b.op("question-answering", "response", system, [query_id, context_id], [answer])
    passed = question.scenario is None
    verdict = b.unit("other", json.dumps({"judge_score": int(passed)}))
    b.op("llm-judge", "evaluation", system, [query_id, answer], [verdict])
    case_id = b.case(
        fact.question,
        fact.answer,
        answer,
        passed=passed,
        evidence_units=[evidence_id] if question.with_evidence else [],
    )
    return case_id, response_op


def label_for(
    question: Question,
    system: str,
    *,
    construction_op: str | None,
    retrieval_op: str,
    response_op: str,
) -> Label | None:
    """The ground truth: which operation the scenario made the earliest decisive fault."""
    scenario = question.scenario
    if scenario is None:
        return None
    if scenario in CONSTRUCTION_ERRORS:
        if construction_op is None:
            raise RuntimeError(f"generator bug: no faulty operation recorded for {scenario}")
        op = construction_op
    else:
        op = retrieval_op if scenario == "RetrievalError" else response_op
    return Label(error_type=scenario, operation_id=op, system=system)


Retriever = Callable[[Question, str], tuple[str, str]]
"""``(question, query_id) -> (context_id, id of the retrieval operation blamed on a miss)``."""


def ask_all(
    b: BatchBuilder,
    conv: Conversation,
    system: str,
    retrieve: Retriever,
    *,
    messages: list[list[str]],
    construction: dict[int, str],
    rng: random.Random,
) -> dict[str, Label]:
    """Ask every planned question after the last session; return the labels of failed cases.

    ``construction`` maps a question's index to the operation its construction fault was
    injected at; ``messages`` are the message unit ids per session, for evidence.
    """
    b.jump_to(conv.question_time())
    labels: dict[str, Label] = {}
    for index, question in enumerate(conv.questions):
        query = b.unit("query", question.fact.question)
        context, retrieval_op = retrieve(question, query)
        evidence = messages[question.session][question.turn]
        case_id, response_op = answer_and_judge(b, system, question, query, context, evidence, rng)
        label = label_for(
            question,
            system,
            construction_op=construction.get(index),
            retrieval_op=retrieval_op,
            response_op=response_op,
        )
        if label is not None:
            labels[case_id] = label
    return labels
