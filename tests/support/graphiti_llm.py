"""Graphiti's LLM, scripted: what the scripted OpenAI-compatible server says to each of
Graphiti's structured prompts.

Graphiti's ``OpenAIGenericClient`` asks ``/chat/completions`` for JSON with a
``response_format`` of type ``json_schema`` named after the pydantic model it expects, so the
prompt is recognised by that name and answered from the script, reading what the prompt holds
(the episode between ``<CURRENT MESSAGE>`` tags, the candidate facts with their ``idx``):

- ``ExtractedEntities`` (``extract_nodes.extract_message``): the episode's scripted entities;
- ``NodeResolutions`` (``dedupe_nodes.nodes``): an entity is the existing entity of the same name;
- ``ExtractedEdges`` (``extract_edges.edge``): the episode's scripted facts, valid from the
  episode's reference time (so Graphiti asks no ``EdgeTimestamps`` for them), and ended then too
  when the script says so;
- ``EdgeDuplicate`` (``dedupe_edges.resolve_edge``): a candidate with the same text is a duplicate,
  and the new fact contradicts the candidates the script says it does;
- ``EdgeTimestamps``: valid from the reference time; ``SummarizedEntities``: no new summaries.

Any other prompt is answered ``{}`` and named in ``unknown``, so a test can see that Graphiti
asked something the script does not know (its own validation then fails the call).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.support.llm_server import user_text


@dataclass(frozen=True)
class Fact:
    """One edge the extraction reports: ``source`` -[``relation``]-> ``target``; ``ended``: it
    stopped being true at the episode's reference time (Graphiti then stores it expired)."""

    source: str
    relation: str
    target: str
    text: str
    ended: bool = False


@dataclass(frozen=True)
class Episode:
    """What the scripted extraction finds in one episode body, and the stored facts each of
    its facts contradicts (by text), rightly or not."""

    body: str
    entities: list[str]
    facts: list[Fact]
    contradicts: dict[str, list[str]] = field(default_factory=dict)


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, flags=re.DOTALL)
    return match.group(1) if match else ""


def _facts(block: str) -> list[dict[str, Any]]:
    """A fact list as the dedupe prompt prints it (a Python list of ``{'idx', 'fact'}``)."""
    value = ast.literal_eval(block) if block.strip() else []
    return [dict(v) for v in value]


@dataclass
class GraphitiScript:
    """The scripted answers, by episode body; ``unknown``: schema names it had no answer for."""

    episodes: list[Episode]
    unknown: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def episode(self, text: str) -> Episode:
        body = text.strip()
        for episode in self.episodes:
            if episode.body.strip() == body:
                return episode
        raise AssertionError(f"no scripted episode for {body!r}")

    def __call__(self, request: dict[str, Any]) -> str:
        schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("name", "")
        self.asked.append(schema)
        text = user_text(request)
        answer = getattr(self, f"_{schema}", None)
        if answer is None:
            self.unknown.append(schema or "<no schema>")
            return "{}"
        return json.dumps(answer(text))

    def _ExtractedEntities(self, text: str) -> dict[str, Any]:
        episode = self.episode(_between(text, "CURRENT MESSAGE"))
        return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in episode.entities]}

    def _NodeResolutions(self, text: str) -> dict[str, Any]:
        extracted = json.loads(_between(text, "ENTITIES") or "[]")
        existing = json.loads(_between(text, "EXISTING ENTITIES") or "[]")
        by_name = {e["name"].casefold(): e["candidate_id"] for e in existing}
        return {
            "entity_resolutions": [
                {
                    "id": e["id"],
                    "name": e["name"],
                    "duplicate_candidate_id": by_name.get(e["name"].casefold(), -1),
                }
                for e in extracted
            ]
        }

    def _ExtractedEdges(self, text: str) -> dict[str, Any]:
        episode = self.episode(_between(text, "CURRENT_MESSAGE"))
        reference = _between(text, "REFERENCE_TIME").split("#", 1)[0].strip()
        valid_at = datetime.fromisoformat(reference).isoformat()
        return {
            "edges": [
                {
                    "source_entity_name": f.source,
                    "target_entity_name": f.target,
                    "relation_type": f.relation,
                    "fact": f.text,
                    "valid_at": valid_at,
                    "invalid_at": valid_at if f.ended else None,
                }
                for f in episode.facts
            ]
        }

    def _EdgeDuplicate(self, text: str) -> dict[str, Any]:
        new = _between(text, "NEW FACT")
        existing = _facts(_between(text, "EXISTING FACTS"))
        candidates = _facts(_between(text, "FACT INVALIDATION CANDIDATES"))
        retires = next(
            (e.contradicts.get(new, []) for e in self.episodes if new in e.contradicts), []
        )
        return {
            "duplicate_facts": [f["idx"] for f in existing if f["fact"] == new],
            "contradicted_facts": [f["idx"] for f in existing + candidates if f["fact"] in retires],
        }

    def _EdgeTimestamps(self, text: str) -> dict[str, Any]:
        reference = _between(text, "REFERENCE TIME")
        return {"valid_at": reference or None, "invalid_at": None}

    def _SummarizedEntities(self, text: str) -> dict[str, Any]:
        return {"summaries": []}
