"""The full-text probe's own logic (``benchmarks.attribution fulltext``): the Lucene query it
builds and how it compares a ranking with today's. No Neo4j, no service."""

from __future__ import annotations

from benchmarks.attribution.fulltext import Case, by_ids, compare, words


def test_words_leave_no_lucene_syntax() -> None:
    assert words('When did "Mel" go? AND/OR: (NOT) 7-May') == "when did mel go and or not 7 may"


def test_scope_ids_filter_without_score() -> None:
    assert by_ids("Where?", ["fixed-u-1", "fixed-u-2"]) == (
        'content:(where) AND (id:("fixed-u-1" "fixed-u-2"))^0'
    )


def test_compare_counts_agreement_evidence_and_change() -> None:
    cases = [Case("a", "q", ["m1"]), Case("b", "q", ["m9"])]
    today = {"a": ["m1", "m2"], "b": ["m3", "m4"]}
    ranked = {"a": ["m1", "m2"], "b": ["m3"]}
    first = {"a": ["m2", "m1"], "b": ["m4"]}  # a: same messages, another order
    assert compare(cases, ranked, today, first) == {
        "same_top_k_as_today": 1,
        "recall_of_today": 0.75,
        "evidence_in_top_k": 1,
        "fewer_than_today": 1,
        "changed_since_first_size": 1,
    }
