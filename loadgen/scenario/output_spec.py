"""``workload.tools``, ``workload.tool_choice`` and ``workload.response_format``.

What a request asks the model to answer with beyond free text: function
definitions (from a file, or synthetic ones) and which of them it must call,
or an answer constrained to a JSON schema (or any JSON object). Paths are
plain strings here, resolved by :mod:`loadgen.scenario.load`; the files are
read (and the schemas checked) by :mod:`loadgen.workload.tools`.

:data:`OUTPUT_APIS` names the APIs that carry tools, :data:`FORMAT_APIS` those
that carry response formats (a new adapter that sends them adds its name),
:data:`SCHEMA_ONLY_APIS` those whose format is a JSON schema only (no json_object).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from loadgen.strict import Spec

__all__ = [
    "DEFAULT_PARAMETERS",
    "FORMAT_APIS",
    "MAX_TOOLS",
    "OUTPUT_APIS",
    "SCHEMA_ONLY_APIS",
    "ResponseFormatSpec",
    "ToolsSpec",
]

#: the APIs whose adapter sends tools
OUTPUT_APIS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic-messages")
#: the APIs whose adapter sends a response format (chat's ``response_format``, Responses'
#: ``text.format``, Messages' ``output_config.format``)
FORMAT_APIS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic-messages")
#: the APIs that have no json_object format (Anthropic's ``output_config.format`` is a
#: JSON schema only, and vLLM 0.32's Messages request refuses any other type)
SCHEMA_ONLY_APIS: tuple[str, ...] = ("anthropic-messages",)
#: synthetic tools (and parameters each) at most: a body of a few hundred KB
MAX_TOOLS = 128
#: parameters of each synthetic tool when ``parameters`` is not given
DEFAULT_PARAMETERS = 3


class ToolsSpec(Spec):
    file: str | None = Field(
        None,
        description="A JSON or YAML file holding a list of function definitions, each "
        "{name, description, parameters: a JSON schema} (or give `count`).",
    )
    count: int | None = Field(
        None,
        ge=1,
        le=MAX_TOOLS,
        description="Synthetic tools: how many functions (tool_0, tool_1, ...), seeded by "
        "workload.seed (instead of `file`).",
    )
    parameters: int | None = Field(
        None,
        ge=0,
        le=MAX_TOOLS,
        description="Synthetic tools: typed parameters of each function (string, integer, "
        "number, boolean, enum in turn), all required (None: 3).",
    )
    strict: bool | None = Field(
        None,
        description="Sent as every function's `strict` (vLLM then constrains the arguments "
        "to the tool's parameters); None: each file entry's own `strict`, else not sent.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> ToolsSpec:
        if (self.file is None) == (self.count is None):
            raise ValueError("give exactly one of `file` and `count`")
        if self.file is not None and self.parameters is not None:
            raise ValueError("`parameters` is for synthetic tools (`count`), not a `file`")
        return self


class ResponseFormatSpec(Spec):
    type: Literal["json_schema", "json_object"] = Field(
        "json_schema",
        description="json_schema: answers must be valid for the schema in `json_schema`; "
        "json_object: any JSON object.",
    )
    json_schema: str | None = Field(
        None, description="A JSON or YAML file holding the JSON schema the answer must meet."
    )
    name: str = Field(
        "answer",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="The schema's name as sent (response_format.json_schema.name; "
        "anthropic-messages sends no name).",
    )
    strict: bool = Field(
        True,
        description="Sent as response_format.json_schema.strict (anthropic-messages "
        "sends no strict: its output_config.format is always enforced).",
    )

    @model_validator(mode="after")
    def _schema_when_asked(self) -> ResponseFormatSpec:
        if self.type == "json_schema" and self.json_schema is None:
            raise ValueError("type json_schema needs `json_schema: FILE`")
        if self.type == "json_object" and self.json_schema is not None:
            raise ValueError("type json_object takes no `json_schema` (any JSON object is valid)")
        return self
