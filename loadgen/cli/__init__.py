"""The command line: thin commands over the library.

Exit codes are the error classes' (:data:`loadgen.errors.EXIT_CODES`): ``--help``
and README.md's table are rendered from them.

A closed stdout (``| head``) or a hung-up terminal drops the output, not the
run (:mod:`loadgen.stdio`).

Every failure is a :class:`loadgen.errors.LoadgenError` whose class carries
its exit code (``exit_code``, defined once in :mod:`loadgen.errors`); what a
run amounts to is judged in the library (:mod:`loadgen.results.outcome`),
and :func:`main` prints the one line and exits with the code. Warnings and
errors go to stderr; a run's last lines on stdout are its verdict and results
path, with ``-q`` too.

``run`` and ``workload`` are here (a run without a file takes its scenario
from :mod:`loadgen.scenario.defaults`); ``init`` in :mod:`loadgen.cli.init`;
``calibrate``, ``mock`` and ``agent`` in :mod:`loadgen.cli.side_commands`; ``export``
(and ``run --mlflow``'s logging) in :mod:`loadgen.cli.export`; ``report`` and
``compare`` in :mod:`loadgen.cli.outputs`.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from loadgen.cli.export import (
    MLFLOW_DEFAULT,
    MLFLOW_HELP,
    check_mlflow_value,
    export,
    mlflow_logging,
)
from loadgen.cli.init import init
from loadgen.cli.outputs import register_output_commands
from loadgen.cli.side_commands import agent, calibrate, mock
from loadgen.errors import Interrupted, LoadgenError, ScenarioError, exit_codes_brief
from loadgen.redact import redact_text
from loadgen.stdio import tolerant_stdio
from loadgen.vocab import API_NAMES, PROFILE_NAMES

if TYPE_CHECKING:
    from loadgen.scenario import Scenario

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loadgen")
def cli() -> None:
    """loadgen: exact load generation and benchmarking for LLM inference servers.

    \b
    Examples:
      loadgen run --url http://127.0.0.1:8000 --model my-model
      loadgen init http://127.0.0.1:8000 -o my-endpoint.yaml
      loadgen run scenarios/demo.yaml

    """


# the exit codes in --help are the error classes' own (one table: loadgen.errors.EXIT_CODES)
cli.help = "\n\n".join(
    [
        inspect.cleandoc(cli.help or ""),
        "\b\n"
        + textwrap.fill(
            f"Exit codes: {exit_codes_brief()}; a signal keeps the partial results, summary"
            " and reports.",
            width=76,
        ),
    ]
)


_SWEEP_HELP = {
    "concurrency": "Closed-loop sweep, e.g. 1,2,4,8 (sets load.mode).",
    "rate": "Open-loop sweep in requests/s, e.g. 1,2,4 (sets load.mode).",
    "requests": "Override load.requests_per_step.",
    "duration": "Override load.duration_s (seconds per step).",
    "workers": "Override load.workers: processes that send the load (a number, or auto).",
    "prompt_tokens": "Every prompt N tokens (sets workload.prompt_tokens to fixed N).",
    "output_tokens": "Every answer at most N tokens (sets workload.output_tokens to fixed N).",
}


def _sweep_options(f: Any) -> Any:
    """--concurrency, --rate, --requests, --duration, --workers, --prompt-tokens,
    --output-tokens: shared by run and workload."""
    for name in ("output_tokens", "prompt_tokens"):
        flag = "--" + name.replace("_", "-")
        f = click.option(flag, type=click.IntRange(min=1), metavar="N", help=_SWEEP_HELP[name])(f)
    f = click.option(
        "--duration", type=click.FloatRange(min=0, min_open=True), help=_SWEEP_HELP["duration"]
    )(f)
    f = click.option("--requests", type=click.IntRange(min=1), help=_SWEEP_HELP["requests"])(f)
    f = click.option("--rate", metavar="R1,R2,...", help=_SWEEP_HELP["rate"])(f)
    f = click.option("--workers", metavar="N|auto", help=_SWEEP_HELP["workers"])(f)
    return click.option("--concurrency", metavar="C1,C2,...", help=_SWEEP_HELP["concurrency"])(f)


def _scenario(path: Path | None, flags: dict[str, Any]) -> Scenario:
    """The SCENARIO file with the flags over it; without a file, the defaults of a run
    without one (:mod:`loadgen.scenario.defaults`: --url is then required)."""
    from loadgen.scenario import (
        check_lengths_apply,
        flag_overrides,
        load_scenario,
        no_file_scenario,
    )

    overrides = flag_overrides(flags)
    if path is None:
        return no_file_scenario(overrides)
    sc = load_scenario(path, overrides)
    check_lengths_apply(sc, flags)
    return sc


@cli.command(short_help="Run a sweep (a scenario file, or --url alone); write its results.")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Results directory (default: results/<name>-<time>); one that holds a run "
    "is refused without --replace.",
)
@click.option(
    "--replace", is_flag=True, help="Write over the run a results directory already holds."
)
@click.option(
    "--url",
    metavar="URL",
    help="Override target.url (a base URL, or `mock`; replaces target.urls). Without a "
    "SCENARIO file: the server to run the default sweep against.",
)
@click.option(
    "--model",
    help="Override target.model (`auto`: the one the server lists; the default without a file).",
)
@click.option("--api", type=click.Choice(API_NAMES), help="Override target.api.")
@_sweep_options
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress and no step tables (verdict still printed)."
)
@click.option(
    "--no-live",
    is_flag=True,
    help="No live view on a terminal: the one-line progress and the step tables instead.",
)
@click.option("--fail-on-sla", is_flag=True, help="Exit 1 when a step misses its SLA.")
@click.option("--strict", is_flag=True, help="Exit 1 when a step is inconclusive.")
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Run the whole sweep N times (repeat-1 ... repeat-N in the results directory) "
    "and report the run-to-run spread of each step.",
)
@click.option(
    "--usd-per-hour",
    type=click.FloatRange(min=0, min_open=True),
    help="Override cost.usd_per_hour.",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="local|auto|ADDRESS",
    help="Run the workers as Ray actors: `local` (a private Ray instance), `auto` (the "
    "cluster Ray finds) or a cluster address; needs loadgen[ray] (docs/scale.md).",
)
@click.option(
    "--serve-metrics",
    metavar="[HOST:]PORT",
    help="Serve loadgen's own client metrics for Prometheus on /metrics while the run "
    "lasts (sets telemetry.serve_metrics; a bare port binds 127.0.0.1; docs/prometheus.md).",
)
@click.option(
    "--serve-metrics-token-env",
    metavar="NAME",
    help="Require 'Authorization: Bearer <$NAME>' on /metrics (needed beyond loopback; "
    "sets telemetry.serve_metrics_token_env).",
)
@click.option(
    "--serve-metrics-linger",
    type=click.FloatRange(min=0, max=3600),
    metavar="S",
    help="Keep serving the metrics S seconds after the last step, so a scraper reads the "
    "final counts (sets telemetry.serve_metrics_linger_s).",
)
@click.option(
    "--metrics-profile",
    type=click.Choice(PROFILE_NAMES),
    default="loadgen",
    show_default=True,
    help="Whose metric definitions the summary uses (docs/metrics.md).",
)
@click.option(
    "--mlflow",
    "mlflow_uri",
    is_flag=False,
    flag_value=MLFLOW_DEFAULT,
    metavar="[URI]",
    help=MLFLOW_HELP,
)
def run(
    scenario: Path | None,
    out_dir: Path | None,
    quiet: bool,
    no_live: bool,
    fail_on_sla: bool,
    strict: bool,
    metrics_profile: str,
    ray_address: str | None,
    repeat: int,
    replace: bool,
    mlflow_uri: str | None,
    **flags: Any,
) -> None:
    """Run the SCENARIO file's sweep and write a results directory.

    Without a SCENARIO, --url alone runs the default sweep: the chat API
    (--api), 512-token prompts (--prompt-tokens), answers of at most 128
    tokens (--output-tokens), 1, 4, 16 and 64 concurrent users
    (--concurrency, or --rate), 100 requests a step (--requests, or
    --duration), the model the server lists (--model). The flags override a
    file's fields too. The results directory keeps the resolved scenario
    (scenario.yaml, no secrets): `loadgen run RESULTS/scenario.yaml` repeats
    the run.

    Each step's table goes to stdout, its warnings and errors (with a hint
    where the cause is known) to stderr; the last lines are the verdict and
    the results path.

    \b
    Examples:
      loadgen run --url http://127.0.0.1:8000 --model my-model
      loadgen run --url http://127.0.0.1:8000 --rate 2,4,8 --prompt-tokens 1024
      loadgen run scenarios/demo.yaml
      loadgen run my-endpoint.yaml --rate 2,4,8 --requests 300 --fail-on-sla
      loadgen run scenarios/demo.yaml --mlflow=sqlite:///mlflow.db
      loadgen run my-endpoint.yaml --serve-metrics 9348 --serve-metrics-linger 15
    """
    from loadgen.clock import anchor
    from loadgen.run import Judging, RunOptions, run_judged, run_repeats

    check_mlflow_value(mlflow_uri)  # before the scenario: `--mlflow s.yaml` took its file
    sc = _scenario(scenario, flags)
    if out_dir is None:
        import time

        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(anchor().wall_ns / 1e9))
        out_dir = Path("results") / f"{sc.name}-{stamp}"
    signals: list[int] = []
    if ray_address is not None and not ray_address.strip():
        raise ScenarioError("command line: --ray: expected local, auto or a cluster address")
    opts = RunOptions(
        out_dir=out_dir,
        quiet=quiet,
        metrics_profile=metrics_profile,
        on_signal=signals.append,
        ray=ray_address,
        replace=replace,
        live=False if no_live else None,
    )

    first = lambda: signals[0] if signals else None  # noqa: E731
    how = Judging(fail_on_sla, strict, signum=first, say=click.echo)
    with mlflow_logging(mlflow_uri, sc.name, out_dir, click.echo):
        if repeat > 1:
            run_repeats(sc, opts, repeat, how)
        else:
            run_judged(sc, opts, how)


@cli.command(short_help="Show what a scenario would send, without sending.")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--url", metavar="URL", help="Override target.url; without SCENARIO: as `run`.")
@click.option("--model", help="Override target.model.")
@click.option("--api", type=click.Choice(API_NAMES), help="Override target.api.")
@_sweep_options
def workload(scenario: Path | None, **flags: Any) -> None:
    """Print what the SCENARIO would send, step by step, without sending anything.

    Request counts, prompt and output length percentiles with a histogram,
    total tokens, shared prefixes and sessions, and the arrival-rate profile
    of open-loop and trace steps. Needs no server (prompt lengths are then
    the tokenizer's or the word approximation, never the server's). Then, per
    step, the SLA percentile bounds its requests cannot decide at
    sla.confidence (and how many could), and estimates of each step's length
    and the run's: from the mock's timing model for url mock, else from the
    SLA bounds.

    Without SCENARIO, what `loadgen run --url URL` with the same flags would send.

    \b
    Examples:
      loadgen workload scenarios/demo.yaml
      loadgen workload --url mock --rate 2,4
    """
    from loadgen.forecast import forecast_report
    from loadgen.scenario import TraceLoad
    from loadgen.workload import Workload

    sc = _scenario(scenario, flags)
    trace = sc.load if isinstance(sc.load, TraceLoad) else None
    prepared = Workload.prepare(
        sc.workload, chat=sc.target.chat, trace=trace, models=sc.target.mix, api=sc.target.api
    )
    click.echo(forecast_report(sc, prepared))


cli.add_command(init)
cli.add_command(calibrate)
cli.add_command(mock)
cli.add_command(agent)
cli.add_command(export)
register_output_commands(cli)


def main(argv: list[str] | None = None) -> None:
    """Entry point: one line on stderr for any error loadgen expects, and its class's exit code.

    stdout and stderr drop what a closed pipe or a hung-up terminal cannot take
    (:func:`loadgen.stdio.tolerant_stdio`): the run's files are written regardless.
    """
    with tolerant_stdio():
        _main(argv)


def _main(argv: list[str] | None) -> None:
    try:
        cli.main(args=argv, prog_name="loadgen", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(Interrupted.exit_code)
    except click.ClickException as exc:
        click.echo(f"loadgen: {exc.format_message()}", err=True)
        sys.exit(ScenarioError.exit_code)
    except LoadgenError as exc:
        click.echo(redact_text(f"loadgen: {exc}"), err=True)  # it may quote a server
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(Interrupted.exit_code)
