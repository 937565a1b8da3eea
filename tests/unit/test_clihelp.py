"""`loadgen mock --help` and `loadgen agent --help` read like the click commands' help."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.cli import main
from loadgen.clihelp import ClickStyleParser, click_help
from loadgen.gpu_agent.cli import build_parser as agent_parser
from loadgen.mock.config import build_parser as mock_parser

ROOT = Path(__file__).resolve().parents[2]


def help_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert not exc.value.code
    return capsys.readouterr().out


def check_click_layout(text: str, prog: str) -> None:
    lines = text.splitlines()
    assert lines[0] == f"Usage: {prog} [OPTIONS]" and lines[1] == ""
    assert lines[2].startswith("  ") and not lines[2].startswith("   ")  # the description
    assert "\nOptions:\n  --" in text
    options = text[text.index("\nOptions:\n") + 1 :].splitlines()[1:]
    assert all(line == "" or line.startswith("  ") or line.endswith(":") for line in options)
    assert "  -h, --help" in text and "Show this message and exit." in text
    assert "usage:" not in text and "show this help message" not in text  # argparse's
    assert max(len(line) for line in lines) <= 80
    # help beside each option starts in one column, as click aligns it
    starts = {m.start(2) for m in re.finditer(r"^(  --\S+(?: \S+)?  +)(\S)", text, re.M)}
    assert len({s - text.rfind("\n", 0, s) for s in starts}) == 1


def test_mock_help_is_click_styled(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(["mock", "--help"], capsys)
    check_click_layout(text, "loadgen mock")
    assert "  --port INTEGER " in text and "  --step-base-ms FLOAT " in text
    assert "  --profile [a100-llama8b|h200-llama70b|tiny-cpu]\n" in text  # too wide: help below
    assert "\nFixed mode:\n  --ttft-ms FLOAT " in text
    assert re.search(r"Examples:\n    loadgen mock --port 8000", text)


def test_agent_help_is_click_styled(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(["agent", "--help"], capsys)
    check_click_layout(text, "loadgen agent")
    assert "  --interval-ms FLOAT " in text
    assert "fake-nvml" not in text  # hidden: tests and benchmarks only


def test_the_mock_alone_prints_the_same_help() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    alone = subprocess.run(
        [sys.executable, "-m", "loadgen.mock", "--help"],
        capture_output=True, text=True, env=env, check=True, timeout=60,
    )  # fmt: skip
    assert alone.stdout.startswith("Usage: loadgen mock [OPTIONS]\n")
    assert alone.stdout == click_help(mock_parser(), width=78)


def test_usage_errors_stay_one_line() -> None:
    for parser in (mock_parser(), agent_parser()):
        assert type(parser).__name__ == "ClickStyleParser"  # the package's own copy
        assert parser.format_usage() == f"Usage: {parser.prog} [OPTIONS]\n"


def test_long_help_wraps_beside_its_option_and_defaults_expand() -> None:
    p = ClickStyleParser(prog="x", description="One.\n\nTwo.")
    p.add_argument("--n", type=int, default=3, help="how many " * 12 + "(default %(default)s)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--secret", help=argparse.SUPPRESS)
    text = click_help(p, width=60)
    assert text.startswith("Usage: x [OPTIONS]\n\n  One.\n\n  Two.\n\nOptions:\n")
    rows = text[text.index("Options:\n") + 9 :].splitlines()
    assert rows[0].startswith("  --n INTEGER  How many how many")  # 2 past the widest
    assert all(r.startswith(" " * 15 + "how") for r in rows[1:3])
    assert "(default 3)." in text and "  --quiet\n" in text and "secret" not in text
