"""The wire format of ``POST /traces`` and what it answers, defined once in the client
distribution (``memtrace_client.models``).

The service validates requests with the very models the SDK builds them with, so the two cannot
drift apart; the server imports them from here, like every other model. The kinds a unit,
operation or case can have are the graph's (``graph_schema``).
"""

from memtrace_client.models import (
    MAX_ID,
    Attributes,
    CaseIn,
    Identifier,
    IngestResult,
    KindCounts,
    OperationIn,
    ProjectName,
    Timestamp,
    TraceBatch,
    UnitIn,
    UnitRef,
)

__all__ = [
    "MAX_ID",
    "Attributes",
    "CaseIn",
    "Identifier",
    "IngestResult",
    "KindCounts",
    "OperationIn",
    "ProjectName",
    "Timestamp",
    "TraceBatch",
    "UnitIn",
    "UnitRef",
]
