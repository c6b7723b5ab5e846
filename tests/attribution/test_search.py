"""Evidence search: BM25 ranking and reciprocal-rank fusion (no database needed)."""

from __future__ import annotations

from service.attribution.search import fuse, rank_messages

MESSAGES = [
    ("m1", "Alice: I adopted a golden retriever named Biscuit"),
    ("m2", "Alice: my sister Emma lives in Denver"),
    ("m3", "Bob: the weather is nice today"),
]


def test_bm25_ranks_matching_messages_only() -> None:
    assert rank_messages(MESSAGES, "Where does Alice's sister live? Denver", 3)[0] == "m2"
    assert rank_messages(MESSAGES, "quantum chromodynamics", 3) == []
    assert rank_messages([], "anything", 3) == []


def test_fusion_rewards_agreement() -> None:
    assert set(fuse([["a", "b", "c"], ["b", "a", "d"]], 2)) == {"a", "b"}
    assert fuse([["a", "b"], ["c", "b"]], 1) == ["b"]
    assert fuse([["x"]], 5) == ["x"]
