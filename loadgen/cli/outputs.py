"""``loadgen report`` and ``loadgen compare``: thin click commands over the outputs.

``report`` rewrites a results directory's files (loadgen.report.documents.writer);
a directory without summary.json (a run killed before its first step ended) has
it rebuilt from its records first (loadgen.results.rebuild, which the outputs
never import). ``compare`` loads the runs, has loadgen.compare judge them and
loadgen.report write the comparison. Imported by loadgen.cli at start-up, so
this module imports only click and loadgen.errors at the top; everything else
is imported inside the commands. Bad input (a missing results dir, no
summary.json, a bad --fail-if) is a ScenarioError: one line on stderr and exit
2. A regression found by the gate is a Regression (exit 1); loadgen.cli maps
both. Damaged rows of a records.jsonl are skipped and counted: one line per
file on stderr.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path

import click

from loadgen.errors import OutputError, Regression, ScenarioError

__all__ = ["compare", "register_output_commands", "report"]


def register_output_commands(cli: click.Group) -> None:
    """Add ``loadgen report`` and ``loadgen compare`` to the group."""
    cli.add_command(report)
    cli.add_command(compare)


def _rebuild_summary(results_dir: Path) -> None:
    """A results directory without summary.json: rebuild it from the records first.

    Only a run killed before its first step ended lacks one (said on stderr).
    """
    from loadgen.records import DamagedRecords
    from loadgen.results import PROFILE, can_rebuild, rebuild_summary, write_summary

    if not can_rebuild(results_dir):
        return
    with warnings.catch_warnings():  # the report reads the same rows and says it
        warnings.simplefilter("ignore", DamagedRecords)
        summary = rebuild_summary(results_dir)
    try:
        write_summary(summary, results_dir / "summary.json")
    except OSError as exc:
        msg = f"{results_dir}: cannot write there: {exc.strerror or exc}"
        raise OutputError(msg) from None
    click.echo(
        f"{results_dir}: no summary.json: rebuilt it from records.jsonl and "
        f"scenario.yaml (run marked interrupted, metrics profile {PROFILE})",
        err=True,
    )


@click.command(short_help="Rewrite a results directory's reports and plots.")
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=Path))
def report(results_dir: Path) -> None:
    """Rebuild steps.csv, report.md, report.html and plots/ of RESULTS_DIR from its saved files.

    A run killed before its first step ended has no summary.json: it is first
    rebuilt from records.jsonl and the resolved scenario.yaml (said on stderr).

    \b
    Example:
      loadgen report results/baseline
    """
    from loadgen.report import write_reports

    _rebuild_summary(results_dir)
    try:
        with _damaged_rows_said():
            written = write_reports(results_dir)
    except OSError as exc:
        raise _unwritable(results_dir, exc) from None
    for path in written:
        click.echo(path)


@click.command(short_help="Compare runs, and gate a regression with --fail-if.")
@click.argument("runs", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the overlay plots and comparison.md (default: compare-<names>/ "
    "beside the first run).",
)
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="EXPR",
    help='Exit 1 when the last run is worse than the first, e.g. "ttft_ms.p99 > +10%" '
    "(repeatable; see docs/reports.md).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed."
)
@click.option(
    "--resamples",
    type=click.IntRange(100, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option(
    "--allow-profile-mismatch",
    is_flag=True,
    help="Compare runs made under different --metrics-profile (the gate then has no "
    "significance test: the point estimates decide).",
)
@click.option(
    "--allow-workload-mismatch",
    is_flag=True,
    help="Compare runs whose workloads differ (prompt or output lengths, arrivals, seed, "
    "api, dataset); each difference is then a warning.",
)
def compare(
    runs: tuple[Path, ...],
    out_dir: Path | None,
    fail_if: tuple[str, ...],
    seed: int,
    resamples: int,
    allow_profile_mismatch: bool,
    allow_workload_mismatch: bool,
) -> None:
    """Compare RUN_A RUN_B [RUN_C ...] (results dirs; the first is the baseline).

    The first lines say each --fail-if gate's conclusion; then each step's
    check, the environments side by side, the tables, and the folder written
    (beside the first run). Runs whose workloads differ are refused (exit 2)
    unless --allow-workload-mismatch; different GPUs or drivers are a warning.

    \b
    Example:
      loadgen compare results/fp16 results/int8 --fail-if "ttft_ms.p99 > +10%"
    """
    from loadgen.compare import (
        check_workloads,
        conclusions,
        default_out_dir,
        load_runs,
        matched_steps,
        parse_gate,
        run_gates,
    )
    from loadgen.redact import warn
    from loadgen.report import (
        best_lines,
        compare_fronts,
        comparison_tables,
        environment_table,
        format_table,
        hardware_warnings,
        write_comparison,
    )

    if len(runs) < 2:
        raise ScenarioError("compare: give at least two results dirs (the first is the baseline)")
    gates = [parse_gate(text) for text in fail_if]
    with _damaged_rows_said():
        loaded = load_runs(runs, allow_profile_mismatch=allow_profile_mismatch)
    lines = check_workloads(loaded, allow_mismatch=allow_workload_mismatch)
    for line in [*lines, *hardware_warnings(loaded)]:
        warn(line)
    results = run_gates(gates, loaded, seed=seed, resamples=resamples)
    out = out_dir or default_out_dir(loaded)
    try:
        write_comparison(loaded, out, results)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    if results:
        click.echo("\n".join(conclusions(results)) + "\n")
        click.echo("\n".join(r.message() for r in results) + "\n")
    env_table, flagged = environment_table(loaded)
    click.echo(format_table(env_table))  # its header row is its title: "environment"
    if flagged:
        click.echo(f"differs: {', '.join(flagged)}")
    click.echo("")
    for title, table in comparison_tables(loaded):
        click.echo(f"{title}\n{format_table(table)}\n")
    views = compare_fronts([r.summary for r in loaded])
    if any(v.points for v in views):  # each run's best point under the SLA, named
        click.echo("\n".join(best_lines([r.name for r in loaded], views)) + "\n")
    click.echo(f"comparison: {out}")
    if gates and not matched_steps([loaded[0], loaded[-1]]):
        raise Regression("regression gate: the first and last runs share no load value")
    failed = [r for r in results if r.failed]
    if failed:
        raise Regression(f"regression: {len(failed)} gate check(s) failed")


@contextlib.contextmanager
def _damaged_rows_said() -> Iterator[None]:
    """Say each file's count of skipped records.jsonl rows once on stderr (however often read)."""
    from loadgen.records import DamagedRecords

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedRecords)
        try:
            yield
        finally:
            said: dict[str, str] = {}
            for w in caught:
                if isinstance(w.message, DamagedRecords):
                    said[str(w.message.path)] = str(w.message)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            for line in said.values():
                click.echo(f"warning: {line}", err=True)


def _unwritable(folder: Path, exc: OSError) -> OutputError:
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
    return OutputError(f"{folder}: cannot write there{where}: {exc.strerror or exc}")
