"""Attribution depends on the case's own lineage only: invariance, causality and determinism,
and the failure classes of issue 10 as small hand-built traces (heuristic judge, real Neo4j)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.support.attribution import stable_results

DAY = "2023-05-08"


def _msg(uid: str, text: str, ts: str, **attributes: Any) -> dict[str, Any]:
    return {"id": uid, "kind": "message", "content": text, "ts": ts, "attributes": attributes}


def _op(
    oid: str, kind: str, ts: str, inputs: list[Any], outputs: list[Any], **attributes: Any
) -> dict[str, Any]:
    return {
        "id": oid,
        "name": f"demo.{kind}",
        "kind": kind,
        "system": "demo",
        "ts": ts,
        "inputs": inputs,
        "outputs": outputs,
        "attributes": attributes,
    }


def _unit(uid: str, kind: str, text: str, **attributes: Any) -> dict[str, Any]:
    return {"id": uid, "kind": kind, "content": text, "attributes": attributes}


def conversation(prefix: str, conv: str) -> dict[str, Any]:
    """One user's conversation: the sister's city never reached memory (ExtractionError), the
    job did but was not retrieved (RetrievalError). No case names its evidence."""
    p, t = prefix, f"{DAY}T10:00:0"
    units = [
        _msg(
            f"{p}m1", "Alice: My sister Emma lives in Denver, I visit her every summer.", f"{t}0Z"
        ),
        _msg(f"{p}m2", "Alice: I work as a nurse at the children's hospital.", f"{t}1Z"),
        _msg(f"{p}m3", "Alice: The weather was lovely today.", f"{t}2Z"),
    ]
    ops = [
        _op(
            f"{p}x1",
            "extraction",
            f"{t}3Z",
            [f"{p}m1", f"{p}m2", f"{p}m3"],
            [
                _unit(f"{p}f1", "memory", "Alice has a sister", memory_id=f"{p}sister"),
                _unit(f"{p}f2", "memory", "Works as a nurse at a hospital", memory_id=f"{p}job"),
            ],
            conversation_id=conv,
        ),
    ]
    cases = []
    for n, (question, expected, context, wrong) in enumerate(
        [
            ("Where does Alice's sister live?", "Denver", [f"{p}f1"], "I don't know"),
            ("What does Alice do for work?", "She is a nurse", [], "She is a teacher"),
        ],
        start=1,
    ):
        ops.append(
            _op(
                f"{p}r{n}",
                "retrieval",
                f"{DAY}T12:00:0{2 * n}Z",
                [_unit(f"{p}q{n}", "query", question), *context],
                [_unit(f"{p}c{n}", "context", "Alice has a sister" if context else "")],
                conversation_id=conv,
            )
        )
        ops.append(
            _op(
                f"{p}a{n}",
                "response",
                f"{DAY}T12:00:0{2 * n + 1}Z",
                [f"{p}q{n}", f"{p}c{n}"],
                [_unit(f"{p}ans{n}", "answer", wrong)],
                conversation_id=conv,
            )
        )
        cases.append(
            {
                "id": f"{p}case{n}",
                "question": question,
                "expected_answer": expected,
                "answer_unit": f"{p}ans{n}",
                "verdict": "failed",
            }
        )
    return {"units": units, "operations": ops, "cases": cases}


def _send(client: httpx.Client, project: str, *parts: dict[str, Any]) -> None:
    for part in parts:
        response = client.post("/traces", json={"project": project, **part})
        assert response.status_code == 200, response.text


def _later_repeat(prefix: str, conv: str) -> dict[str, Any]:
    """A later session of the same conversation repeating the evidence sentence word for word,
    and an extraction after the answer that loses it again."""
    p = prefix
    return {
        "units": [
            _msg(
                f"{p}late",
                "Alice: My sister Emma lives in Denver, I visit her every summer.",
                "2023-06-01T10:00:00Z",
            )
        ],
        "operations": [
            _op(
                f"{p}xlate",
                "extraction",
                "2023-06-01T10:00:01Z",
                [f"{p}late"],
                [_unit(f"{p}flate", "memory", "Alice likes summer")],
                conversation_id=conv,
            )
        ],
        "cases": [],
    }


CASES = ["a-case1", "a-case2"]


def test_results_do_not_depend_on_other_conversations_or_later_sessions(
    client: httpx.Client, project: str
) -> None:
    _send(client, project, conversation("a-", "alice"))
    alone = stable_results(client, project, CASES)
    assert [(r["error_type"], r["operation"]["id"]) for r in alone] == [
        ("ExtractionError", "a-x1"),
        ("RetrievalError", "a-r2"),
    ]
    crowded = f"{project}-crowded"
    _send(client, crowded, conversation("a-", "alice"))
    # 20 unrelated conversations saying the same things, and a later session of Alice's own
    for i in range(20):
        _send(client, crowded, conversation(f"o{i}-", f"other-{i}"))
    _send(client, crowded, _later_repeat("a-", "alice"))
    assert stable_results(client, crowded, CASES) == alone


def test_a_unit_recorded_after_the_answer_is_never_evidence(
    client: httpx.Client, project: str
) -> None:
    batch = conversation("a-", "alice")
    # The only message saying where the sister lives arrives after the answer.
    batch["units"][0] = _msg("a-m1", "Alice: hello there", f"{DAY}T10:00:00Z")
    _send(client, project, batch, _later_repeat("a-", "alice"))
    result = stable_results(client, project, ["a-case1"])[0]
    assert "a-late" not in result["evidence_path"]
    assert result["operation"] is None or result["operation"]["id"] != "a-xlate"
    given = {
        "units": [],
        "operations": [],
        "cases": [
            {
                "id": "a-case9",
                "question": "Where does Alice's sister live?",
                "expected_answer": "Denver",
                "answer_unit": "a-ans1",
                "verdict": "failed",
                "evidence_units": ["a-late"],  # named by the case, still after the answer
            }
        ],
    }
    _send(client, project, given)
    result = stable_results(client, project, ["a-case9"])[0]
    assert "a-late" not in result["evidence_path"]
    assert result["operation"] is None or result["operation"]["id"] != "a-xlate"


def test_an_operation_after_the_answer_is_never_blamed(client: httpx.Client, project: str) -> None:
    batch = conversation("a-", "alice")
    # The job memory is deleted after the question was answered: retrieval is still to blame.
    batch["operations"].append(
        _op(
            "a-del",
            "deletion",
            "2023-07-01T00:00:00Z",
            ["a-f2"],
            [_unit("a-f2-gone", "tombstone", "", memory_id="a-job")],
            conversation_id="alice",
        )
    )
    _send(client, project, batch)
    result = stable_results(client, project, ["a-case2"])[0]
    assert (result["error_type"], result["operation"]["id"]) == ("RetrievalError", "a-r2")


def test_same_trace_in_two_projects_gives_identicalstable_results(
    client: httpx.Client, project: str
) -> None:
    _send(client, project, conversation("a-", "alice"))
    first = stable_results(client, project, CASES)
    for i in range(3):  # other projects written in between
        _send(client, f"{project}-other-{i}", conversation(f"z{i}-", f"z-{i}"))
    second = f"{project}-again"
    _send(client, second, conversation("a-", "alice"))
    assert stable_results(client, second, CASES) == first


# The failure classes of issue 10, each as a small trace.


def _chain(
    messages: list[dict[str, Any]],
    memories: list[dict[str, Any]],
    context: str,
    question: str,
    expected: str,
    wrong: str,
    evidence: list[str],
) -> dict[str, Any]:
    """Messages -> one extraction -> memories -> one retrieval of all memories -> answer."""
    return {
        "units": messages,
        "operations": [
            _op("x", "extraction", f"{DAY}T11:00:00Z", [m["id"] for m in messages], memories),
            _op(
                "r",
                "retrieval",
                f"{DAY}T12:00:00Z",
                [_unit("q", "query", question), *[m["id"] for m in memories]],
                [_unit("c", "context", context)],
            ),
            _op("a", "response", f"{DAY}T12:00:01Z", ["q", "c"], [_unit("ans", "answer", wrong)]),
        ],
        "cases": [
            {
                "id": "case",
                "question": question,
                "expected_answer": expected,
                "answer_unit": "ans",
                "verdict": "failed",
                "evidence_units": evidence,
            }
        ],
    }


def _blamed(client: httpx.Client, project: str, batch: dict[str, Any]) -> tuple[Any, Any]:
    _send(client, project, batch)
    result = stable_results(client, project, ["case"])[0]
    return result["error_type"], (result["operation"] or {}).get("id")


def test_a_context_on_the_topic_without_the_answer_does_not_carry_it(
    client: httpx.Client,
) -> None:
    """Extraction kept "Alice has a sister" and dropped the city; the context names Alice and
    her sister. The extraction is to blame, not the answer."""
    batch = _chain(
        [_msg("m1", "Alice: My sister Emma lives in Denver.", f"{DAY}T10:00:00Z")],
        [_unit("f1", "memory", "Alice has a sister named Emma")],
        "Alice has a sister named Emma",
        "Where does Alice's sister live?",
        "Denver",
        "Boston",
        ["m1"],
    )
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) == ("ExtractionError", "x")


def test_a_when_question_needs_the_date_in_the_context(client: httpx.Client) -> None:
    """The context shares the question's topic; the month asked for appears nowhere in it."""
    batch = _chain(
        [_msg("m1", "Alice: We went to Paris in March, it was lovely.", f"{DAY}T10:00:00Z")],
        [_unit("f1", "memory", "Alice went to Paris in March")],
        "Alice likes Paris",
        "When did Alice go to Paris?",
        "March 2023",
        "In June",
        ["m1"],
    )
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) != ("ResponseError", "a")


def test_an_extraction_whose_output_states_the_answer_is_not_blamed(
    client: httpx.Client,
) -> None:
    batch = _chain(
        [_msg("m1", "Alice: My sister Emma lives in Denver.", f"{DAY}T10:00:00Z")],
        [_unit("f1", "memory", "Emma, Alice's sister, lives in Denver")],
        "Alice likes hiking",
        "Where does Alice's sister live?",
        "Denver",
        "Boston",
        [],
    )
    # the retrieval read the memory stating the answer and left it out of the context
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) == ("RetrievalError", "r")


def test_an_update_is_not_blamed_while_another_memory_carries_the_fact(
    client: httpx.Client,
) -> None:
    project = f"t-{uuid.uuid4().hex[:8]}"
    batch = _chain(
        [_msg("m1", "Alice: I work as a nurse.", f"{DAY}T10:00:00Z")],
        [
            _unit("f1", "memory", "Works as a nurse", memory_id="job"),
            _unit("g1", "memory", "Alice is a nurse at the hospital", memory_id="bio"),
        ],
        "Alice is a nurse at the hospital",
        "What does Alice do for work?",
        "nurse",
        "teacher",
        ["m1"],
    )
    # an update rewrites one carrier; the other still reaches the context
    batch["operations"].insert(
        1,
        _op(
            "u",
            "update",
            f"{DAY}T11:30:00Z",
            ["f1"],
            [_unit("f2", "memory", "Moved to Portland", memory_id="job")],
        ),
    )
    assert _blamed(client, project, batch) == ("ResponseError", "a")


def test_a_relative_date_resolves_against_the_message_time(client: httpx.Client) -> None:
    """ "Yesterday", said on 8 May 2023, is 7 May 2023: the message is the evidence, found by
    search, and the extraction that dropped it is blamed."""
    batch = _chain(
        [
            _msg("m1", "Alice: I adopted a puppy yesterday!", f"{DAY}T10:00:00Z"),
            _msg("m2", "Alice: I love long walks.", f"{DAY}T10:00:01Z"),
        ],
        [_unit("f1", "memory", "Alice loves long walks")],
        "Alice loves long walks",
        "When did Alice adopt a puppy?",
        "7 May 2023",
        "In June",
        [],
    )
    result_type, op = _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch)
    assert (result_type, op) == ("ExtractionError", "x")


def test_the_update_that_pushes_the_evidence_out_of_a_buffer_is_blamed(
    client: httpx.Client,
) -> None:
    """A long-context buffer keeps only its last lines: the update that drops the evidence turn
    is to blame, not the one that first wrote it into the buffer."""
    lines = [
        "Alice: My sister Emma lives in Denver.",
        "Alice: I started a pottery class.",
        "Alice: My cat is called Miso.",
    ]
    messages = [_msg(f"m{i}", line, f"{DAY}T10:0{i}:00Z") for i, line in enumerate(lines)]
    buffers = [lines[:1], lines[:2], lines[1:3]]  # the third update pushed the sister out
    ops = []
    for i, kept in enumerate(buffers):
        inputs = ([f"b{i - 1}"] if i else []) + [f"m{i}"]
        ops.append(
            _op(
                f"u{i}",
                "update",
                f"{DAY}T10:0{i}:30Z",
                inputs,
                [_unit(f"b{i}", "memory", "\n".join(kept), memory_id="buffer")],
            )
        )
    question = "Where does Alice's sister live?"
    ops += [
        _op(
            "r",
            "retrieval",
            f"{DAY}T12:00:00Z",
            [_unit("q", "query", question), "b2"],
            [_unit("c", "context", lines[1])],
        ),
        _op("a", "response", f"{DAY}T12:00:01Z", ["q", "c"], [_unit("ans", "answer", "Boston")]),
    ]
    batch = {
        "units": messages,
        "operations": ops,
        "cases": [
            {
                "id": "case",
                "question": question,
                "expected_answer": "Denver",
                "answer_unit": "ans",
                "verdict": "failed",
                "evidence_units": ["m0"],
            }
        ],
    }
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) == ("UpdateError", "u2")


WINDOW = 12
"""Lines the window buffer of :func:`_window_buffer` keeps."""


def _window_buffer(turns: list[str], question: str, evidence: int) -> dict[str, Any]:
    """A buffer that appends each turn and drops its oldest line past ``WINDOW`` lines, each
    version made by one update; the answer read a context without the fact."""
    messages = [_msg(f"m{i}", line, f"{DAY}T10:{i:02d}:00Z") for i, line in enumerate(turns)]
    ops = []
    for i in range(len(turns)):
        kept = turns[max(0, i + 1 - WINDOW) : i + 1]
        ops.append(
            _op(
                f"u{i}",
                "update",
                f"{DAY}T10:{i:02d}:30Z",
                ([f"b{i - 1}"] if i else []) + [f"m{i}"],
                [_unit(f"b{i}", "memory", "\n".join(kept), memory_id="buffer")],
            )
        )
    last = f"b{len(turns) - 1}"
    ops += [
        _op(
            "r",
            "retrieval",
            f"{DAY}T12:00:00Z",
            [_unit("q", "query", question), last],
            [_unit("c", "context", turns[-1])],
        ),
        _op("a", "response", f"{DAY}T12:00:01Z", ["q", "c"], [_unit("ans", "answer", "Boston")]),
    ]
    case = {
        "id": "case",
        "question": question,
        "expected_answer": "Denver",
        "answer_unit": "ans",
        "verdict": "failed",
        "evidence_units": [f"m{evidence}"],
    }
    return {"units": messages, "operations": ops, "cases": [case]}


def test_the_update_that_pushes_a_copied_turn_out_of_a_window_is_blamed(
    client: httpx.Client,
) -> None:
    """The evidence turn names the city but not the sister (the question came turns before):
    the buffer versions holding it verbatim carry it however little of them is about the
    question. After the update that drops it, "Denver" is still in the buffer, in a line about
    an airport far from any sister: that does not carry the answer, so the update that dropped
    the turn is to blame, not the retrieval."""
    topics = ["the weather", "a new recipe", "the garden", "a film", "the office", "a book"]
    turns = [
        f"{'Alice' if i % 2 else 'Bob'}: I keep thinking about {topics[i % len(topics)]}, "
        f"it came up again on day {i}."
        for i in range(2 * WINDOW)
    ]
    turns[2] = "Alice: Emma picked Denver in the end, she loves the mountains there."
    turns[WINDOW + 3] = "Bob: The Denver airport was so crowded, Alice."
    batch = _window_buffer(turns, "Where does Alice's sister live?", evidence=2)
    # version b{WINDOW + 2} is the first without turn 2
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) == ("UpdateError", f"u{WINDOW + 2}")


def test_a_lost_copy_is_not_decisive_while_another_turns_memory_carries_the_fact(
    client: httpx.Client,
) -> None:
    """The evidence turn's extraction dropped the fact, but a later turn said it again and its
    memory was in the store at question time: the retrieval that left it out is to blame."""
    batch = _chain(
        [_msg("m1", "Alice: Researching adoption agencies this week.", f"{DAY}T10:00:00Z")],
        [_unit("f1", "memory", "Alice had a busy week")],
        "Alice had a busy week",
        "What did Alice research?",
        "Adoption agencies",
        "Cooking classes",
        ["m1"],
    )
    batch["units"].append(
        _msg("m2", "Alice: I am researching adoption agencies for my family.", f"{DAY}T10:30:00Z")
    )
    batch["operations"].insert(
        1,
        _op(
            "y",
            "extraction",
            f"{DAY}T11:10:00Z",
            ["m2"],
            [_unit("g1", "memory", "Alice is researching adoption agencies")],
        ),
    )
    for op in batch["operations"]:  # one session: the second turn is in the case's scope
        op["session_id"] = "s1"
    assert _blamed(client, f"t-{uuid.uuid4().hex[:8]}", batch) == ("RetrievalError", "r")


def test_confidence_at_or_above_the_reliable_line_was_measured_right_nine_times_in_ten() -> None:
    from service.attribution.confidence import RELIABLE, TABLE, calibrated

    for (kind, given), levels in TABLE.items():
        for floor, measured in levels:
            got = calibrated(kind, floor, given=given)
            assert got <= measured
            assert got < RELIABLE or measured >= 0.9, (kind, given, floor)
    assert calibrated("DeletionError", 1.0, given=True) < RELIABLE  # never measured


def test_an_llm_result_resting_on_llm_verdicts_takes_their_confidence_not_the_table() -> None:
    from service.attribution.confidence import BELOW_RELIABLE, TABLE, calibrated

    measured = 0.9  # a model whose judge check measured it right 9 times in 10
    # the table measured the heuristic; an LLM's verdict (0.9) is not a heuristic's 0.9
    assert calibrated("ResponseError", measured, given=True, llm=True, llm_verdict=0.9) == 0.9
    table = next(c for f, c in TABLE[("ResponseError", True)] if measured >= f)
    assert table != measured
    assert calibrated("ResponseError", measured, given=True) in (table, BELOW_RELIABLE)
    # a heuristic verdict the llm judge settled (below the LLM's) still goes by the table
    assert calibrated("ResponseError", 0.82, given=True, llm=True, llm_verdict=0.9) == (
        calibrated("ResponseError", 0.82, given=True)
    )


def test_an_unmeasured_llm_is_not_trusted_at_an_assumed_accuracy() -> None:
    from service.attribution.confidence import RELIABLE, UNMEASURED_LLM_VERDICT, calibrated

    # no judge check applies: whatever the walk's verdicts, the result is below the line
    for kind in ("ResponseError", "UpdateError", "RetrievalError", "ExtractionError"):
        for sure in (0.5, 0.82, 0.99, 1.0):
            got = calibrated(kind, sure, given=True, llm=True)
            assert got <= UNMEASURED_LLM_VERDICT < RELIABLE, (kind, sure, got)


def test_a_measured_llm_accuracy_replaces_the_assumed_one() -> None:
    from service.attribution.confidence import WALK_CEILING, calibrated

    # a judge check measured the model at 0.55: results resting on its verdicts say so
    assert calibrated("UpdateError", 0.55, given=True, llm=True, llm_verdict=0.55) == 0.55
    assert calibrated("ResponseError", 0.55, given=True, llm=True, llm_verdict=0.55) == 0.55
    # a perfect score still leaves the walk's own misses
    assert calibrated("UpdateError", 1.0, given=True, llm=True, llm_verdict=1.0) == WALK_CEILING


def test_an_inconclusive_result_never_comes_with_a_high_confidence(client: httpx.Client) -> None:
    # Nothing in scope states the answer: the best match stands in and the result is a guess.
    batch = _chain(
        [_msg("m1", "Alice: I love mountain trails.", f"{DAY}T10:00:00Z")],
        [_unit("f1", "memory", "Alice likes pizza")],
        "Alice likes pizza",
        "What is Alice's favourite hiking trail?",
        "Eagle Ridge",
        "Pine Loop",
        [],
    )
    project = f"t-{uuid.uuid4().hex[:8]}"
    _send(client, project, batch)
    result = stable_results(client, project, ["case"])[0]
    assert result["status"] == "inconclusive"
    assert result["confidence"] <= 0.3
    # It names its best candidate and what would decide it: the stand-in, the evidence to name.
    assert result["operation"] is not None
    assert result["evidence"][0] in result["decided_by"]
    assert "evidence_units" in result["decided_by"]
