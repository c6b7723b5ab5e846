"""The audits and the attribution engine agree on the same traces (service/attribution/rules.py):
each runs over HTTP (``GET /audits/...`` and ``POST /attribute``), and every row of
``deleted_then_needed`` and ``retrieval_misses`` is a case attributed DeletionError or
RetrievalError, every case attributed so has its row, and ``construction_loss`` lists only source
messages. Cases without ``evidence_units`` take the evidence the attribution found."""

from __future__ import annotations

import re
from typing import Any

import httpx

from cypher import names, query
from graph_schema.rules import QUESTION_TIME_KINDS, QUOTED_CHARS, QUOTED_KINDS, RULES
from tests.support.attribution import attribute
from tests.support.traces import DEMO_TRUTH, demo_batch

AUDIT_OF = {"DeletionError": "deleted_then_needed", "RetrievalError": "retrieval_misses"}


_BLOCK = re.compile(r"// rule: ([a-z ]+) \(graph_schema/rules\.py\)\n(.*?)// end rule", re.S)
_KINDS = re.compile(r"NOT coalesce\(\w+\.kind, ''\) IN \[([^]]*)\]")
_QUOTED = re.compile(r"q\.kind IN \[([^]]*)\] AND size\(q\.content\) >= (\d+)")


def test_each_rule_is_one_block_wherever_it_is_used() -> None:
    """A rule's Cypher is the same text in every statement that holds it (indentation aside),
    and names the question time kinds as graph_schema/rules.py does."""
    copies: dict[str, set[str]] = {}
    for name in names():
        for rule, body in _BLOCK.findall(query(name)):
            copies.setdefault(rule, set()).add(" ".join(body.split()))
    assert set(copies) == set(RULES)
    assert all(len(bodies) == 1 for bodies in copies.values()), copies
    for rule in ("source message", "carried forward", "live at question time"):
        (listed,) = _KINDS.findall(next(iter(copies[rule])))
        assert {k.strip(" '") for k in listed.split(",")} == QUESTION_TIME_KINDS, rule
    users = [n for n in names() if "// rule: source message" in query(n)]
    assert users == ["attribution/scope_messages", "audits/construction_loss"]
    # what a prompt quotes, as graph_schema.rules.quotes reads it
    (quoted,) = _QUOTED.findall(next(iter(copies["source message"])))
    assert tuple(k.strip(" '") for k in quoted[0].split(",")) == QUOTED_KINDS
    assert int(quoted[1]) == QUOTED_CHARS


def _rows(client: httpx.Client, name: str, project: str) -> list[dict[str, Any]]:
    response = client.get(f"/audits/{name}", params={"project": project})
    assert response.status_code == 200, response.text
    assert response.json()["next_skip"] is None
    return list(response.json()["rows"])


def _attributions(client: httpx.Client, project: str, cases: list[str]) -> dict[str, Any]:
    found = {}
    for case_id in cases:
        response = attribute(client, project, case_id)
        assert response.status_code == 200, response.text
        found[case_id] = response.json()
    return found


def _agree(client: httpx.Client, project: str, cases: list[str]) -> dict[str, Any]:
    """Attribute ``cases``, then check both audits against the attributions; returns them."""
    results = _attributions(client, project, cases)
    for error_type, name in AUDIT_OF.items():
        listed = {row["case"] for row in _rows(client, name, project)}
        attributed = {c for c, r in results.items() if r["error_type"] == error_type}
        assert listed == attributed, (name, {c: r["error_type"] for c, r in results.items()})
    return results


def test_the_audits_agree_with_attributions_on_the_demo(client: httpx.Client, project: str) -> None:
    """On the demo (case-1 names no evidence_units): case-3's dog memory was deleted, a
    deletion and not a retrieval miss (the live 'Biscuit turned two' memory is another entry's
    version, reached from the evidence only through the deleting update's other outputs, which
    the walk does not follow)."""
    batch = demo_batch(project)
    assert client.post("/traces", json=batch).status_code == 200
    failed = [c["id"] for c in batch["cases"] if c["verdict"] == "failed"]
    results = _agree(client, project, failed)
    assert {c: (r["error_type"], r["operation"]["id"]) for c, r in results.items()} == DEMO_TRUTH
    # case-1 names no evidence_units: the walk found Emma's message, as the demo's notes say
    given = {c["id"]: c.get("evidence_units", ["msg-3"]) for c in batch["cases"]}
    assert {c: r["evidence"] for c, r in results.items()} == {c: given[c] for c in failed}


def _op(oid: str, kind: str, minute: int, inputs: list[Any], outputs: list[Any]) -> Any:
    ts = f"2026-01-01T00:{minute:02d}:00Z"
    return {"id": oid, "name": f"step.{kind}", "kind": kind, "session_id": "s1", "ts": ts,
            "inputs": inputs, "outputs": outputs}  # fmt: skip


def _unit(uid: str, kind: str, content: str, **attributes: Any) -> dict[str, Any]:
    return {"id": uid, "kind": kind, "content": content, "attributes": attributes}


def _remembered(n: int, minute: int, message: str, memory: str) -> list[dict[str, Any]]:
    """A message and the memory entry an extraction made of it."""
    made = _unit(f"mem-{n}@1", "memory", memory, memory_id=f"mem-{n}")
    return [
        _op(f"op-ex-{n}", "extraction", minute, [_unit(f"msg-{n}", "message", message)], [made])
    ]


def _asked(n: int, minute: int, question: str, read: str, context: str) -> list[dict[str, Any]]:
    """A search of memory ``read`` into ``context``, and an answering call as ``trace_openai``
    records it: its user message ("Question: ... Memories: - ...") is a unit of kind message
    read by the response alone."""
    prompt = _unit(f"prompt-{n}", "message", f"Question: {question}\nMemories:\n- {context}")
    return [
        _op(f"op-search-{n}", "retrieval", minute, [_unit(f"q-{n}", "query", question), read],
            [_unit(f"ctx-{n}", "context", context)]),
        _op(f"op-answer-{n}", "response", minute + 1, [f"q-{n}", f"ctx-{n}", prompt],
            [_unit(f"ans-{n}", "answer", "I don't know")]),
    ]  # fmt: skip


def _case(cid: str, n: int, question: str, expected: str) -> dict[str, Any]:
    return {"id": cid, "question": question, "expected_answer": expected,
            "answer_unit": f"ans-{n}", "verdict": "failed"}  # fmt: skip


def _prompt_trace(project: str) -> dict[str, Any]:
    """Three failed cases without evidence_units, each answered through a prompt message."""
    cat, sister = "Alice's cat is called Tom", "Alice's sister Emma lives in Denver"
    forget = _unit("mem-2@x", "tombstone", "", memory_id="mem-2")
    colour = "What is Alice's favourite colour?"
    return {
        "project": project,
        "operations": [
            *_remembered(1, 1, "Alice: my cat is called Tom, he is a tabby", cat),
            *_remembered(2, 2, "Alice: my sister Emma lives in Denver", sister),
            *_remembered(3, 3, "Alice: colours make me happy", "Likes colours"),
            _op("op-forget", "deletion", 4, ["mem-2@1"], [forget]),
            # the search read the cat memory and returned nothing of it
            *_asked(1, 10, "What is the name of Alice's cat?", "mem-1@1", "nothing found"),
            # her memory was deleted before the question
            *_asked(2, 12, "Where does Alice's sister live?", "mem-1@1", cat),
            # nothing in the trace says the colour, and the prompt repeats the question
            *_asked(3, 14, colour, "mem-3@1", "Likes colours"),
        ],
        "cases": [
            _case("c-cat", 1, "What is the name of Alice's cat?", "Tom"),
            _case("c-sister", 2, "Where does Alice's sister live?", "Denver"),
            _case("c-colour", 3, colour, "green"),
        ],
    }


def test_an_answering_prompt_is_no_source_message(client: httpx.Client, project: str) -> None:
    """The answering prompt is read only at question time: construction_loss does not report
    it as a lost message and the attribution does not take it for evidence; the cases have no
    evidence_units, and both audits find the rows the attributions name."""
    assert client.post("/traces", json=_prompt_trace(project)).status_code == 200
    assert _rows(client, "construction_loss", project) == []
    results = _agree(client, project, ["c-cat", "c-sister"])
    assert {c: (r["error_type"], r["evidence"]) for c, r in results.items()} == {
        "c-cat": ("RetrievalError", ["msg-1"]),
        "c-sister": ("DeletionError", ["msg-2"]),
    }
    # The colour's evidence is a source message, never the prompt that repeats the question
    # word for word (and would rank first).
    (colour,) = _attributions(client, project, ["c-colour"]).values()
    assert colour["evidence"] == ["msg-3"]


def _decided(n: int, minute: int, message: str, fact: str, written: bool) -> list[dict[str, Any]]:
    """A Mem0 ``add`` with its deciding call traced: an extraction answering ``fact``, then an
    LLM call reading that answer and its prompt, which quotes the fact, and answering the
    decision in Mem0's JSON; when ``written``, a write of the memory it decided (else a NONE)."""
    quoted = fact.replace('"', '\\"')
    decision = f'{{"memory": [{{"id": "0", "text": "{quoted}", "event": "ADD"}}]}}'
    steps = [
        _op(f"op-ex-{n}", "extraction", minute, [_unit(f"msg-{n}", "message", message)],
            [_unit(f"fact-{n}", "answer", fact)]),
        _op(f"op-decide-{n}", "update", minute + 1,
            [f"fact-{n}", _unit(f"ask-{n}", "message", f'New facts: ["{quoted}"]')],
            [_unit(f"decision-{n}", "answer", decision)] if written else []),
    ]  # fmt: skip
    if written:
        made = _unit(f"mem-{n}@1", "memory", fact, memory_id=f"mem-{n}")
        steps.append(_op(f"op-write-{n}", "update", minute + 2, [f"decision-{n}"], [made]))
    return steps


def test_a_prompt_quoting_what_its_call_read_is_no_source_message(
    client: httpx.Client, project: str
) -> None:
    """Mem0's deciding call reads its prompt beside the facts the extraction answered, and the
    prompt quotes them: it was assembled, not said. construction_loss lists the turn whose fact
    was decided away, not the prompt that decided it; the attribution's evidence is the turn,
    not the prompt that restates the fact closer to the question's words."""
    sister = "Alice's sister Emma lives in Denver"
    trace = {
        "project": project,
        "operations": [
            *_decided(1, 1, "Alice: Emma moved to Denver last spring", sister, written=True),
            *_decided(2, 5, "Alice: the weather is nice", "Alice enjoys the weather", False),
            *_asked(1, 10, "Where does Alice's sister Emma live?", "mem-1@1", "nothing found"),
        ],
        "cases": [_case("c-sister", 1, "Where does Alice's sister Emma live?", "Denver")],
    }
    assert client.post("/traces", json=trace).status_code == 200
    assert [row["message"] for row in _rows(client, "construction_loss", project)] == ["msg-2"]
    results = _agree(client, project, ["c-sister"])
    assert (results["c-sister"]["error_type"], results["c-sister"]["evidence"]) == (
        "RetrievalError",
        ["msg-1"],
    )
