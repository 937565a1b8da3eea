"""``loadgen init URL``: probe a server, write a scenario file tuned to it, say what was found.

A few lines over the library: the probe is :func:`loadgen.target.probe.probe_server`,
the file :func:`loadgen.target.starter.starter_text`. An existing file is
refused without ``--force`` before anything is asked of the server; a server
that gives no answer, or where no API answered its probe, is one line and
exit 2, and no file is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from loadgen.errors import OutputError, ScenarioError

if TYPE_CHECKING:
    from loadgen.target import Probe

__all__ = ["init"]


@click.command(short_help="Probe a server and write a scenario file tuned to it.")
@click.argument("url")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("scenario.yaml"),
    show_default=True,
    help="The scenario file to write.",
)
@click.option("--force", is_flag=True, help="Write over an existing file.")
@click.option("--model", help="The model to probe and write (default: the first /v1/models lists).")
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Environment variable holding the API key: the probes send it, the file names "
    "the variable (never the key).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0.1, max=300),
    default=10.0,
    show_default=True,
    help="Seconds each probe may take (connect to last byte).",
)
def init(
    url: str,
    output: Path,
    force: bool,
    model: str | None,
    api_key_env: str | None,
    timeout_s: float,
) -> None:
    """Probe the server at URL and write a commented scenario file tuned to it.

    Asks GET /v1/models (models, context length), one tiny request per API
    (chat, completions, responses, messages, TGI, embeddings, rerank; one
    token each), /tokenize, /metrics and the engine's version endpoint (vLLM,
    SGLang, TGI, llama.cpp). The file uses the API that answered, the model,
    prompt lengths within the context, ignore_eos where the engine takes it,
    telemetry.server_metrics when /metrics answered; the SLA is left for you.

    \b
    Examples:
      loadgen init http://127.0.0.1:8000
      loadgen init http://gpu-box:8000 -o my-endpoint.yaml --api-key-env MY_KEY
    """
    import time

    from loadgen.redact import redact_text, set_secrets, strip_userinfo, warn
    from loadgen.results import write_atomic
    from loadgen.scenario import check_base_url
    from loadgen.target import found_lines, probe_server, starter_text

    try:
        check_base_url(url)
    except ValueError as exc:
        why = str(exc).replace(" or mock", "")  # init asks a real server
        raise ScenarioError(f"command line: URL: {why} (got {redact_text(url)!r})") from None
    if output.exists() and not force:
        raise OutputError(f"{output}: exists; give --force to write over it, or -o another file")
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise ScenarioError(f"command line: --api-key-env: {api_key_env} is not set")
        set_secrets([key])
    probe = probe_server(url, model=model, api_key=key, timeout_s=timeout_s)
    probe.url = strip_userinfo(probe.url)  # the file and the summary never hold a password
    if probe.no_api:
        raise ScenarioError(redact_text(_no_api_line(probe, api_key_env)))
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = starter_text(probe, api_key_env=api_key_env, written=stamp, file=str(output))
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise OutputError(f"{output}: cannot write: {exc.strerror or exc}") from None
    click.echo(redact_text(f"server {probe.url}"))
    for line in found_lines(probe):
        click.echo(redact_text(f"  {line}"))
    if probe.best_api is None:  # a route is there but refused the probe (400, 500, ...)
        warn("warning: no API answered its probe; the file says openai-chat: set target.api")
        if probe.url.endswith("/v1"):
            warn("hint: the URL ends in /v1; loadgen adds /v1/... itself: give the server's root")
    click.echo(f"wrote {output}: loadgen run {output}")


def _no_api_line(probe: Probe, api_key_env: str | None) -> str:
    """Why ``init`` wrote nothing: no API answered its probe, in one line."""
    said: dict[str, list[str]] = {}
    for a in probe.apis:
        said.setdefault(str(a.status) if a.status is not None else "no answer", []).append(a.api)
    each = "; ".join(f"{status}: {', '.join(apis)}" for status, apis in said.items())
    if probe.wants_key:
        hint = (
            f"the server refused the key in ${api_key_env}"
            if api_key_env
            else "the server wants a key: give --api-key-env VAR"
        )
    elif probe.url.endswith("/v1"):
        hint = "the URL ends in /v1 and loadgen adds /v1/... itself: give the server's root"
    else:
        hint = "no API loadgen speaks here, or the URL is not the server's root"
    return f"init: no API answered its probe at {probe.url} ({each}); {hint}; nothing written"
