"""``loadgen report`` and ``loadgen compare``, added to the group from where they live.

The commands are :mod:`loadgen.report.commands`' (beside the outputs they
write); ``report`` is wrapped so that a results directory without
summary.json (a run killed before its first step ended) has it rebuilt from
its records first (loadgen.results.rebuild, which the outputs never import).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from loadgen.errors import OutputError

__all__ = ["register_output_commands"]


def register_output_commands(cli: click.Group) -> None:
    """`loadgen report` and `loadgen compare` live with the outputs they write."""
    try:
        from loadgen.report import compare, report  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # not built yet
        return
    report.short_help = "Rewrite a results directory's reports and plots."
    compare.short_help = "Compare runs, and gate a regression with --fail-if."
    cli.add_command(_rebuilding(report))
    cli.add_command(compare)


def _rebuilding(report: click.Command) -> click.Command:
    """``loadgen report DIR``: first rebuild a missing summary.json from the records.

    Only a run killed before its first step ended lacks one; the rebuild needs
    the results stage (loadgen.results.rebuild), which the outputs never import.
    """
    inner = report.callback
    assert inner is not None

    @functools.wraps(inner)
    def callback(results_dir: Path, **kwargs: Any) -> Any:
        import warnings

        from loadgen.records import DamagedRecords
        from loadgen.results import PROFILE, can_rebuild, rebuild_summary, write_summary

        if can_rebuild(results_dir):
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
        return inner(results_dir, **kwargs)

    report.callback = callback
    return report
