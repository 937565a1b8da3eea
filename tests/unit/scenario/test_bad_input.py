"""Every kind of bad input: one line on stderr naming file, field and expectation; exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loadgen.cli import main

GOOD = """
name: t
target: {url: "http://127.0.0.1:9", api: openai-chat, model: m}
workload:
  seed: 0
  prompt_tokens: {dist: fixed, value: 8}
  output_tokens: {dist: uniform, min: 2, max: 4}
load: {mode: concurrency, concurrency: [1, 2], requests_per_step: 4}
sla: {ttft_ms: {p99: 500}}
"""

BAD = {
    "yaml syntax": ("load: {concurrency: [1, 2", "YAML syntax error at line 1"),
    "unknown key": (GOOD + "colour: blue\n", "colour: unknown field"),
    "unknown nested key": (
        GOOD.replace("model: m}", "model: m, modle: x}"),
        "target.modle: unknown field",
    ),
    "wrong type": (
        GOOD.replace("requests_per_step: 4", "requests_per_step: many"),
        "load.requests_per_step: Input should be a valid integer",
    ),
    "negative value": (
        GOOD.replace("concurrency: [1, 2]", "concurrency: [1, 2, -4]"),
        "load.concurrency[2]: Input should be greater than or equal to 1",
    ),
    "empty sweep": (
        GOOD.replace("concurrency: [1, 2]", "concurrency: []"),
        "load.concurrency: List should have at least 1 item",
    ),
    "unknown api": (
        GOOD.replace("api: openai-chat", "api: grpc"),
        "target.api: Input should be 'openai-completions', 'openai-chat', 'tgi', ",
    ),
    "server-state sessions on a chat API": (
        GOOD.replace("  seed: 0\n", "  seed: 0\n  sessions: {state: server}\n"),
        "workload.sessions.state server chains previous_response_id: it needs target.api "
        "openai-responses, not openai-chat",
    ),
    "unknown distribution": (
        GOOD.replace("dist: fixed, value: 8", "dist: zipf, value: 8"),
        "workload.prompt_tokens: Input tag 'zipf'",
    ),
    "min above max": (
        GOOD.replace("min: 2, max: 4", "min: 5, max: 4"),
        "workload.output_tokens: max (4) must be >= min (5)",
    ),
    "missing load": ("name: x\n", "load: required field is missing"),
    "not a mapping": ("- 1\n- 2\n", "expected a mapping of scenario fields, got list"),
    "session bound without sessions": (
        GOOD.replace("sla: {ttft_ms: {p99: 500}}", "sla: {session_s: {p90: 30}}"),
        "sla.session_s.p90: 30 bounds session time, but the workload makes no sessions: "
        "add workload.sessions (or an agent workload), or drop sla.session_s",
    ),
    "session bound not positive": (
        GOOD.replace("sla: {ttft_ms: {p99: 500}}", "sla: {session_s: {p50: 0}}"),
        "sla.session_s.p50: Input should be greater than 0",
    ),
    "sla out of range": (
        GOOD.replace("sla: {ttft_ms: {p99: 500}}", "sla: {max_error_rate: 2}"),
        "sla.max_error_rate: Input should be less than or equal to 1",
    ),
    "both lengths": (
        GOOD.replace("requests_per_step: 4", "requests_per_step: 4, duration_s: 3"),
        "load: give only one of `requests_per_step` and `duration_s`",
    ),
    "ca file not PEM": (
        GOOD.replace("model: m}", f"model: m, tls: {{ca_file: {__file__}}}}}"),
        "holds no PEM certificate",
    ),
    "url without scheme": (
        GOOD.replace('"http://127.0.0.1:9"', "127.0.0.1:8000"),
        "target.url: expected http[s]://host[:port][/base-path] or mock: the scheme",
    ),
    "url with a query": (
        GOOD.replace('"http://127.0.0.1:9"', '"http://127.0.0.1:9/?key=1"'),
        "target.url: expected http[s]://host[:port][/base-path] or mock: a base URL takes no query",
    ),
    "url without host": (
        GOOD.replace('"http://127.0.0.1:9"', '"http:///v1"'),
        "target.url: expected http[s]://host[:port][/base-path] or mock: no host",
    ),
    "model missing for a real server": (
        GOOD.replace(", model: m}", "}"),
        "target: target.model is required unless target.url is mock",
    ),
    "url and urls": (
        GOOD.replace("model: m}", 'model: m, urls: ["http://127.0.0.1:10"]}'),
        "target: give target.url (one server) or target.urls (replicas), not both",
    ),
    "bad url in urls": (
        GOOD.replace('url: "http://127.0.0.1:9"', 'urls: ["http://127.0.0.1:9", "h:1"]'),
        "target.urls[1]: expected http[s]://host[:port][/base-path]: the scheme",
    ),
    "missing ca file": (
        GOOD.replace("model: m}", "model: m, tls: {ca_file: /nonexistent/ca.pem}}"),
        "target.tls.ca_file: CA file /nonexistent/ca.pem: no such file; expected a PEM file",
    ),
}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    return int(exc.value.code or 0), err


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenario_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = BAD[case]
    path = tmp_path / "s.yaml"
    path.write_text(text)
    code, err = run_cli(["run", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    assert expected in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--concurrency", "1,x"], "--concurrency: expected comma-separated integers"),
        (["--concurrency", "1,0"], "command line --concurrency: load.concurrency[1]"),
        (
            ["--rate", "0"],
            "command line --rate: load.rate[0]: Input should be greater than or equal to 0.000001",
        ),
        # typed flags: click checks them before the scenario is read
        (["--requests", "-1"], "Invalid value for '--requests': -1 is not in the range x>=1"),
        (["--duration", "0"], "Invalid value for '--duration': 0.0 is not in the range x>0"),
        (["--api", "soap"], "Invalid value for '--api': 'soap' is not one of 'openai-completions'"),
        (["--concurrency", "1", "--rate", "2"], "give only one of --concurrency and --rate"),
        (
            ["--workers", "abc"],
            "command line --workers: load.workers: expected an integer from 1 to 256, or auto",
        ),
        (["--workers", "0"], "command line --workers: load.workers: expected an integer"),
        (["--repeat", "0"], "Invalid value for '--repeat'"),
        (["--ray", " "], "--ray: expected local, auto or a cluster address"),
    ],
)
def test_bad_overrides(
    flags: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD)
    code, err = run_cli(["run", str(path), *flags], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert expected in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["run", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2
    assert "nope.yaml: cannot read the scenario" in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_option_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["run", "x.yaml", "--bogus"], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--bogus" in err


def test_real_process_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BAD["negative value"][0])
    proc = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "load.concurrency[2]" in proc.stderr


def test_token_ids_need_the_completions_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(GOOD.replace("workload:\n", "workload:\n  prompt_as: token_ids\n"))
    code, err = run_cli(["run", str(path)], capsys)
    assert code == 2
    assert "workload.prompt_as token_ids needs target.api openai-completions" in err
