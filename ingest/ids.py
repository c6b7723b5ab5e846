"""Wire ids made by the converters (execution graphs, OTLP): at most 256 characters, the limit
``memtrace_client.models.Identifier`` enforces."""

from __future__ import annotations

import hashlib

from memtrace_client.models import MAX_ID

__all__ = ["MAX_ID", "bounded_id"]


def bounded_id(raw: str) -> str:
    """``raw`` itself, or, when longer than ``MAX_ID``, its start and a hash of all of it: the
    same long id always shortens to the same id, and two long ids sharing a start stay apart."""
    if len(raw) <= MAX_ID:
        return raw
    digest = hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()
    return f"{raw[: MAX_ID - len(digest) - 1]}~{digest}"
