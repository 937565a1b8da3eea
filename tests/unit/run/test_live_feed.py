"""Which display a run gets: the live view only on a terminal, outside CI, without -q, --no-live."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from loadgen.report.terminal.live import LiveView
from loadgen.report.terminal.progress import Progress
from loadgen.run.live_feed import make_display
from loadgen.run.options import RunOptions
from loadgen.scenario.models import Scenario


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("tty", "ci", "quiet", "live", "expected"),
    [
        (True, None, False, None, LiveView),
        (True, "true", False, None, Progress),  # a CI log wants plain lines
        (True, "1", False, None, Progress),
        (True, "false", False, None, LiveView),
        (True, None, True, None, Progress),  # -q
        (True, None, False, False, Progress),  # --no-live
        (False, None, False, None, Progress),  # a pipe
    ],
)
def test_the_display_of_a_run(
    monkeypatch: pytest.MonkeyPatch,
    tty: bool,
    ci: str | None,
    quiet: bool,
    live: bool | None,
    expected: type,
) -> None:
    monkeypatch.setattr("sys.stdout", Tty() if tty else io.StringIO())
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    opts = RunOptions(out_dir=Path("unused"), quiet=quiet, live=live)
    display = make_display(
        Scenario.model_validate(
            {"load": {"mode": "concurrency", "concurrency": [1, 2], "requests_per_step": 4}}
        ),
        opts,
        2,
    )
    assert type(display) is expected
    if isinstance(display, Progress):
        assert display.enabled is (tty and not quiet)  # the progress line as before
