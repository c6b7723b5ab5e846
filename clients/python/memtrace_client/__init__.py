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
    RequestFailed,
    ServiceUnavailable,
)
from memtrace_client.models import CaseIn, IngestResult, OperationIn, TraceBatch, UnitIn
from memtrace_client.prompts import Prompt
from memtrace_client.retry import Backoff
from memtrace_client.tracer import Operation, Tracer

__all__ = [
    "Backoff",
    "CaseIn",
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
    "Rejection",
    "RequestFailed",
    "ServiceUnavailable",
    "TraceBatch",
    "Tracer",
    "UnitIn",
]
