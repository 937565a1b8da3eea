"""Reading a scenario: YAML text and command-line overrides -> :class:`Scenario`.

Every failure becomes one :class:`ScenarioError` line that names the source
(the file, or the flag that set the field), the field path in the form
``load.concurrency[2]`` and what was expected.

Imports: yaml, pydantic, loadgen.errors, loadgen.redact, loadgen.scenario.models.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from loadgen.errors import ScenarioError
from loadgen.redact import redact_text
from loadgen.scenario.loadspec import LOAD_TAGS
from loadgen.scenario.models import Scenario

__all__ = ["DROP", "Overrides", "load_scenario", "parse_scenario", "split_list"]

#: Flag name -> the fields it sets: {field path: value}.
Overrides = Mapping[str, Mapping[tuple[str, ...], Any]]

#: discriminated-union tags that pydantic puts in error locations (not user-visible keys)
_UNION_TAGS = {"fixed", "uniform", "normal", "lognormal", "empirical", "exponential", *LOAD_TAGS}

#: An override value that removes the field (a flag that switches the load mode
#: drops the fields of the other modes).
DROP = object()

#: Fields that hold file paths, resolved against the scenario file's folder.
_PATH_FIELDS: tuple[tuple[str, ...], ...] = (
    ("workload", "tokenizer"),
    ("workload", "dataset", "path"),
    ("workload", "prompt_tokens", "file"),
    ("workload", "output_tokens", "file"),
    ("workload", "sessions", "turns", "file"),
    ("load", "trace"),
)


def split_list(flag: str, text: str, kind: type[int] | type[float]) -> list[Any]:
    """Parse ``"1,2,4"`` for a flag such as ``--concurrency``."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ScenarioError(f"command line: {flag}: expected a comma-separated list, got {text!r}")
    try:
        return [kind(t) for t in items]
    except ValueError:
        name = "integers" if kind is int else "numbers"
        msg = f"command line: {flag}: expected comma-separated {name}, got {text!r}"
        raise ScenarioError(msg) from None


#: A scenario file larger than this is refused before it is parsed.
MAX_FILE_BYTES = 1_000_000
#: Nodes of the document with every YAML alias expanded (an alias bomb is far larger).
MAX_NODES = 100_000
#: Nesting depth of mappings and lists.
MAX_DEPTH = 50


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (the last would win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the base class says so
            if duplicate:
                line = key_node.start_mark.line + 1
                raise _Refused(f"{key}: duplicate key (each key may appear once)", line)
        return super().construct_mapping(node, deep=deep)


class _Refused(Exception):
    """A document refused before validation: what is wrong, and the line when known."""

    def __init__(self, what: str, line: int | None = None) -> None:
        super().__init__(what)
        self.line = line


def load_scenario(path: Path, overrides: Overrides | None = None) -> Scenario:
    """Read and validate ``path``; apply ``overrides`` before validation."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            msg = f"{path}: the scenario is {size} bytes; at most {MAX_FILE_BYTES} are read"
            raise ScenarioError(msg)
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the scenario: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text (byte {exc.start}): a scenario is a YAML text file"
        raise ScenarioError(msg) from None
    return parse_scenario(text, str(path), overrides, base_dir=path.parent)


def _check_size(node: yaml.Node | None) -> None:
    """Refuse a document too deep, or too large with its aliases expanded."""
    sizes: dict[int, int] = {}

    def size(n: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
        known = sizes.get(id(n))
        if known is not None:
            return known
        total = 1
        if isinstance(n, yaml.SequenceNode):
            total += sum(size(c, depth + 1) for c in n.value)
        elif isinstance(n, yaml.MappingNode):
            total += sum(size(k, depth + 1) + size(v, depth + 1) for k, v in n.value)
        if total > MAX_NODES:
            raise _Refused(f"more than {MAX_NODES} values with aliases expanded (an alias bomb?)")
        sizes[id(n)] = total
        return total

    if node is not None:
        size(node, 0)


def _read_yaml(text: str) -> Any:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        _check_size(node)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def parse_scenario(
    text: str, source: str, overrides: Overrides | None = None, *, base_dir: Path | None = None
) -> Scenario:
    """Validate a scenario's YAML ``text``; relative file paths in it are from ``base_dir``."""
    try:
        raw = _read_yaml(text)
    except _Refused as exc:
        where = source if exc.line is None else f"{source}:{exc.line}"
        raise ScenarioError(f"{where}: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: nested deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        text = f"{source}: YAML syntax error{where}: {problem}"
        raise ScenarioError(text.replace("\n", " ")) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        got = type(raw).__name__
        raise ScenarioError(f"{source}: expected a mapping of scenario fields, got {got}")
    if base_dir is not None:
        _resolve_paths(raw, base_dir)
    overrides = overrides or {}
    for fields in overrides.values():
        for path, value in fields.items():
            _set_path(raw, path, value)
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(_one_line(exc, source, overrides)) from None
    except RecursionError:
        raise ScenarioError(f"{source}: nested deeper than {MAX_DEPTH} levels") from None


def _set_path(raw: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = raw
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            if value is DROP:
                return
            child = {}
            node[key] = child
        node = child
    if value is DROP:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def _resolve_paths(raw: dict[str, Any], base_dir: Path) -> None:
    """Make the relative file paths of ``raw`` relative to ``base_dir`` instead of the cwd."""
    for path in _PATH_FIELDS:
        node: Any = raw
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        value = node.get(path[-1])
        if isinstance(value, str) and value and not Path(value).is_absolute():
            node[path[-1]] = str(base_dir / value)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _UNION_TAGS:
            continue  # discriminated-union tag, not a user-visible key
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _one_line(exc: ValidationError, source: str, overrides: Overrides) -> str:
    err = exc.errors(include_url=False)[0]
    loc = tuple(p for p in err["loc"] if p not in _UNION_TAGS)
    field = _field_path(loc)
    for flag, fields in overrides.items():
        if any(tuple(str(p) for p in loc[: len(path)]) == path for path in fields):
            source = f"command line {flag}"
            break
    msg = str(err["msg"])
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if not loc and msg.split(" ", 1)[0].split(".")[0] in Scenario.model_fields:
        text = f"{source}: {msg}"  # a check across sections names its own field
    else:
        text = f"{source}: {field}: {msg}"
    if err["type"] not in {"missing", "extra_forbidden"} and "input" in err:
        shown = repr(err["input"])
        if len(shown) <= 60 and not isinstance(err["input"], dict):
            text += f" (got {shown})"
    extra = exc.error_count() - 1
    if extra:
        text += f" [and {extra} more error{'s' if extra > 1 else ''}]"
    return redact_text(text.replace("\n", " "))  # a URL's password is not echoed
