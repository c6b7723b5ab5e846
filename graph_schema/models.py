"""The wire format, defined once in the client distribution (``memtrace_client.models``).

The service validates requests with the very models the client builds them with, so the two
cannot drift apart. Importing them from here keeps the server's code speaking of its own package.
"""

from memtrace_client.models import (
    ENTRY_KEYS,
    MAX_ID,
    Attributes,
    CaseIn,
    Identifier,
    IngestResult,
    KindCounts,
    OperationIn,
    OperationKind,
    ProjectName,
    Timestamp,
    TraceBatch,
    UnitIn,
    UnitKind,
    UnitRef,
    Verdict,
    memory_entry,
)

__all__ = [
    "ENTRY_KEYS",
    "MAX_ID",
    "Attributes",
    "CaseIn",
    "Identifier",
    "IngestResult",
    "KindCounts",
    "OperationIn",
    "OperationKind",
    "ProjectName",
    "Timestamp",
    "TraceBatch",
    "UnitIn",
    "UnitKind",
    "UnitRef",
    "Verdict",
    "memory_entry",
]
