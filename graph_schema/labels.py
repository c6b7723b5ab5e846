"""The graph's node labels, relationship types, constraints and indexes, named once.

Cypher text cannot import Python, so the ``.cypher`` files spell these out; a test
(tests/kernel/test_graph_schema.py) checks that every statement uses only the labels and types named
here and that ``cypher/schema/`` creates exactly these constraints and indexes. A new label or
relationship type is added here first.
"""

from __future__ import annotations

NODE_LABELS = frozenset(
    {
        "Operation",
        "Unit",
        "Case",
        "Attribution",
        "AttributionJob",
        "JobChunk",
        "ProjectDeletion",
        "JudgeCheck",
        "OtlpWarnings",
        "OtlpSpanLogs",
        "OptimizationClaim",
        "ReportCount",
    }
)
"""``ProjectDeletion`` is the mark of a ``DELETE /project`` that has not finished (one per
project); ``JudgeCheck`` is a model's recorded judge check in a project (``id``: the model);
``OtlpWarnings`` is a project's log of what its OTLP exports were told (one per project);
``OtlpSpanLogs`` holds the GenAI log events of one span (``id``: ``<trace id>:<span id>``), kept
for the span's operation whichever of the two arrives first;
``OptimizationClaim`` is the claim of the optimisation running on a prompt (``id``: the prompt's
name; empty when none runs); ``ReportCount`` is one of a project's kept report counts (``key``:
the combination of what the report groups by, ``service/reports/counts/repository.py``); every
other label holds a project's data."""

EDGE_TYPES = {
    "CONSUMES": "(:Operation)-[:CONSUMES {position}]->(:Unit): an input, in argument order",
    "PRODUCES": "(:Operation)-[:PRODUCES {position}]->(:Unit): an output, in result order",
    "PRODUCED_BY": "(:Unit)-[:PRODUCED_BY]->(:Operation): PRODUCES reversed, kept by the writer",
    "ANSWERED_BY": "(:Case)-[:ANSWERED_BY]->(:Unit): the answer the case judged",
    "EVIDENCE": "(:Case)-[:EVIDENCE {position}]->(:Unit): units known to carry the information",
    "ATTRIBUTED": "(:Case)-[:ATTRIBUTED]->(:Attribution): the case's stored attribution",
    "BLAMES": "(:Attribution)-[:BLAMES]->(:Operation): the operation it blames",
    "COVERS": "(:AttributionJob)-[:COVERS {state}]->(:Case): a case the job attributes",
    "CHUNK_OF": "(:JobChunk)-[:CHUNK_OF]->(:AttributionJob): a chunk of the job's cases, leased",
    "TAKES": "(:JobChunk)-[:TAKES]->(:Case): a case of the chunk",
    "USED": "(:Operation)-[:USED]->(:Attribution): an optimization learnt from this attribution",
}

CONSTRAINTS = frozenset(
    {
        "operation_key",
        "unit_key",
        "case_key",
        "attribution_job_key",
        "attribution_job_active",
        "job_chunk_key",
        "project_deletion_key",
        "judge_check_key",
        "otlp_warnings_key",
        "otlp_span_logs_key",
        "optimization_claim_key",
        "report_count_key",
    }
)
"""Uniqueness constraints: ``(project, id)`` per label (the writer's MERGE and CREATE rely on
them), one active attribution job per project, one deletion mark and one OTLP warnings log
per project, one node of GenAI log events per project and span, one optimisation claim per
prompt, and one kept report count per project and key."""

INDEXES = frozenset(
    {
        "operation_kind",
        "operation_rewrites",
        "operation_session",
        "operation_conversation",
        "operation_session_time",
        "operation_conversation_time",
        "operation_user",
        "unit_conversation",
        "unit_user",
        "unit_store",
        "operation_time",
        "operation_idle",
        "unit_defined",
        "unit_kind_id",
        "unit_reach",
        "unit_kind",
        "unit_memory_id",
        "case_verdict",
        "attribution_project",
        "job_chunk_free",
    }
)
