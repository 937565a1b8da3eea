"""The command line: thin commands over the library.

Bad input of any kind is one line on stderr and exit 2; a run that completed
exits 0 whatever the server did, 1 with ``--fail-on-sla`` when a step missed
its SLA, 130 when interrupted (a partial report is still written).

Imports: click, loadgen.* (heavy modules lazily, so ``--help`` is fast).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from loadgen.errors import LoadgenError, ScenarioError, TargetError

if TYPE_CHECKING:
    from loadgen.scenario.load import Overrides

__all__ = ["cli", "main"]

EXIT_SLA_MISSED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loadgen")
def cli() -> None:
    """loadgen: exact load generation and benchmarking for LLM inference servers."""


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Results directory (default: results/<name>-<time>).",
)
@click.option("--url", help="Override target.url (a base URL, or `mock`).")
@click.option("--model", help="Override target.model.")
@click.option("--api", help="Override target.api.")
@click.option("--concurrency", help="Closed-loop sweep, e.g. 1,2,4,8 (sets load.mode).")
@click.option("--rate", help="Open-loop sweep in requests/s, e.g. 1,2,4 (sets load.mode).")
@click.option("--requests", type=str, help="Override load.requests_per_step.")
@click.option("--duration", type=str, help="Override load.duration_s (seconds per step).")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no step tables.")
@click.option("--fail-on-sla", is_flag=True, help="Exit 1 when a step misses its SLA.")
@click.option("--usd-per-hour", type=str, help="Override cost.usd_per_hour.")
@click.option(
    "--metrics-profile",
    type=click.Choice(["loadgen", "vllm", "aiperf", "guidellm"]),
    default="loadgen",
    show_default=True,
    help="Whose metric definitions the summary uses (docs/metrics.md).",
)
def run(
    scenario: Path,
    out_dir: Path | None,
    quiet: bool,
    fail_on_sla: bool,
    metrics_profile: str,
    **flags: str | None,
) -> None:
    """Run the SCENARIO file's sweep and write a results directory."""
    from loadgen.clock import anchor
    from loadgen.runner.run import RunOptions, run_scenario
    from loadgen.scenario import load_scenario

    sc = load_scenario(scenario, _overrides(flags))
    if out_dir is None:
        import time

        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(anchor().wall_ns / 1e9))
        out_dir = Path("results") / f"{sc.name}-{stamp}"
    opts = RunOptions(out_dir=out_dir, quiet=quiet, metrics_profile=metrics_profile)
    summary = run_scenario(sc, opts)
    missed = [s.index for s in summary.steps if not s.sla.passed]
    if summary.interrupted:
        click.echo(f"interrupted: partial results in {out_dir}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if not quiet:
        click.echo(f"results: {out_dir}")
    if fail_on_sla and missed:
        click.echo(f"SLA missed at step(s) {missed}", err=True)
        sys.exit(EXIT_SLA_MISSED)


@cli.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--concurrency", help="Closed-loop sweep, e.g. 1,2,4,8 (sets load.mode).")
@click.option("--rate", help="Open-loop sweep in requests/s, e.g. 1,2,4 (sets load.mode).")
@click.option("--requests", type=str, help="Override load.requests_per_step.")
@click.option("--duration", type=str, help="Override load.duration_s (seconds per step).")
def workload(scenario: Path, **flags: str | None) -> None:
    """Print what the SCENARIO would send, step by step, without sending anything.

    Request counts, prompt and output length percentiles with a histogram,
    total tokens, shared prefixes and sessions, and the arrival-rate profile
    of open-loop and trace steps. Needs no server (prompt lengths are then
    the tokenizer's or the word approximation, never the server's).

    Example: loadgen workload scenarios/demo.yaml
    """
    from loadgen.scenario import load_scenario
    from loadgen.scenario.models import TraceLoad
    from loadgen.workload.describe import workload_report
    from loadgen.workload.source import Workload

    sc = load_scenario(scenario, _overrides(flags))
    trace = sc.load if isinstance(sc.load, TraceLoad) else None
    prepared = Workload.prepare(sc.workload, chat=sc.target.api == "openai-chat", trace=trace)
    click.echo(workload_report(sc, prepared))


def _overrides(flags: dict[str, str | None]) -> Overrides:
    """The fields each given flag sets (validated with the scenario, so errors name the flag)."""
    from loadgen.scenario import split_list
    from loadgen.scenario.load import DROP

    if flags.get("concurrency") and flags.get("rate"):
        raise ScenarioError("command line: give only one of --concurrency and --rate")
    out: dict[str, dict[tuple[str, ...], Any]] = {}
    for flag, path in (("url", "url"), ("model", "model"), ("api", "api")):
        if flags.get(flag):
            out[f"--{flag}"] = {("target", path): flags[flag]}
    if c := flags.get("concurrency"):
        values = split_list("--concurrency", c, int)
        fields: dict[tuple[str, ...], Any] = {
            ("load", f): DROP for f in (*_RATE_ONLY, *_TRACE_ONLY, "rate")
        }
        out["--concurrency"] = {
            **fields,
            ("load", "concurrency"): values,
            ("load", "mode"): "concurrency",
        }
    if r := flags.get("rate"):
        drop: dict[tuple[str, ...], Any] = {
            ("load", f): DROP for f in (*_TRACE_ONLY, "concurrency")
        }
        out["--rate"] = {
            **drop,
            ("load", "rate"): split_list("--rate", r, float),
            ("load", "mode"): "rate",
        }
    if (n := flags.get("requests")) is not None:
        out["--requests"] = {("load", "requests_per_step"): n, ("load", "duration_s"): None}
    if (d := flags.get("duration")) is not None:
        out["--duration"] = {("load", "duration_s"): d, ("load", "requests_per_step"): None}
    if (usd := flags.get("usd_per_hour")) is not None:
        out["--usd-per-hour"] = {("cost", "usd_per_hour"): usd}
    return out


#: load fields of one mode, dropped when a flag switches the mode
_RATE_ONLY = ("arrival", "burstiness", "max_concurrency", "auto_points", "probe_concurrency")
_TRACE_ONLY = ("trace", "trace_format", "time_scale", "window_s")


_PASSTHROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


@cli.command(context_settings=_PASSTHROUGH, add_help_option=False)
@click.pass_context
def mock(ctx: click.Context) -> None:
    """Serve the built-in mock inference engine (`loadgen mock --help` for its flags)."""
    from loadgen.mock import main as mock_main

    sys.exit(mock_main(list(ctx.args)))


@cli.command(context_settings=_PASSTHROUGH, add_help_option=False)
@click.pass_context
def agent(ctx: click.Context) -> None:
    """Run the GPU telemetry sidecar (`loadgen agent --help` for its flags)."""
    from loadgen.agent import main as agent_main

    sys.exit(agent_main(list(ctx.args)))


def _register_output_commands() -> None:
    """`loadgen report` and `loadgen compare` live with the outputs they write."""
    try:
        from loadgen.report.commands import compare, report  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # not built yet
        return
    cli.add_command(report)
    cli.add_command(compare)


_register_output_commands()


def main(argv: list[str] | None = None) -> None:
    """Entry point: one line on stderr for any error loadgen expects."""
    try:
        cli.main(args=argv, prog_name="loadgen", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        click.echo(f"loadgen: {exc.format_message()}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except ScenarioError as exc:
        click.echo(f"loadgen: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except TargetError as exc:
        click.echo(f"loadgen: {exc}", err=True)
        sys.exit(1)
    except LoadgenError as exc:
        click.echo(f"loadgen: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
