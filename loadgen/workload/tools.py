"""Tools and response formats as every API sends them: the neutral form, read once.

:func:`output_ask` turns ``workload.tools`` / ``tool_choice`` /
``response_format`` into an :class:`OutputAsk`: function definitions
(:class:`ToolDef`: name, description, a JSON schema of parameters) read from a
JSON or YAML file or made synthetic (seeded), the tool choice, and the
response format with its schema. Each adapter translates it to its own wire
form (:mod:`loadgen.client.adapters.tools`); the validity check reads the same
schemas (:mod:`loadgen.client.validity`).

Every schema is checked with ``jsonschema``'s ``check_schema`` when it is read,
so a file that is not a JSON schema stops the run before it starts
(:class:`~loadgen.errors.ScenarioError`, one line naming the file).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
import yaml

from loadgen.errors import ScenarioError
from loadgen.scenario import DEFAULT_PARAMETERS, ResponseFormatSpec, ToolsSpec, WorkloadSpec

__all__ = [
    "TOOL_CHOICES",
    "OutputAsk",
    "ResponseFormat",
    "ToolDef",
    "describe_output",
    "load_schema",
    "load_tools",
    "output_ask",
    "synthetic_tools",
]

#: the tool choices that are not a tool's name
TOOL_CHOICES = ("auto", "required", "none")
#: what OpenAI (and vLLM) accept as a function name
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}

#: words synthetic parameter names and enum values are made of
_WORDS = (
    "city", "date", "query", "unit", "limit", "user", "order", "item", "color", "size",
    "region", "level", "mode", "topic", "price", "count", "label", "status", "name", "page",
)  # fmt: skip
_TYPES = ("string", "integer", "number", "boolean", "enum")


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One function the model may call: its arguments must be valid for ``parameters``."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None = None  # sent as the function's ``strict`` when not None


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """An answer constrained to ``schema`` (json_schema) or to any JSON object."""

    type: Literal["json_schema", "json_object"]
    name: str = "answer"
    schema: dict[str, Any] | None = None
    strict: bool = True


@dataclass(frozen=True, slots=True)
class OutputAsk:
    """What a request asks beyond free text: tools and a choice, or a response format."""

    tools: tuple[ToolDef, ...] = ()
    tool_choice: str | None = None  # auto | required | none | a tool's name; None: not sent
    response_format: ResponseFormat | None = None

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)


def output_ask(spec: WorkloadSpec) -> OutputAsk | None:
    """The workload's tools and response format, files read and schemas checked; None
    when it asks for neither (ScenarioError, naming the field, when a file is bad)."""
    if spec.tools is None and spec.response_format is None:
        return None
    tools: tuple[ToolDef, ...] = ()
    if spec.tools is not None:
        tools = _tools_of(spec.tools, spec.seed)
        _check_choice(spec.tool_choice, tools)
    fmt = None
    if spec.response_format is not None:
        fmt = _format_of(spec.response_format)
    return OutputAsk(tools=tools, tool_choice=spec.tool_choice, response_format=fmt)


def describe_output(ask: OutputAsk, spec: WorkloadSpec) -> dict[str, str]:
    """``loadgen workload``'s (and summary.json's) lines: the tools with their parameters
    and the choice, or the response format with the schema's top-level properties."""
    out: dict[str, str] = {}
    if ask.tools:
        t = spec.tools
        source = f"from {t.file}" if t is not None and t.file else "synthetic"
        shown = [f"{d.name}({', '.join(_property_names(d.parameters))})" for d in ask.tools[:4]]
        more = f", ... {len(ask.tools) - 4} more" if len(ask.tools) > 4 else ""
        choice = ask.tool_choice or "not sent (auto)"
        strict = sum(t.strict is True for t in ask.tools)
        marks = "" if not strict else f" ({strict} strict)"
        out["tools"] = (
            f"{len(ask.tools)} {source}{marks}: {', '.join(shown)}{more}; tool_choice {choice}"
        )
    fmt = ask.response_format
    if fmt is not None:
        if fmt.schema is None:
            out["response_format"] = "json_object (any JSON object)"
        else:
            r = spec.response_format
            props = ", ".join(_property_names(fmt.schema)) or "no properties"
            where = r.json_schema if r is not None else ""
            out["response_format"] = f"json_schema {fmt.name} from {where}: {{{props}}}"
    return out


def _property_names(schema: dict[str, Any]) -> list[str]:
    """Top-level property names, the required ones unmarked and the rest with ``?``."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    required = set(schema.get("required") or ())
    return [str(n) if n in required else f"{n}?" for n in props]


def _tools_of(spec: ToolsSpec, seed: int) -> tuple[ToolDef, ...]:
    if spec.file is not None:
        try:
            tools = load_tools(Path(spec.file))
        except ScenarioError as exc:
            raise _named(exc, spec.file, "workload.tools.file") from None
    else:
        k = DEFAULT_PARAMETERS if spec.parameters is None else spec.parameters
        tools = synthetic_tools(spec.count or 0, k, seed)
    if spec.strict is None:
        return tools
    return tuple(dataclasses.replace(t, strict=spec.strict) for t in tools)


def _format_of(spec: ResponseFormatSpec) -> ResponseFormat:
    schema = None
    if spec.json_schema is not None:
        try:
            schema = load_schema(Path(spec.json_schema))
        except ScenarioError as exc:
            raise _named(exc, spec.json_schema, "workload.response_format.json_schema") from None
    return ResponseFormat(type=spec.type, name=spec.name, schema=schema, strict=spec.strict)


def _named(exc: ScenarioError, path: str, field: str) -> ScenarioError:
    """``/x/t.json: what`` -> ``/x/t.json: workload.tools.file: what``."""
    text, head = str(exc), f"{Path(path)}: "
    if text.startswith(head):
        return ScenarioError(f"{head}{field}: {text[len(head) :]}")
    return ScenarioError(f"{field}: {text}")


def _check_choice(choice: str | None, tools: tuple[ToolDef, ...]) -> None:
    if choice is None or choice in TOOL_CHOICES or any(t.name == choice for t in tools):
        return
    names = ", ".join(t.name for t in tools[:8]) + (", ..." if len(tools) > 8 else "")
    raise ScenarioError(
        f"workload.tool_choice: no tool named {choice!r}; expected "
        f"{', '.join(TOOL_CHOICES)} or a tool's name ({names})"
    )


def synthetic_tools(count: int, parameters: int, seed: int) -> tuple[ToolDef, ...]:
    """``count`` functions ``tool_0``... of ``parameters`` typed, required parameters each
    (string, integer, number, boolean, enum in turn), their names and enums seeded."""
    rng = np.random.default_rng([seed, 2_000_003])
    out = []
    for i in range(count):
        props: dict[str, Any] = {}
        for j in range(parameters):
            word = _WORDS[int(rng.integers(len(_WORDS)))]
            kind = _TYPES[j % len(_TYPES)]
            if kind == "enum":
                picks = rng.choice(len(_WORDS), size=3, replace=False)
                props[f"{word}_{j}"] = {"type": "string", "enum": [_WORDS[int(k)] for k in picks]}
            else:
                props[f"{word}_{j}"] = {"type": kind, "description": f"the {word}"}
        params = {
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }
        topic = _WORDS[int(rng.integers(len(_WORDS)))]
        out.append(ToolDef(f"tool_{i}", f"Look up the {topic} (synthetic tool {i}).", params))
    return tuple(out)


def _read(path: Path) -> Any:
    """A JSON or YAML document (JSON is read as JSON first: faster, exact numbers)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return yaml.safe_load(data)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ScenarioError(f"{path}: neither JSON nor YAML ({problem})") from None


def _schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a JSON schema (jsonschema's ``check_schema``), or None."""
    if not isinstance(schema, dict | bool):
        return f"expected a JSON schema (an object), got {type(schema).__name__}"
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"not a JSON schema: {exc.message}" + (f" (at {where})" if where else "")
    return None


def load_schema(path: Path) -> dict[str, Any]:
    """The JSON schema in ``path`` (ScenarioError naming the file if it is not one)."""
    schema = _read(path)
    if not isinstance(schema, dict):
        got = type(schema).__name__
        raise ScenarioError(f"{path}: expected a JSON schema (an object), got {got}")
    if (why := _schema_problem(schema)) is not None:
        raise ScenarioError(f"{path}: {why}")
    return schema


def load_tools(path: Path) -> tuple[ToolDef, ...]:
    """The function definitions in ``path``: a list of ``{name, description, parameters}``
    (or of OpenAI's ``{type: function, function: {...}}``), names unique, schemas checked."""
    data = _read(path)
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list) or not data:
        raise ScenarioError(f"{path}: expected a non-empty list of function definitions")
    out: list[ToolDef] = []
    for i, entry in enumerate(data):
        tool = _tool(entry, f"{path}: tool {i}")
        if any(t.name == tool.name for t in out):
            raise ScenarioError(f"{path}: tool {i}: the name {tool.name!r} is given twice")
        out.append(tool)
    return tuple(out)


def _tool(entry: Any, where: str) -> ToolDef:
    if isinstance(entry, dict) and entry.get("type") == "function" and "function" in entry:
        entry = entry["function"]
    if not isinstance(entry, dict):
        raise ScenarioError(f"{where}: expected {{name, description, parameters}}")
    unknown = set(entry) - {"name", "description", "parameters", "strict"}
    if unknown:
        raise ScenarioError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ScenarioError(f"{where}: name {name!r}; expected 1-64 of A-Z a-z 0-9 _ -")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError(f"{where} ({name}): description must be text")
    parameters = entry.get("parameters", _EMPTY_PARAMETERS)
    if not isinstance(parameters, dict):
        raise ScenarioError(f"{where} ({name}): parameters: expected a JSON schema (an object)")
    if (why := _schema_problem(parameters)) is not None:
        raise ScenarioError(f"{where} ({name}): parameters: {why}")
    strict = entry.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise ScenarioError(f"{where} ({name}): strict must be true or false")
    return ToolDef(name, description, parameters, strict)
