"""The LLM endpoint the harness's llm rows ask: the oracle by default, or a real one named by
``--llm-base-url``, ``--llm-model`` and ``--llm-api-key`` (a local llama.cpp / Ollama / vLLM
server, or a hosted API).

The same endpoint reaches both places an llm row runs: the service the harness starts (as
``MEMTRACE_LLM_*``) and the in-process engine (:func:`llm_judge`, the service's ``LLMJudge``
with the service's budget settings). The key is never written to the results.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import cache

from service.attribution.judges.heuristic import HeuristicJudge
from service.attribution.judges.llm import LLMJudge
from service.settings import Settings

ORACLE_MODEL = "oracle"


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint (``base_url`` ends in ``/v1``) and the model to ask."""

    base_url: str
    model: str
    api_key: str = "not-set"

    def env(self) -> dict[str, str]:
        """What a service started by the harness is configured with."""
        return {
            "MEMTRACE_LLM_BASE_URL": self.base_url,
            "MEMTRACE_LLM_MODEL": self.model,
            "MEMTRACE_LLM_API_KEY": self.api_key,
            # The harness measures the model's verdicts; a start-up check that stands a weak
            # model down would measure the heuristic instead (memtrace judge check measures it).
            "MEMTRACE_LLM_SELF_CHECK": "false",
        }

    def described(self) -> dict[str, str]:
        """For the results: where the llm rows' verdicts came from (no key)."""
        return {"base_url": self.base_url, "model": self.model}


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--llm-base-url",
        help="OpenAI-compatible endpoint (.../v1) the llm rows ask instead of the oracle",
    )
    parser.add_argument("--llm-model", help="model to ask there (required with --llm-base-url)")
    parser.add_argument(
        "--llm-api-key", default="not-set", help="key for that endpoint (not written to results)"
    )


def endpoint_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Endpoint | None:
    """The endpoint the options name; None for the oracle. Exits with a usage error when a
    model is given without a URL or a URL without a model."""
    if args.llm_base_url is None:
        if args.llm_model is not None:
            parser.error("--llm-model needs --llm-base-url")
        return None
    if not args.llm_model:
        parser.error("--llm-base-url needs --llm-model")
    return Endpoint(args.llm_base_url, args.llm_model, args.llm_api_key)


def redacted(argv: list[str]) -> list[str]:
    """``argv`` with the value of ``--llm-api-key`` replaced, for recording the command."""
    out, hide = [], False
    for arg in argv:
        if hide:
            out.append("***")
        elif arg.startswith("--llm-api-key="):
            out.append("--llm-api-key=***")
        else:
            out.append(arg)
        hide = arg == "--llm-api-key"
    return out


@cache
def _settings() -> Settings:
    return Settings()


def llm_judge(endpoint: Endpoint, confident: float) -> LLMJudge:
    """The service's llm judge against ``endpoint`` (heuristic first, deferring to the LLM
    below ``confident``; above 1 every unit goes to the LLM, as ``llm-all``), with the
    service's timeout and per-case budget (``MEMTRACE_LLM_TIMEOUT_S``,
    ``MEMTRACE_ATTRIBUTION_MAX_LLM_CALLS``, ``MEMTRACE_ATTRIBUTION_MAX_TOKENS``, the failure
    budget, ``MEMTRACE_LLM_CONCURRENCY`` and ``MEMTRACE_LLM_CONTEXT_TOKENS``). It owns its
    HTTP client: one case, one event loop."""
    settings = _settings()
    return LLMJudge(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        model=endpoint.model,
        timeout_s=settings.llm_timeout_s,
        max_calls=settings.attribution_max_llm_calls,
        max_tokens=settings.attribution_max_tokens,
        pre=HeuristicJudge(),
        confident=confident,
        max_failures=settings.attribution_max_llm_failures,
        concurrency=settings.llm_concurrency,
        context_tokens=settings.llm_context_tokens,
    )
