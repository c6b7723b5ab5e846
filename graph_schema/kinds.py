"""The kinds a node can have and the memory-entry rule, defined once in the client distribution
(``memtrace_client.models``, which validates batches with them) and shared from here by the
writer, the attribution walk, the audits and the API."""

from memtrace_client.models import (
    ENTRY_KEYS,
    OperationKind,
    UnitKind,
    Verdict,
    memory_entry,
)

__all__ = ["ENTRY_KEYS", "OperationKind", "UnitKind", "Verdict", "memory_entry"]
