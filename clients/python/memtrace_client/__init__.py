"""memtrace_client: send the operations of an LLM memory system to MemTrace.

``MemTraceClient`` sends batches (sync or async); ``Tracer`` records units, operations and cases
as your pipeline runs and delivers them in the background; ``memtrace_client.adapters`` traces
Mem0 and shows a plain RAG memory built on the tracer.
"""

from memtrace_client.client import MemTraceClient
from memtrace_client.delivery import Delivery, DeliveryStats, FlushResult, Rejection
from memtrace_client.errors import (
    MemTraceClientError,
    RejectedBatch,
    RejectedRequest,
    RequestFailed,
    ServiceUnavailable,
)
from memtrace_client.models import CaseIn, IngestResult, OperationIn, TraceBatch, UnitIn
from memtrace_client.prompts import Prompt
from memtrace_client.retry import Backoff
from memtrace_client.tracer import Operation, Tracer
from memtrace_client.verdicts import CaseRef

__all__ = [
    "Backoff",
    "CaseIn",
    "CaseRef",
    "Delivery",
    "DeliveryStats",
    "FlushResult",
    "IngestResult",
    "MemTraceClient",
    "MemTraceClientError",
    "Operation",
    "OperationIn",
    "Prompt",
    "RejectedBatch",
    "RejectedRequest",
    "Rejection",
    "RequestFailed",
    "ServiceUnavailable",
    "TraceBatch",
    "Tracer",
    "UnitIn",
]
