"""Reading a scenario: YAML text and command-line overrides -> :class:`Scenario`.

Every failure becomes one :class:`ScenarioError` line that names the source
(the file, or the flag that set the field), the field path in the form
``load.concurrency[2]`` and what was expected. An unknown key is reported
before any other error (a misspelt ``modle:`` is the cause of "model is
missing"), with the closest known name. Relative file paths are resolved
against the scenario's folder, and the files and environment variables a
valid scenario names are checked (:mod:`~loadgen.scenario.inputs`), as is every
value it holds (:mod:`~loadgen.scenario.values`: what JSON cannot carry). The
file itself is read only if it is a regular file, and no further than its limit.
"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel, ValidationError

from loadgen.errors import ScenarioError
from loadgen.redact import redact_text
from loadgen.scenario.inputs import check_inputs as check_scenario_inputs
from loadgen.scenario.loadspec import LOAD_TAGS
from loadgen.scenario.models import Scenario
from loadgen.scenario.values import check_values

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
    ("workload", "cancel", "after_tokens", "file"),
    ("workload", "tools", "file"),
    ("workload", "response_format", "json_schema"),
    ("load", "trace"),
    ("target", "tls", "ca_file"),
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
#: Characters of keys and values with every alias expanded (the file itself holds at most
#: MAX_FILE_BYTES; an alias repeats a text without its length in the file).
MAX_CHARS = 16_000_000


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


def load_scenario(
    path: Path, overrides: Overrides | None = None, *, check_inputs: bool = True
) -> Scenario:
    """Read and validate ``path``; apply ``overrides`` before validation.

    ``check_inputs``: also refuse a scenario whose files or environment variables
    are missing (see :mod:`~loadgen.scenario.inputs`); off to read back the
    scenario of a past run, whose files need not be there any more.
    """
    text = _read_file(path)
    return parse_scenario(
        text, str(path), overrides, base_dir=path.parent, check_inputs=check_inputs
    )


def _read_file(path: Path) -> str:
    """The text of the scenario file ``path``: a regular file of at most MAX_FILE_BYTES.

    A device, a pipe or a folder is refused before it is read (``/dev/zero`` has
    size 0 and never ends), and no more than the limit is ever read.
    """
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise ScenarioError(f"{path}: cannot read the scenario: {what}; expected a YAML file")
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the scenario: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        msg = f"{path}: the scenario is larger than {MAX_FILE_BYTES} bytes; at most that is read"
        raise ScenarioError(msg)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text (byte {exc.start}): a scenario is a YAML text file"
        raise ScenarioError(msg) from None


def _check_size(node: yaml.Node | None) -> None:
    """Refuse a document too deep, or too large with its aliases expanded (in values
    and in characters: a long text behind many aliases is as large as many texts)."""
    sizes: dict[int, tuple[int, int]] = {}

    def size(n: yaml.Node, depth: int) -> tuple[int, int]:
        if depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
        known = sizes.get(id(n))
        if known is not None:
            return known
        nodes, chars = 1, 0
        children: list[yaml.Node] = []
        if isinstance(n, yaml.SequenceNode):
            children = n.value
        elif isinstance(n, yaml.MappingNode):
            children = [c for pair in n.value for c in pair]
        elif isinstance(n, yaml.ScalarNode):
            chars = len(n.value)
        for c in children:
            more = size(c, depth + 1)
            nodes, chars = nodes + more[0], chars + more[1]
        if nodes > MAX_NODES:
            raise _Refused(f"more than {MAX_NODES} values with aliases expanded (an alias bomb?)")
        if chars > MAX_CHARS:
            raise _Refused(
                f"more than {MAX_CHARS} characters of values with aliases expanded (an alias bomb?)"
            )
        sizes[id(n)] = (nodes, chars)
        return nodes, chars

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
    text: str,
    source: str,
    overrides: Overrides | None = None,
    *,
    base_dir: Path | None = None,
    check_inputs: bool = False,
) -> Scenario:
    """Validate a scenario's YAML ``text``; relative file paths in it are from ``base_dir``.

    ``check_inputs``: also check the files and environment variables it names.
    """
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
    relative = _resolve_paths(raw, base_dir) if base_dir is not None else {}
    overrides = overrides or {}
    for fields in overrides.values():
        for path, value in fields.items():
            _set_path(raw, path, value)
            relative.pop(path, None)  # a flag's path is from the current directory
    try:
        sc = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(_one_line(exc, source, overrides)) from None
    except RecursionError:
        raise ScenarioError(f"{source}: nested deeper than {MAX_DEPTH} levels") from None

    def source_of(field: tuple[int | str, ...]) -> str:
        return _source_of(field, source, overrides)

    check_values(raw, source_of)  # what JSON cannot carry, in a field that takes any value
    if check_inputs:
        check_scenario_inputs(sc, source, relative=relative, source_of=source_of)
    return sc


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


def _resolve_paths(raw: dict[str, Any], base_dir: Path) -> dict[tuple[str, ...], str]:
    """Make the relative file paths of ``raw`` relative to ``base_dir`` instead of the cwd.

    Returns each changed field with its path as written.
    """
    given: dict[tuple[str, ...], str] = {}
    for path in _PATH_FIELDS:
        node: Any = raw
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        value = node.get(path[-1])
        if isinstance(value, str) and value and not Path(value).is_absolute():
            node[path[-1]] = str(base_dir / value)
            given[path] = value
    return given


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


def _source_of(loc: tuple[int | str, ...], source: str, overrides: Overrides) -> str:
    """``source``, or the flag that set the field at ``loc``."""
    for flag, fields in overrides.items():
        if any(tuple(str(p) for p in loc[: len(path)]) == path for path in fields):
            return f"command line {flag}"
    return source


def _one_line(exc: ValidationError, source: str, overrides: Overrides) -> str:
    errors = exc.errors(include_url=False)
    # an unknown key first: a misspelt name also makes the real one "missing"
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(p for p in err["loc"] if p not in _UNION_TAGS)
    field = _field_path(loc)
    source = _source_of(loc, source, overrides)
    msg = str(err["msg"])
    if err["type"] == "extra_forbidden":
        msg = "unknown field" + _did_you_mean(err["loc"])
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


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """What to say after "unknown field" for the key at the end of ``loc``.

    The field of another load mode or distribution (``arrival`` under mode
    concurrency), the closest known name (``did you mean model?``), or the names
    known there.
    """
    key = str(loc[-1])
    models, others = _models_at(loc[:-1])
    owners = sorted(t for m in others if key in m.model_fields for t in _tags(m))
    if owners and models:
        mine = ", ".join(sorted(_tags(models[0])))
        names = [t.removeprefix("load:") for t in owners]
        theirs = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        kind = "mode" if mine.startswith("load:") else "dist"
        return f" for {kind} {mine.removeprefix('load:')}; it is a field of {kind} {theirs}"
    names = sorted({n for m in models for n in m.model_fields})
    if not names:
        return ""
    close = difflib.get_close_matches(key, names, n=1)
    if close:
        return f"; did you mean {close[0]}?"
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"; expected one of: {shown}"


def _models_at(
    loc: tuple[int | str, ...],
) -> tuple[list[type[BaseModel]], list[type[BaseModel]]]:
    """The models that can stand at ``loc`` (an error location, union tags included),
    and the other members of the union whose tag picked them (none when no tag did)."""
    models: list[type[BaseModel]] = [Scenario]
    others: list[type[BaseModel]] = []
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the list's model
        if part in _UNION_TAGS:  # the tag picks one model of a union
            picked = [m for m in models if part in _tags(m)]
            if picked:
                others = [m for m in models if m not in picked]
                models = picked
            continue
        found: list[type[BaseModel]] = []
        for m in models:
            if part in m.model_fields:
                found.extend(_models_in(m.model_fields[part].annotation))
        models, others = found, []
    return models, others


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation can hold (through Optional, unions, lists, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _tags(model: type[BaseModel]) -> set[str]:
    """The union tags that select ``model``: its ``dist``, or ``load:<mode>``."""
    out: set[str] = set()
    for key, form in (("dist", "{}"), ("mode", "load:{}")):
        if key in model.model_fields:
            out.update(form.format(v) for v in get_args(model.model_fields[key].annotation))
    return out
