"""Fixed mode on absolute deadlines, burst mode, the truth file and the process life cycle."""

from __future__ import annotations

import asyncio
import signal
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mockhttp import MockProc, chat_body, completion_body, fetch, fetch_sync, read_truth

import loadgen.mock

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

COMPLETIONS = "/v1/completions"


def test_fixed_mode_keeps_absolute_deadlines(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--ttft-ms", "50", "--itl-ms", "10", "--truth", str(truth))

    async def run() -> list[object]:
        body = completion_body(max_tokens=20)
        return await asyncio.gather(
            *(
                fetch(mock.port, "POST", COMPLETIONS, body, headers={"x-request-id": f"f{i}"})
                for i in range(8)
            )
        )

    replies = asyncio.run(run())
    mock.stop()
    records = {r["request_id"]: r for r in read_truth(truth)}
    assert len(records) == 8
    lateness = []
    for record in records.values():
        assert record["output_tokens"] == 20 and record["status"] == 200
        for k, t in enumerate(record["token_ns"]):
            lateness.append((t - (record["recv_ns"] + 50_000_000 + k * 10_000_000)) / 1e6)
    lateness.sort()
    assert lateness[0] >= 0.0  # never before the deadline
    assert lateness[len(lateness) // 2] < 0.5
    assert lateness[int(0.99 * (len(lateness) - 1))] < 5.0  # generous: a shared 2-core box
    # the client sees the tokens when the truth says they were written
    for reply in replies:
        assert reply.complete  # type: ignore[attr-defined]


def test_truth_agrees_with_arrival_times(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--ttft-ms", "20", "--itl-ms", "5", "--truth", str(truth))
    reply = fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=10),
                       headers={"x-request-id": "agree"})  # fmt: skip
    mock.stop()
    (record,) = read_truth(truth)
    assert record["request_id"] == "agree" and record["path"] == COMPLETIONS
    assert record["prompt_tokens"] == 4 and record["fault"] is None
    assert reply.sent_ns < record["recv_ns"] < record["token_ns"][0] <= record["end_ns"]
    arrivals = [t for t, data in reply.reads if b"data: {" in data]
    assert len(arrivals) == 10  # one read per paced event
    delays = [
        (seen - written) / 1e6 for seen, written in zip(arrivals, record["token_ns"], strict=True)
    ]
    # Written, then stamped: the reader on another core may wake first, or the
    # server be descheduled between the two, so the difference has either sign.
    assert statistics.median([abs(d) for d in delays]) < 1.0  # loose: a shared 2-core box


def test_burst_mode_writes_each_response_in_one_go(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--burst")
    reply = fetch_sync(mock.port, "POST", "/v1/chat/completions", chat_body(max_tokens=300))
    assert len(reply.json_events()) == 302  # role, 300 tokens, usage
    assert len(reply.chunks) == 303  # one HTTP chunk per event, + [DONE]
    assert len(reply.reads) <= 3  # headers and body arrive together


def test_truth_records_refusals_and_sigint_flushes(
    start_mock: Callable[..., MockProc], tmp_path: Path
) -> None:
    truth = tmp_path / "truth.jsonl"
    mock = start_mock("--ttft-ms", "0", "--itl-ms", "0", "--truth", str(truth))
    fetch_sync(mock.port, "POST", COMPLETIONS, raw_body=b"{", headers={"x-request-id": "bad"})
    fetch_sync(mock.port, "POST", COMPLETIONS, completion_body(max_tokens=3))
    assert mock.stop(signal.SIGINT) == 0
    bad, good = read_truth(truth)
    assert bad == {
        "request_id": "bad",
        "path": COMPLETIONS,
        "recv_ns": bad["recv_ns"],
        "token_ns": [],
        "token_user_ns": [],
        "token_stamp": "none",
        "prompt_tokens": 0,
        "cached_tokens": 0,
        "output_tokens": 0,
        "reasoning_tokens": 0,
        "status": 400,
        "fault": None,
        "end_ns": bad["end_ns"],
    }
    assert good["request_id"] is None and len(good["token_ns"]) == 3


def test_listening_line_and_sigterm_exit_code(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock()
    assert mock.line == f"loadgen-mock listening on http://127.0.0.1:{mock.port}\n"
    assert mock.stop(signal.SIGTERM) == 0


def test_help_and_bad_flags() -> None:
    with pytest.raises(SystemExit) as exc:
        loadgen.mock.main(["--help"])
    assert exc.value.code == 0
    for argv in (["--fault", "http500=2"], ["--fault", "nope=0.1"], ["--itl-ms", "-1"]):
        with pytest.raises(SystemExit) as exc:
            loadgen.mock.main(argv)
        assert exc.value.code == 2


def test_bad_tls_flags_name_the_flag(
    tmp_path: Path, tls_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key = tls_files
    locked = tmp_path / "locked.pem"
    subprocess.run(
        [
            *(
                "openssl",
                "pkey",
                "-in",
                str(key),
                "-aes256",
                "-passout",
                "pass:x",
                "-out",
                str(locked),
            )
        ],
        check=True,
    )
    nope = tmp_path / "nope.pem"
    cases = [
        (["--tls-cert", str(nope)], f"--tls-cert {nope}: no such file"),
        (["--tls-cert", str(cert), "--tls-key", str(nope)], f"--tls-key {nope}: no such file"),
        (["--tls-cert", str(cert)], "give --tls-key"),  # the key is in another file
        (["--tls-key", str(key)], "--tls-key needs --tls-cert"),
        (["--tls-cert", str(cert), "--tls-key", str(locked)], "key without a password"),
    ]
    for argv, expected in cases:
        with pytest.raises(SystemExit) as exc:
            loadgen.mock.main(argv)
        assert exc.value.code == 2
        assert expected in capsys.readouterr().err.splitlines()[-1]


def test_the_package_imports_only_the_netstamp_and_clihelp_leaves_from_loadgen() -> None:
    """Besides the package door (with the version it names and loadgen.lazy, which it hands
    its names out through), only loadgen.netstamp and loadgen.clihelp (its --help laid out
    as click's), all standard-library leaves."""
    code = (
        "import sys, loadgen.mock\n"
        "bad = [m for m in sys.modules if m.startswith('loadgen') "
        "and m not in ('loadgen', 'loadgen._version', 'loadgen.lazy', 'loadgen.netstamp', "
        "'loadgen.clihelp') and not m.startswith('loadgen.mock')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert loadgen.mock.__all__ == [
        "DEFAULT_PROFILE",
        "FAULT_KINDS",
        "PROFILES",
        "Profile",
        "Settings",
        "closed_loop",
        "main",
        "serve",
        "settings_from_argv",
    ]
