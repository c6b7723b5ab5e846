"""An oracle LLM for the attribution benchmark: answers judge and flat-log prompts from the truth.

It is the ``answer`` function of the scripted OpenAI-compatible server
(``tests.support.llm_server``).

- A **judge** prompt (``service.attribution.judges.llm``) names a question and lists units; the
  oracle says, per unit, whether it carries the critical information of *that* case.
- A **flat-log** prompt (:mod:`.flatlog`) asks for the error type and operation of a case; the
  oracle answers with the true label, so the baseline's accuracy is an upper bound.

The case is identified by the batch the prompt's unit or operation ids belong to (ids of different
batches never collide: the generators tag them per batch) plus the question and expected answer.

What "carries" means, per dataset:

- synthetic: the unit's full content contains the statement of the case's critical fact (the
  generator's own invariant: a corrupted copy never contains it);
- LoCoMo: the unit is the evidence message, a memory whose hidden citations include the evidence
  turn (an observation citing it; a chunk or buffer version holding it), or a context/other unit
  whose content contains the text of such an observation (the evidence turn itself, for the RAG
  and long-context pipelines).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchmarks.attribution.flatlog import SYSTEM_PROMPT as FLATLOG_SYSTEM_PROMPT
from benchmarks.attribution.flatlog import batch_units, header_of, op_ids_in_log
from benchmarks.datasets import Label, LabelledBatch
from benchmarks.datasets.locomo import holds
from service.attribution.judges.base import Question, UnitText, Verdict
from service.attribution.judges.llm import UNIT_LINE_RE
from service.llm.models import Cost

_QUESTION_RE = re.compile(r'^Question: ("(?:[^"\\]|\\.)*")$', re.MULTILINE)
_EXPECTED_RE = re.compile(r'^Expected answer: ("(?:[^"\\]|\\.)*")$', re.MULTILINE)
_CLIPPED_RE = re.compile(r" \[\.\.\. \d+ more characters\]$")
_DECODER = json.JSONDecoder()
OBSERVATION_PIPELINES = ("observations", "mem0_rewrite")
"""LoCoMo pipelines whose memories hold observations (a memory carries by citing the evidence),
not the turns verbatim (chunks, buffers)."""


@dataclass(frozen=True)
class CaseTruth:
    """What the oracle knows about one failed case."""

    case_id: str
    project: str
    label: Label
    carriers: frozenset[str]
    needles: tuple[str, ...]  # texts whose presence shows a reader the information


def _synthetic_truths(item: LabelledBatch) -> list[CaseTruth]:
    units = batch_units(item.batch)
    out = []
    for case in item.batch["cases"]:
        label = item.labels.get(case["id"])
        if label is None:
            continue
        statement = item.hidden["facts"][case["id"]]
        carriers = frozenset(
            uid for uid, u in units.items() if statement in (u.get("content") or "")
        )
        out.append(CaseTruth(case["id"], item.batch["project"], label, carriers, (statement,)))
    return out


def _locomo_truths(item: LabelledBatch) -> list[CaseTruth]:
    units = batch_units(item.batch)
    message_of = {
        u["attributes"]["dia_id"]: uid
        for uid, u in units.items()
        if u.get("kind") == "message" and (u.get("attributes") or {}).get("dia_id")
    }
    citations: dict[str, list[str]] = item.hidden["citations"]
    containers = [
        (uid, u.get("content") or "")
        for uid, u in units.items()
        if u.get("kind") in ("context", "other")
    ]
    out = []
    for case in item.batch["cases"]:
        label = item.labels.get(case["id"])
        if label is None:
            continue
        evidence = item.hidden["evidence"][case["id"]]
        citing = [m for m, cites in citations.items() if evidence in cites]
        texts = [t for m in citing if (t := units[m].get("content") or "")]
        if item.hidden.get("pipeline", "observations") not in OBSERVATION_PIPELINES:
            # chunks and buffers hold the turn verbatim: a context carries it when it holds the turn
            texts = [units[message_of[evidence]].get("content") or ""]
        phrase = item.hidden.get("phrases", {}).get(case["id"], "")
        carriers = {message_of[evidence], *citing}
        carriers.update(uid for uid, content in containers if any(t in content for t in texts))
        # Redundancy: any memory or context stating the answer itself carries it too (the
        # dataset's labels count it the same way: benchmarks.datasets.locomo.holds).
        carriers.update(
            uid
            for uid, u in units.items()
            if u.get("kind") in ("memory", "context") and holds(u.get("content") or "", phrase)
        )
        needles = (units[message_of[evidence]].get("content") or "", *texts)
        out.append(
            CaseTruth(case["id"], item.batch["project"], label, frozenset(carriers), needles)
        )
    return out


def _carried_truths(item: LabelledBatch) -> list[CaseTruth]:
    """A batch converted from another (``benchmarks.datasets.rewrite_otel``) carries its truth
    over its own ids: the carriers and needles of each case."""
    return [
        CaseTruth(
            case_id,
            item.batch["project"],
            label,
            frozenset(item.hidden["carriers"][case_id]),
            tuple(item.hidden["needles"][case_id]),
        )
        for case_id, label in item.labels.items()
    ]


def case_truths(item: LabelledBatch) -> list[CaseTruth]:
    """The ground truth of every failed case of a labelled batch (synthetic, LoCoMo, or
    converted with its truth)."""
    if "carriers" in item.hidden:
        return _carried_truths(item)
    if "facts" in item.hidden:
        return _synthetic_truths(item)
    if "citations" in item.hidden:
        return _locomo_truths(item)
    raise ValueError("unknown dataset: hidden holds none of 'carriers', 'facts', 'citations'")


def _question_key(item: LabelledBatch, case_id: str) -> tuple[str, str]:
    case = next(c for c in item.batch["cases"] if c["id"] == case_id)
    return case["question"], case["expected_answer"]


@dataclass
class Oracle:
    """Ground truth of many batches, and the ``answer`` function serving it."""

    owner: dict[str, int] = field(default_factory=dict)  # unit/operation id -> batch number
    truths: dict[tuple[int, str, str], list[CaseTruth]] = field(default_factory=dict)
    by_case: dict[tuple[str, str], CaseTruth] = field(default_factory=dict)  # (project, case)
    stats: Counter[str] = field(default_factory=Counter)
    clipped: set[tuple[str, str]] = field(default_factory=set)  # cases with a hidden carrier
    batches: int = 0

    @classmethod
    def of(cls, batches: list[LabelledBatch]) -> Oracle:
        oracle = cls()
        for item in batches:
            oracle.add(item)
        return oracle

    def add(self, item: LabelledBatch) -> None:
        number = self.batches
        self.batches += 1
        ids = [*batch_units(item.batch), *(op["id"] for op in item.batch["operations"])]
        clash = [i for i in ids if i in self.owner]
        if clash:
            raise ValueError(f"ids shared between batches, cannot tell them apart: {clash[:3]}")
        self.owner.update(dict.fromkeys(ids, number))
        for truth in case_truths(item):
            question, expected = _question_key(item, truth.case_id)
            self.truths.setdefault((number, question, expected), []).append(truth)
            self.by_case[(truth.project, truth.case_id)] = truth

    def clipped_by_system(self) -> dict[str, int]:
        """How many cases, per system, had a carrier whose shown content hid the fact."""
        return dict(Counter(self.by_case[key].label["system"] for key in sorted(self.clipped)))

    def find(self, ids: list[str], question: str, expected: str) -> list[CaseTruth]:
        """The cases a prompt is about: by the batch of its first known id and the question."""
        number = next((self.owner[i] for i in ids if i in self.owner), None)
        if number is None:
            return []
        return self.truths.get((number, question, expected), [])

    def answer(self, request: dict[str, Any]) -> str:
        """The scripted server's ``answer``: dispatch on the system prompt."""
        messages = request.get("messages", [])
        system = str(messages[0].get("content") or "") if messages else ""
        user = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
        if system == FLATLOG_SYSTEM_PROMPT:
            return self._answer_flatlog(user)
        return self._answer_judge(user)

    def _answer_judge(self, prompt: str) -> str:
        self.stats["judge_requests"] += 1
        question, expected = (_field(r, prompt) for r in (_QUESTION_RE, _EXPECTED_RE))
        shown = units_in_prompt(prompt)
        cases = self.find(list(shown), question, expected)
        if not cases:
            self.stats["judge_unmatched"] += 1
        elif len(cases) > 1:
            self.stats["judge_ambiguous"] += 1
        carriers = frozenset().union(*(c.carriers for c in cases))
        needles = [n for c in cases for n in c.needles if n]
        verdicts = []
        for uid, content in shown.items():
            carries = uid in carriers
            self.stats["units_judged"] += 1
            if carries:
                self.stats["units_carrying"] += 1
                if hidden_by_clipping(content, needles):
                    self.stats["carriers_hidden_by_clipping"] += 1
                    self.clipped.update((c.project, c.case_id) for c in cases)
            verdicts.append({"id": uid, "carries": carries})
        return json.dumps({"verdicts": verdicts})

    def _answer_flatlog(self, prompt: str) -> str:
        self.stats["flatlog_requests"] += 1
        question, expected = header_of(prompt)
        cases = self.find(op_ids_in_log(prompt, limit=1), question, expected)
        if len(cases) != 1:
            self.stats["flatlog_unmatched" if not cases else "flatlog_ambiguous"] += 1
        if not cases:
            return json.dumps({"error_type": None, "op_id": None})
        label = cases[0].label
        return json.dumps({"error_type": label["error_type"], "op_id": label["operation_id"]})


def hidden_by_clipping(shown: str, needles: list[str]) -> bool:
    """Whether a carrier's content as the prompt shows it was cut and no longer holds any text
    that shows a reader the information (the evidence turn, a citing observation)."""
    return bool(_CLIPPED_RE.search(shown)) and not any(n in shown for n in needles if n)


def _field(pattern: re.Pattern[str], prompt: str) -> str:
    match = pattern.search(prompt)
    return str(json.loads(match.group(1))) if match else ""


def units_in_prompt(prompt: str) -> dict[str, str]:
    """Unit id -> the content the judge prompt shows for it (possibly clipped), in order."""
    found: dict[str, str] = {}
    for match in UNIT_LINE_RE.finditer(prompt):
        uid = json.loads(match.group(1))
        rest = prompt[match.end() :]
        try:
            _kind, end = _DECODER.raw_decode(rest)
            tail = rest[end:]
            content = _DECODER.raw_decode(tail[len(" content=") :])[0]
        except (json.JSONDecodeError, ValueError):
            content = ""
        found.setdefault(uid, str(content))
    return found


@dataclass
class OracleJudge:
    """The oracle as an in-process judge (no HTTP): a unit carries the information exactly when
    the ground truth says so. One call per batch of units, tokens estimated at chars/4, so the
    in-process figures count what the scripted server would have been asked."""

    truth: CaseTruth | None
    kind: str = "llm"
    model: str | None = "oracle"
    cost: Cost = field(default_factory=Cost)

    async def judge(self, question: Question, units: list[UnitText]) -> dict[str, Verdict]:
        self.cost.llm_calls += 1
        self.cost.input_tokens += sum(len(u.content) for u in units) // 4 + 100
        carriers = self.truth.carriers if self.truth else frozenset()
        return {u.id: Verdict(u.id in carriers, 1.0, "llm") for u in units}
