"""``loadgen calibrate``, ``loadgen mock`` and ``loadgen agent``: the commands beside a run.

``calibrate`` measures the client's ceiling (loadgen.ceiling); ``mock`` and
``agent`` hand their arguments to the standalone programs' own parsers. Each
is a few lines; :mod:`loadgen.cli` adds them to the group.
"""

from __future__ import annotations

import sys
from typing import Any

import click

__all__ = ["agent", "calibrate", "mock"]


@click.command(short_help="Measure the client's own ceiling on this machine.")
@click.option(
    "--seconds",
    type=click.FloatRange(min=0, min_open=True, max=600),
    default=5.0,
    show_default=True,
    help="How long each regime is measured.",
)
@click.option(
    "--transport",
    type=click.Choice(["h1", "aiohttp", "httpx"]),
    default="h1",
    show_default=True,
    help="The client transport to measure (h1 is the default of runs).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1, max=4096),
    default=256,
    show_default=True,
    help="Streams in flight.",
)
@click.option(
    "--tokens",
    type=click.IntRange(min=1, max=65536),
    default=128,
    show_default=True,
    help="Output tokens per response.",
)
@click.option(
    "--itl-ms",
    type=click.FloatRange(min=0.1, max=1000),
    default=5.0,
    show_default=True,
    help="Per-token regime: the first rung's gap between a stream's tokens (the next "
    "rungs shorten it until the client or the mock is the limit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def calibrate(as_json: bool, **settings: Any) -> None:
    """Measure what this machine can drive: the client's ceiling against the built-in mock.

    The mock runs on loopback pinned to one core, loadgen on another (where
    affinity can be set), in two regimes: bursts (each response in one
    write) and one token per write (a live server's case), whose offer rises
    rung by rung until the client or the mock is the limit. Prints output
    tokens/s, client CPU-seconds, tokens per CPU-second, the mock's CPU use,
    and an estimate for this machine's cores (docs/performance.md).

    \b
    Example:
      loadgen calibrate --seconds 5
    """
    from loadgen.ceiling import caveats, ceiling_json, format_ceiling, measure_ceiling

    report = measure_ceiling(**settings)
    if as_json:
        import json

        click.echo(json.dumps(ceiling_json(report), indent=2))
    else:
        click.echo(format_ceiling(report))
    for line in caveats(report):
        click.echo(f"warning: {line}", err=True)


_PASSTHROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@click.command(
    context_settings=_PASSTHROUGH,
    add_help_option=False,
    short_help="Serve the built-in mock inference engine.",
)
@click.pass_context
def mock(ctx: click.Context) -> None:
    """Serve the built-in mock inference engine (`loadgen mock --help` for its flags).

    \b
    Example:
      loadgen mock --port 8000 --ttft-ms 50 --itl-ms 10
    """
    from loadgen.mock import main as mock_main

    sys.exit(mock_main(list(ctx.args)))


@click.command(
    context_settings=_PASSTHROUGH,
    add_help_option=False,
    short_help="Run the GPU telemetry sidecar agent.",
)
@click.pass_context
def agent(ctx: click.Context) -> None:
    """Run the GPU telemetry sidecar (`loadgen agent --help` for its flags).

    \b
    Example:
      loadgen agent --port 9347
    """
    from loadgen.gpu_agent import main as agent_main

    sys.exit(agent_main(list(ctx.args)))
