"""What a valid scenario needs from outside itself: its files and environment variables.

Checked once when a scenario is loaded (:func:`check_inputs`, called by
:func:`~loadgen.scenario.load.load_scenario`), so that ``loadgen run`` and
``loadgen workload`` refuse the same scenarios before anything starts:

- every file it points to (``workload.tokenizer``, ``workload.dataset.path``,
  an empirical ``file`` of lengths, ``load.trace``, ``target.tls.ca_file``,
  ``workload.tools.file``, ``workload.response_format.json_schema``) is
  a readable regular file (the tokenizer may be a model folder holding
  ``tokenizer.json``; the CA file must hold a PEM certificate) no larger than
  its kind's bound (:data:`~loadgen.scenario.limits.MAX_FILE_BYTES`): a device
  (``/dev/zero``: size 0, never ends), a pipe or a socket is refused unread;
- every environment variable it names (``target.api_key_env``,
  ``telemetry.token_env``, ``telemetry.serve_metrics_token_env``,
  ``telemetry.prometheus.token_env``) is set and not empty (an unset key would be
  dropped, and the server's 401 blamed on a field that is set).

Once they pass, the secret values the scenario configures (:func:`scenario_secrets`:
the API key, header values, URL passwords, the agents' token, the metrics port's
token, Prometheus's token) are handed to :func:`loadgen.redact.set_secrets`, so
that whatever a server echoes of them is
redacted wherever loadgen stores or prints it.

A failure is one line: ``<scenario>: <field>: <what> <resolved path>:
<reason>; expected <what would do>``. The readers in :mod:`loadgen.workload`
see only paths that were there; they still say what is wrong inside a file.
"""

from __future__ import annotations

import os
import ssl
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from loadgen.errors import ScenarioError
from loadgen.redact import SAFE_HEADERS, set_secrets
from loadgen.scenario.dists import EmpiricalDist
from loadgen.scenario.limits import MAX_FILE_BYTES
from loadgen.scenario.loadspec import TraceLoad
from loadgen.scenario.models import Scenario

__all__ = ["check_inputs", "scenario_secrets"]

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
        allow_dir = field == ("workload", "tokenizer")
        why = _file_problem(Path(path), allow_dir=allow_dir, max_bytes=MAX_FILE_BYTES[what])
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
    set_secrets(scenario_secrets(sc))


def scenario_secrets(sc: Scenario) -> list[str]:
    """The secret values ``sc`` configures: what a server must not get to echo into outputs.

    The API key (its variable's value), every header value but harmless ones (and
    the credential after ``Bearer``/``Basic``), the password (and ``user:password``)
    of every URL, and the agents' and Prometheus's bearer tokens.
    """
    prom = sc.telemetry.prometheus
    names = (
        sc.target.api_key_env,
        sc.telemetry.token_env,
        sc.telemetry.serve_metrics_token_env,
        prom.token_env if prom else None,
    )
    out = [os.environ[name] for name in names if name and os.environ.get(name)]
    for header, value in sc.target.headers.items():
        if header.lower() not in SAFE_HEADERS:
            out.append(value)
            out.extend(value.split()[1:2])  # "Bearer <token>": the token alone too
    tel = sc.telemetry
    urls = [*sc.target.endpoints, *tel.agents, tel.server_metrics or "", *tel.dcgm]
    urls.append(prom.url if prom else "")
    for url in urls:
        userinfo = urlsplit(url).netloc.rpartition("@")[0] if "@" in url else ""
        if ":" in userinfo:
            out += [userinfo, userinfo.split(":", 1)[1]]
        elif userinfo:
            out.append(userinfo)  # a token as the user name (https://TOKEN@host)
    return [v for v in out if v]


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
    after = w.cancel.after_tokens if w.cancel is not None else None
    if isinstance(after, EmpiricalDist) and after.file is not None:
        yield ("workload", "cancel", "after_tokens", "file"), "lengths file", after.file, lengths
    if w.tools is not None and w.tools.file is not None:
        expected = "a JSON or YAML list of {name, description, parameters} function definitions"
        yield ("workload", "tools", "file"), "tools file", w.tools.file, expected
    if w.response_format is not None and w.response_format.json_schema is not None:
        expected = "a JSON or YAML file holding a JSON schema"
        yield (
            ("workload", "response_format", "json_schema"),
            "schema",
            w.response_format.json_schema,
            expected,
        )
    if isinstance(sc.load, TraceLoad):
        expected = "a trace file (mooncake or loadgen JSONL, azure or burstgpt CSV, OTLP JSON)"
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
    if sc.telemetry.serve_metrics_token_env:
        name = sc.telemetry.serve_metrics_token_env
        yield ("telemetry", "serve_metrics_token_env"), "the metrics' bearer token", name
    prom = sc.telemetry.prometheus
    if prom is not None and prom.token_env:
        yield ("telemetry", "prometheus", "token_env"), "Prometheus's bearer token", prom.token_env


def _file_problem(path: Path, *, allow_dir: bool, max_bytes: int) -> str | None:
    """Why ``path`` cannot be read as a regular file (a folder with a tokenizer.json, if
    allowed) of at most ``max_bytes``; None when it can."""
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            if not allow_dir:
                return "is a folder, not a file"
            if not (path / _TOKENIZER_FILE).is_file():
                return f"a folder with no {_TOKENIZER_FILE} in it"
            path = path / _TOKENIZER_FILE
            st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            return f"{_kind(st.st_mode)}, not a regular file"
        if st.st_size > max_bytes:
            return f"{st.st_size} bytes, more than the {max_bytes} read of such a file"
        with path.open("rb"):
            pass
    except FileNotFoundError:
        return "no such file" + (" or folder" if allow_dir else "")
    except OSError as exc:
        return _reason(exc)
    return None


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


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
