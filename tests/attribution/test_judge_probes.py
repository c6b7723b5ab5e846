"""The judge check's probe set: deterministic, labelled by how it was written, and giving a model
no way to score by ids, kinds or positions."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import timedelta

from service.attribution.judge_probes import (
    DATE_FACTS,
    FACTS,
    FILLER_LINES,
    FILLER_NAMES,
    NAMES,
    day_words,
    probe_set,
)
from service.attribution.judges.dates import resolved_words
from service.attribution.judges.llm_prompt import build_messages


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def test_the_set_is_the_same_on_every_call() -> None:
    assert probe_set() == probe_set()
    units = [u for p in probe_set() for u in p.units]
    assert 40 <= len(units) <= 60
    assert len({u.unit.id for u in units}) == len(units)


def test_every_kind_of_probe_is_there_with_its_label() -> None:
    labels = defaultdict(set)
    for probe in probe_set():
        for u in probe.units:
            labels[u.role].add(u.carries)
    assert labels == {
        "plain": {True},
        "paraphrase": {True},
        "topic": {False},
        "wrong": {False},
        "long-with": {True},
        "long-without": {False},
        "date-absolute": {True},
        "date-relative": {True},
        "date-relative-elsewhere": {False},
        "date-wrong": {False},
    }


def test_ids_kinds_and_places_do_not_give_the_label_away() -> None:
    by_kind = defaultdict(set)
    places = defaultdict(set)
    for probe in probe_set():
        for place, u in enumerate(probe.units):
            by_kind[u.unit.kind].add(u.carries)
            places[place].add(u.carries)
            assert re.fullmatch(r"p\d\d-u\d", u.unit.id)
    assert all(labels == {True, False} for labels in by_kind.values())
    assert all(labels == {True, False} for labels in places.values())


def test_units_state_what_their_label_says() -> None:
    for probe in probe_set():
        answer = probe.question.expected_answer
        subject = next(n for n in NAMES if n in probe.question.question)
        for u in probe.units:
            text = u.unit.content
            if u.role in ("plain", "date-absolute", "long-with"):
                assert answer in text and subject in text
            if u.role in ("wrong", "date-wrong"):
                assert probe.question.wrong_answer in text and answer not in text
            if u.role == "topic":
                assert subject in text and answer.lower() not in text.lower()
            if u.role.startswith("long"):
                assert 1500 <= len(text) <= 4000
            if u.role == "long-without":  # the answer's word is there, about someone else
                fact = next(f for f in FACTS if f.answer == answer)
                assert fact.decoy in text and answer.lower().rstrip("s") in fact.decoy.lower()
                assert fact.topic.format(name=subject) in text
                assert fact.plain.format(name=subject) not in text


def test_relative_dates_state_the_answer_only_from_the_day_they_were_said() -> None:
    checked = 0
    for probe in probe_set():
        relative = {u.role: u.unit for u in probe.units if u.role.startswith("date-relative")}
        if not relative:
            continue
        right, elsewhere = relative["date-relative"], relative["date-relative-elsewhere"]
        assert right.content == elsewhere.content and right.ts != elsewhere.ts
        answer = words(probe.question.expected_answer)
        assert answer <= set(resolved_words(right.content, right.ts))
        assert not answer <= set(resolved_words(elsewhere.content, elsewhere.ts))
        assert words(probe.question.wrong_answer) <= set(
            resolved_words(elsewhere.content, elsewhere.ts)
        )
        checked += 1
    assert checked == len(DATE_FACTS)


def test_the_judge_is_told_when_each_dated_unit_was_said() -> None:
    probe = next(p for p in probe_set() if p.question.case_id == "probe-06")
    right = next(u.unit for u in probe.units if u.role == "date-relative")
    prompt = str(build_messages(probe.question, [right], 1500)[-1]["content"])
    assert right.ts is not None
    said = right.ts.date()
    assert f'said="Monday {day_words(said)}"' in prompt  # 8 May 2023 was a Monday
    assert day_words(said - timedelta(days=1)) == probe.question.expected_answer


def test_filler_shares_no_word_with_any_answer() -> None:
    answers = {w for fact in FACTS for w in words(f"{fact.answer} {fact.wrong}")} | {
        w for d in DATE_FACTS for w in words(day_words(d.event))
    }
    filler = words(" ".join(FILLER_LINES) + " " + " ".join(FILLER_NAMES))
    assert answers & filler == set()
    assert set(FILLER_NAMES).isdisjoint(NAMES)


def test_carriers_and_the_rest_are_both_well_represented() -> None:
    counts = Counter(u.carries for p in probe_set() for u in p.units)
    assert 0.35 <= counts[True] / (counts[True] + counts[False]) <= 0.65
