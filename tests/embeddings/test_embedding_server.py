"""The local embedding model (``service.embeddings``): all-MiniLM-L6-v2 on the CPU with numpy.

Two parts. The forward pass, in-process: the similarities the sentence-transformers
documentation prints for this model (three sentences, four decimals), paraphrases ranked above
unrelated pairs, and a text's vector the same alone and padded in a batch with a longer one (a
mask that leaks padding into attention or pooling fails that). The server, as a real process
(``memtrace embeddings serve``) through the real ``openai`` client and the service's own
``EndpointEmbedder``: OpenAI's answer shape, unit vectors of 384 numbers, the same text the same
vector, paraphrases closer than unrelated texts, and a 422 that says why for what it cannot serve.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import numpy as np
import openai
import pytest

from service.attribution.search import EndpointEmbedder
from service.embeddings.minilm import MiniLM
from tests.support.embedding_server import EmbeddingServer, missing, run_embedding_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

PARAPHRASE = ("went to the support group yesterday", "attended a support group meeting")
UNRELATED = ("went to the support group yesterday", "the quarterly tax filing is due in April")

# (a, paraphrase of a, unrelated to a)
PAIRS = [
    (*PARAPHRASE, UNRELATED[1]),
    ("Caroline moved here from Sweden", "Caroline is originally from Sweden", "I bought new shoes"),
    (
        "Melanie painted a sunset at the lake",
        "Mel made a painting of the lake at dusk",
        "the server crashed during the upgrade",
    ),
    (
        "my dog loves long walks",
        "the puppy enjoys going for long strolls",
        "interest rates rose again this quarter",
    ),
    (
        "she adopted two kids last year",
        "last year she became a mother through adoption",
        "the train to Berlin was delayed",
    ),
]


def cosine(a: list[float] | np.ndarray, b: list[float] | np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


def test_the_similarities_the_sentence_transformers_docs_print(model: MiniLM) -> None:
    # sentence-transformers' README, all-MiniLM-L6-v2: model.similarity(embeddings, embeddings)
    # prints [[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]].
    v = model.embed(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    got = v @ v.T
    assert got[0, 1] == pytest.approx(0.6660, abs=1e-3)
    assert got[0, 2] == pytest.approx(0.1046, abs=1e-3)
    assert got[1, 2] == pytest.approx(0.1411, abs=1e-3)


def test_paraphrases_rank_above_unrelated_pairs(model: MiniLM) -> None:
    for a, same, other in PAIRS:
        va, vs, vo = model.embed([a, same, other])
        assert cosine(va, vs) > cosine(va, vo) + 0.2, (a, cosine(va, vs), cosine(va, vo))


def test_padding_in_a_batch_changes_no_vector(model: MiniLM) -> None:
    short = "a short one"
    long = (
        "a much longer sentence that makes the short one padded by many tokens when both go "
        "through the encoder in one batch, which must not change either vector"
    )
    together = model.embed([short, long])
    assert cosine(together[0], model.embed([short])[0]) == pytest.approx(1.0, abs=1e-5)
    assert cosine(together[1], model.embed([long])[0]) == pytest.approx(1.0, abs=1e-5)


def test_a_text_longer_than_256_tokens_is_cut(model: MiniLM) -> None:
    words = " ".join(f"word{i}" for i in range(600))
    assert model.count_tokens([words]) == 256
    assert np.linalg.norm(model.embed([words])[0]) == pytest.approx(1.0, abs=1e-5)


@pytest.fixture(scope="module")
def embedding_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddingServer]:
    with run_embedding_server(tmp_path_factory.mktemp("embeddings")) as server:
        yield server


@pytest.fixture
def openai_client(embedding_server: EmbeddingServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=embedding_server.base_url, api_key="not-needed") as c:
        yield c


def test_the_openai_client_gets_unit_vectors_of_384(openai_client: openai.OpenAI) -> None:
    texts = ["Caroline moved from Sweden.", "Melanie likes painting."]
    for encoding in ("float", "base64"):  # the client asks for base64 unless told otherwise
        if encoding == "float":
            answer = openai_client.embeddings.create(
                model="all-MiniLM-L6-v2", input=texts, encoding_format="float"
            )
        else:
            answer = openai_client.embeddings.create(model="all-MiniLM-L6-v2", input=texts)
        assert answer.model == "all-MiniLM-L6-v2"
        assert [d.index for d in answer.data] == [0, 1]
        assert all(d.object == "embedding" for d in answer.data)
        assert answer.usage.prompt_tokens == answer.usage.total_tokens > 0
        for item in answer.data:
            assert len(item.embedding) == 384
            assert np.linalg.norm(item.embedding) == pytest.approx(1.0, abs=1e-5)
    one = openai_client.embeddings.create(
        model="all-MiniLM-L6-v2", input=texts[0], encoding_format="float"
    )
    assert len(one.data) == 1


def test_the_same_text_gets_the_same_vector(openai_client: openai.OpenAI) -> None:
    text = "went to the support group yesterday"
    first = openai_client.embeddings.create(
        model="all-MiniLM-L6-v2", input=text, encoding_format="float"
    )
    again = openai_client.embeddings.create(
        model="all-MiniLM-L6-v2", input=["something else entirely", text], encoding_format="float"
    )
    assert cosine(first.data[0].embedding, again.data[1].embedding) == pytest.approx(1.0, abs=1e-5)


def test_the_service_embedder_ranks_the_paraphrase_first(embedding_server: EmbeddingServer) -> None:
    async def ranked() -> tuple[list[str], np.ndarray]:
        embedder = EndpointEmbedder(
            base_url=embedding_server.base_url,
            api_key="not-needed",
            model=embedding_server.model,
            timeout_s=30,
        )
        try:
            messages = [("m1", UNRELATED[1]), ("m2", PARAPHRASE[1]), ("m3", "I bought new shoes")]
            order = await embedder.rank(messages, PARAPHRASE[0], 3)
            return order, await embedder.embed([*PARAPHRASE, UNRELATED[1]])
        finally:
            await embedder.aclose()

    order, vectors = asyncio.run(ranked())
    assert order[0] == "m2"
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])


def test_an_empty_list_is_a_422_that_says_so(openai_client: openai.OpenAI) -> None:
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        openai_client.embeddings.create(model="all-MiniLM-L6-v2", input=[], encoding_format="float")
    assert "empty list" in str(caught.value)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "all-MiniLM-L6-v2", "input": [1, 2, 3]}, "input"),  # token ids
        ({"model": "all-MiniLM-L6-v2", "input": ["fine", 7]}, "input"),
        ({"model": "all-MiniLM-L6-v2", "input": {"text": "x"}}, "input"),
        ({"model": "all-MiniLM-L6-v2"}, "input"),
        ({"model": "text-embedding-3-small", "input": "another model"}, "model"),
        ({"model": "all-MiniLM-L6-v2", "input": "x", "encoding_format": "int8"}, "encoding_format"),
    ],
)
def test_what_it_cannot_serve_is_a_422_never_a_500(
    embedding_server: EmbeddingServer, body: dict[str, object], param: str
) -> None:
    answer = httpx.post(f"{embedding_server.base_url}/embeddings", json=body, timeout=30)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]  # OpenAI's shape, whose message its clients show
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "invalid_input"
    assert error["message"]
    assert error["param"] == param


def test_a_body_that_is_not_json_is_a_422(embedding_server: EmbeddingServer) -> None:
    answer = httpx.post(
        f"{embedding_server.base_url}/embeddings",
        content=b"not json",
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 422, answer.text
    assert "not JSON" in answer.json()["error"]["message"]
