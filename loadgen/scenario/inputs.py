"""What a valid scenario needs from outside itself: its files and environment variables.

Checked once when a scenario is loaded (:func:`check_inputs`, called by
:func:`~loadgen.scenario.load.load_scenario`), so that ``loadgen run`` and
``loadgen workload`` refuse the same scenarios before anything starts:

- every file it points to (``workload.tokenizer``, ``workload.dataset.path``,
  an empirical ``file`` of lengths, ``load.trace``, ``target.tls.ca_file``) is
  a readable regular file (the tokenizer may be a model folder holding
  ``tokenizer.json``; the CA file must hold a PEM certificate);
- every environment variable it names (``target.api_key_env``,
  ``telemetry.token_env``) is set and not empty (an unset key would be
  dropped, and the server's 401 blamed on a field that is set).

A failure is one line: ``<scenario>: <field>: <what> <resolved path>:
<reason>; expected <what would do>``. The readers in :mod:`loadgen.workload`
see only paths that were there; they still say what is wrong inside a file.

Imports: os, ssl, loadgen.errors, loadgen.scenario.models.
"""

from __future__ import annotations

import os
import ssl
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from loadgen.errors import ScenarioError
from loadgen.scenario.models import EmpiricalDist, Scenario, TraceLoad

__all__ = ["check_inputs"]

#: the file a tokenizer folder must hold (as loadgen.workload.tokenizer reads it)
_TOKENIZER_FILE = "tokenizer.json"

#: a field path, as the loader's overrides and ``_PATH_FIELDS`` spell it
FieldPath = tuple[str, ...]


def check_inputs(
    sc: Scenario,
    source: str,
    *,
    relative: Mapping[FieldPath, str] | None = None,
    source_of: Callable[[FieldPath], str] | None = None,
) -> None:
    """Refuse ``sc`` (ScenarioError, one line) when a file or variable it names is missing.

    ``relative``: the file fields whose path was given relative (resolved against
    the scenario's folder), with the path as written. ``source_of``: who set a
    field (a command-line flag) when it is not ``source``.
    """
    relative = relative or {}
    for field, what, path, expected in _files(sc):
        why = _file_problem(Path(path), allow_dir=field == ("workload", "tokenizer"))
        if why is None and field == ("target", "tls", "ca_file"):
            why = _pem_problem(path)
        if why is not None:
            where = source_of(field) if source_of is not None else source
            text = f"{where}: {'.'.join(field)}: {what} {os.path.abspath(path)}: {why}"
            text += f"; expected {expected}"
            if field in relative:
                text += f" ({relative[field]!r} is read from the scenario's folder)"
            raise ScenarioError(text)
    for field, purpose, name in _variables(sc):
        value = os.environ.get(name)
        if not value:
            where = source_of(field) if source_of is not None else source
            state = "is not set" if value is None else "is empty"
            raise ScenarioError(
                f"{where}: {'.'.join(field)}: the environment variable {name} {state}; "
                f"expected it to hold {purpose} (export {name}=..., or remove the field)"
            )


def _files(sc: Scenario) -> Iterator[tuple[FieldPath, str, str, str]]:
    """(field, what it is, path, what is expected) for each file the scenario names."""
    w = sc.workload
    if w.tokenizer is not None:
        expected = f"a {_TOKENIZER_FILE} file or a model folder holding one"
        yield ("workload", "tokenizer"), "tokenizer", w.tokenizer, expected
    if w.dataset is not None:
        expected = "a JSONL or ShareGPT JSON file of prompts"
        yield ("workload", "dataset", "path"), "dataset", w.dataset.path, expected
    lengths = "a text file of token counts (one a line) or a JSON list"
    for name, dist in (("prompt_tokens", w.prompt_tokens), ("output_tokens", w.output_tokens)):
        if isinstance(dist, EmpiricalDist) and dist.file is not None:
            yield ("workload", name, "file"), "lengths file", dist.file, lengths
    turns = w.sessions.turns if w.sessions is not None else None
    if isinstance(turns, EmpiricalDist) and turns.file is not None:
        yield ("workload", "sessions", "turns", "file"), "lengths file", turns.file, lengths
    if isinstance(sc.load, TraceLoad):
        expected = "a trace file (mooncake or loadgen JSONL, azure or burstgpt CSV)"
        yield ("load", "trace"), "trace", sc.load.trace, expected
    if sc.target.tls.ca_file is not None:
        expected = "a PEM file of the CA certificates to trust"
        yield ("target", "tls", "ca_file"), "CA file", sc.target.tls.ca_file, expected


def _variables(sc: Scenario) -> Iterator[tuple[FieldPath, str, str]]:
    """(field, what the variable holds, its name) for each variable the scenario names."""
    if sc.target.api_key_env:
        yield ("target", "api_key_env"), "the API key", sc.target.api_key_env
    if sc.telemetry.token_env:
        yield ("telemetry", "token_env"), "the agents' bearer token", sc.telemetry.token_env


def _file_problem(path: Path, *, allow_dir: bool) -> str | None:
    """Why ``path`` cannot be read as a file (a folder with a tokenizer.json, if allowed)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file" + (" or folder" if allow_dir else "")
    except OSError as exc:
        return _reason(exc)
    if stat.S_ISDIR(mode):
        if not allow_dir:
            return "is a folder, not a file"
        if not (path / _TOKENIZER_FILE).is_file():
            return f"a folder with no {_TOKENIZER_FILE} in it"
        path = path / _TOKENIZER_FILE
    elif not stat.S_ISREG(mode):
        return "not a regular file"
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        return _reason(exc)
    return None


def _pem_problem(path: str) -> str | None:
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError as exc:
        return f"holds no PEM certificate ({exc.reason or exc})"
    except OSError as exc:
        return _reason(exc)
    return None


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()
