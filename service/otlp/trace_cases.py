"""Cases recorded after the fact by trace id (``POST /otlp/cases``).

Feedback often arrives after the trace was exported: a user's thumbs down, an evaluation run
the next day. Naming the trace is then all the sender can do; the answer, the question and the
conversation are found in the stored spans by the rule a case marked on a wrapper span follows
(``ingest.otlp_cases``): the answer is the output of the trace's last answering LLM call.

The case is then written as a one-case batch by the batch writer (``ingest_batch``), so it is
one ordinary ``Case`` with ``ANSWERED_BY``, a re-send is a 200 that changes nothing and the same
id with another content a 409. The spans are read in a read transaction before the write: what
a trace's stored spans say does not change by a re-send of its export, so nothing is lost by
not holding one transaction over both; a later export adding an answering call to the trace
would make a re-sent case differ, and it is then refused (409), not silently moved.

Why not a ``trace_id`` field on ``POST /cases/{id}/verdict``: that endpoint updates a stored
case and keeps its fingerprint (a verdict sent again is not a redefinition); this one creates a
case, with the writer's rules for ids. One endpoint per meaning keeps both answers plain.
"""

from __future__ import annotations

from neo4j import AsyncSession

from service.cases.service import get_case
from service.errors import InvalidInput, TraceNotFound
from service.otlp.models import TraceCase, TraceCaseIn
from service.otlp.trace_cases_repository import read_trace_answer
from service.settings import Settings
from service.traces.models import CaseIn, TraceBatch
from service.traces.service import ingest_batch


async def record_trace_case(
    session: AsyncSession, project: str, given: TraceCaseIn, settings: Settings
) -> TraceCase:
    """Store the case ``given`` names on its trace (module docstring). ``TraceNotFound`` when
    the project holds no span of the trace, ``InvalidInput`` when none of them answered or the
    question is nowhere; nothing is written then."""
    trace_id = given.trace_id.lower()  # operation ids hold it as the exporters print it
    stored = await read_trace_answer(session, project, trace_id)
    loc = ["body", "trace_id"]
    if stored.spans == 0:
        raise TraceNotFound(
            f"no span of trace {trace_id} is stored in project {project!r}: export the trace "
            "to /otlp/v1/traces first (or name the project it went to)",
            details=[{"loc": loc, "msg": f"trace {trace_id} not stored"}],
        )
    answer = stored.answer
    if answer is None:
        raise InvalidInput(
            f"trace {trace_id} has {stored.spans} stored span(s) but no answering LLM call "
            "(none produced an answer other than memory being written): there is no answer "
            "for the case to be about",
            details=[{"loc": loc, "msg": f"trace {trace_id} has no answering call"}],
        )
    question = given.question
    if question is None:
        if not answer.user_messages:
            raise InvalidInput(
                f"the answering call of trace {trace_id} (span {answer.span_id}) read no user "
                "message: send the case's question",
                details=[{"loc": ["body", "question"], "msg": "not found in the spans; give it"}],
            )
        question = answer.user_messages[-1]
    attributes = {"trace_id": trace_id, "span_id": answer.span_id}
    if answer.conversation is not None:
        attributes["conversation"] = answer.conversation
    case = CaseIn(
        id=given.case_id,
        question=question,
        expected_answer=given.expected_answer,
        answer_unit=answer.answer_unit,
        verdict=given.verdict,
        attributes=attributes,
    )
    result = await ingest_batch(session, TraceBatch(project=project, cases=[case]), settings)
    return TraceCase(
        case=await get_case(session, project, given.case_id),
        trace_id=trace_id,
        span_id=answer.span_id,
        conversation=answer.conversation,
        question_from="request" if given.question is not None else "spans",
        created=result.created.cases > 0,
    )
