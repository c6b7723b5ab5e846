"""Request model of ``POST /cases/{case_id}/verdict`` (defined with the wire models, since the
SDK sends it too); the answer is the case (``CaseView``)."""

from memtrace_client.models import VerdictIn

__all__ = ["VerdictIn"]
