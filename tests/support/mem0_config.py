"""The Mem0 configuration both Mem0 tests use (2.x in-process, 1.x in its own venv): the
scripted OpenAI-compatible server for the LLM and the embedder, a local on-disk Qdrant, a SQLite
history table. Standard library only: the Mem0 1.x venv imports it too."""

from __future__ import annotations

import os
import uuid
from typing import Any


def mem0_config(llm_base_url: str, workdir: str) -> dict[str, Any]:
    openai = {"api_key": "test-key", "openai_base_url": llm_base_url}
    return {
        "llm": {"provider": "openai", "config": {"model": "scripted", **openai}},
        "embedder": {
            "provider": "openai",
            "config": {"model": "scripted-embeddings", "embedding_dims": 64, **openai},
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": f"c{uuid.uuid4().hex[:8]}",
                "path": os.path.join(workdir, "qdrant"),
                "embedding_model_dims": 64,
                "on_disk": True,
            },
        },
        "history_db_path": os.path.join(workdir, "history.db"),
    }
