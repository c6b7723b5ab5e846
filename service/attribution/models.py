"""Where the engine and the judges still import the attribution models from: they live in
``service.models.attribution`` (the API's models home). Kept only while engine.py and judges/
are being changed on other branches; drop it once their imports point there."""

from service.models.attribution import (
    AttributeRequest,
    AttributionResult,
    BlamedOperation,
    Cost,
    ErrorType,
    JudgeInfo,
    JudgeKind,
    Searched,
    Status,
)

__all__ = [
    "AttributeRequest",
    "AttributionResult",
    "BlamedOperation",
    "Cost",
    "ErrorType",
    "JudgeInfo",
    "JudgeKind",
    "Searched",
    "Status",
]
