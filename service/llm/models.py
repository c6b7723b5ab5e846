"""What work on the LLM endpoint cost, as an attribution and a prompt optimisation report it."""

from __future__ import annotations

from pydantic import BaseModel


class Cost(BaseModel):
    """What the work spent. Tokens are as the LLM endpoint reported them (a prompt
    optimisation counts an estimate where it reported none, so its budget stays honest)."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
