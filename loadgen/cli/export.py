"""``loadgen export DIR`` and what ``loadgen run --mlflow`` does around its run.

The work is :mod:`loadgen.export`'s; here are the command, its options and the
lines it prints. Each of ``--parquet [OUT]`` and ``--mlflow [URI]`` takes an
optional value: given bare (or last), the default applies.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from loadgen.errors import ScenarioError

__all__ = ["MLFLOW_DEFAULT", "MLFLOW_HELP", "check_mlflow_value", "export", "mlflow_logging"]

#: the same words on ``run --mlflow`` and ``export --mlflow``
MLFLOW_HELP = (
    "Log the results as an MLflow run: parameters, per-step metrics, verdict tags, "
    "reports as artifacts (needs loadgen[mlflow]; URI default: MLFLOW_TRACKING_URI or "
    "MLflow's own; give it as --mlflow=URI or after the other arguments; docs/export.md)."
)

#: the value of --mlflow / --parquet given without one
MLFLOW_DEFAULT = _DEFAULT = "\0default"


def _value(given: str | None) -> str | None:
    return None if given in (None, _DEFAULT) else given


#: suffixes of a scenario file: a --mlflow value with one is a misplaced SCENARIO
_SCENARIO_SUFFIXES = (".yaml", ".yml")


def check_mlflow_value(given: str | None) -> None:
    """Refuse a ``--mlflow`` value that is a local file, or looks like a scenario file.

    ``loadgen run --mlflow s.yaml`` gives click ``s.yaml`` as the option's value
    (it takes one): MLflow would then try a folder store named ``s.yaml``. A
    tracking store is a folder, a ``file:`` folder or a URI (``sqlite:///runs.db``
    names a file, through its scheme, and is not refused).
    """
    value = _value(given)
    if value is None or ("://" in value and not value.startswith("file:")):
        return
    local = value.removeprefix("file://") if value.startswith("file://") else value
    local = local.removeprefix("file:")
    path = Path(local)
    if path.is_file():
        why = "is a file, not a tracking store"
    elif path.suffix.lower() in _SCENARIO_SUFFIXES:
        why = "looks like a scenario file, not a tracking store"
    else:
        return
    msg = (
        f"--mlflow {value}: {why}: the option takes the next word as its URI; write "
        "--mlflow=URI, or put --mlflow after the other arguments (docs/export.md)"
    )
    raise ScenarioError(msg)


@click.command(short_help="Write a results directory as Parquet files, or log it to MLflow.")
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--parquet",
    "parquet_out",
    is_flag=False,
    flag_value=_DEFAULT,
    metavar="[OUT]",
    help="Write records, steps and telemetry as typed Parquet files into OUT "
    "(default RESULTS_DIR/parquet; needs loadgen[parquet]).",
)
@click.option(
    "--mlflow", "mlflow_uri", is_flag=False, flag_value=_DEFAULT, metavar="[URI]", help=MLFLOW_HELP
)
def export(results_dir: Path, parquet_out: str | None, mlflow_uri: str | None) -> None:
    """Export RESULTS_DIR (a run's folder, or a --repeat folder) to other stores.

    With both options the Parquet files are written first and logged with the
    run's artifacts.

    \b
    Examples:
      loadgen export results/demo-20261201-1200 --parquet
      loadgen export results/demo-20261201-1200 --mlflow=sqlite:///mlflow.db
    """
    check_mlflow_value(mlflow_uri)
    if parquet_out is None and mlflow_uri is None:
        raise ScenarioError("export: nothing to do: give --parquet [OUT] and/or --mlflow [URI]")
    if not results_dir.is_dir():
        raise ScenarioError(f"results dir {str(results_dir)!r}: not a directory")
    if parquet_out is not None:
        from loadgen.export import write_parquet
        from loadgen.records import DamagedRecords

        out = _value(parquet_out)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", DamagedRecords)
            written = write_parquet(results_dir, Path(out) if out else None)
        for w in said:
            click.echo(f"warning: {w.message}", err=True)
        for path in written:
            click.echo(path)
    if mlflow_uri is not None:
        from loadgen.export import open_tracking
        from loadgen.results import load_summary

        name = _experiment_name(results_dir, load_summary)
        tracker = open_tracking(_value(mlflow_uri), name)
        click.echo(_logged(tracker.uri, tracker.log(results_dir)))


def _experiment_name(results_dir: Path, load: Callable[[Path], object]) -> str:
    from loadgen.export import repeat_folders

    folder = results_dir
    if not (folder / "summary.json").is_file() and (repeats := repeat_folders(folder)):
        folder = repeats[0]
    return str(getattr(load(folder), "name", "loadgen"))


def _logged(uri: str, run_ids: list[str]) -> str:
    more = f" (and {len(run_ids) - 1} repeat runs)" if len(run_ids) > 1 else ""
    return f"mlflow: run {run_ids[0]}{more} in {uri}"


@contextlib.contextmanager
def mlflow_logging(
    uri: str | None, experiment: str, out_dir: Path, say: Callable[[str], None]
) -> Iterator[None]:
    """``loadgen run --mlflow``: the store opened before the run, the results logged after.

    A run that ends in an error after writing its summary (an SLA missed, Ctrl-C)
    is still logged; a run that wrote none (a refused folder, a target that could
    not be set up) is not, and an older run's files left there are never taken for
    it. If the log of a failed run fails too, a warning says so and the run's own
    error stands.
    """
    if uri is None:
        yield
        return
    from loadgen.export import open_tracking

    tracker = open_tracking(_value(uri), experiment)
    before = _summary_stamps(out_dir)
    try:
        yield
    except BaseException:
        if _summary_stamps(out_dir) not in (before, (None, None)):
            try:
                say(_logged(tracker.uri, tracker.log(out_dir)))
            except Exception as exc:
                click.echo(f"warning: {exc}", err=True)
        raise
    say(_logged(tracker.uri, tracker.log(out_dir)))


def _summary_stamps(out_dir: Path) -> tuple[int | None, int | None]:
    """When the run's summary.json (or its first repeat's) was last written, if it is there."""
    stamps: list[int | None] = []
    for path in (out_dir / "summary.json", out_dir / "repeat-1" / "summary.json"):
        try:
            stamps.append(path.stat().st_mtime_ns)
        except OSError:
            stamps.append(None)
    return stamps[0], stamps[1]
