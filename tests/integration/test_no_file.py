"""Starting without a file (#23), through the CLI, against real sockets on 127.0.0.1.

- ``loadgen run --url URL``: the sweep runs against the real mock, no warning;
  the results directory keeps the resolved scenario, and ``loadgen run
  RESULTS/scenario.yaml`` repeats the same requests (same lengths, in order).
- Neither a file nor ``--url``: one line, exit 2.
- ``loadgen init URL`` against the mock: a file that loads and runs, with what
  the mock serves in it; an existing file is refused without ``--force``.
- ``init`` against a raw server that 404s all but ``/v1/models``, or everything,
  or wants a key: one line naming each probe's status, exit 2, no file; every
  generation probe asked for one token.
- ``init`` against a dead port: one line, exit 2, no file.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from loadgen.cli import main
from loadgen.records import read_records
from loadgen.scenario import load_scenario
from loadgen.target.mock import MockServer
from tests.integration.rawserver import LoopServer

MODEL = "served-model"
#: a short sweep: two steps of a few requests (ITL 8 ms: timing holds under load)
SHORT = ["--concurrency", "1,2", "--requests", "4", "--prompt-tokens", "24", "--output-tokens", "4"]


def run_cli(args: list[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def mock_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("mock") / "mock.log"
    with MockServer(["--model", MODEL, "--ttft-ms", "5", "--itl-ms", "8"], log) as url:
        yield url


def test_a_run_without_a_file_runs_writes_its_scenario_and_reruns_from_it(
    mock_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    code, out, err = run_cli(
        ["run", "--url", mock_url, "--model", MODEL, *SHORT, "--out", first], capsys
    )
    assert code == 0, err
    assert "warning" not in err.lower() and "error" not in err.lower(), err
    assert out.splitlines()[-1] == f"results: {first}"
    saved = yaml.safe_load((first / "scenario.yaml").read_text())
    assert saved["target"]["url"] == mock_url and saved["target"]["model"] == MODEL
    assert saved["target"]["api"] == "openai-chat"
    assert saved["load"]["concurrency"] == [1, 2] and saved["load"]["requests_per_step"] == 4
    assert saved["workload"]["prompt_tokens"] == {"dist": "fixed", "value": 24}
    records = list(read_records(first / "records.jsonl"))
    assert len(records) == 8 and all(r.ok for r in records)
    assert {r.max_tokens for r in records} == {4}

    again = tmp_path / "again"
    code, out, err = run_cli(["run", first / "scenario.yaml", "--out", again, "-q"], capsys)
    assert code == 0, err
    assert load_scenario(again / "scenario.yaml") == load_scenario(first / "scenario.yaml")
    rerun = list(read_records(again / "records.jsonl"))
    assert [(r.step, r.prompt_tokens_requested, r.max_tokens) for r in rerun] == [
        (r.step, r.prompt_tokens_requested, r.max_tokens) for r in records
    ]
    assert all(r.ok for r in rerun)


def test_without_model_the_run_takes_the_one_the_server_lists(
    mock_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "auto"
    flags = [
        "--concurrency",
        "1",
        "--requests",
        "2",
        "--prompt-tokens",
        "8",
        "--output-tokens",
        "2",
    ]
    code, _out, err = run_cli(["run", "--url", mock_url, *flags, "--out", out_dir, "-q"], capsys)
    assert code == 0, err
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["model"] == MODEL
    assert all(r.ok for r in read_records(out_dir / "records.jsonl"))


def test_neither_a_file_nor_url_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["run", "--concurrency", "1,2"], capsys)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1
    assert "SCENARIO" in err and "--url" in err


def test_init_against_the_mock_writes_a_file_that_loads_and_runs(
    mock_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "found.yaml"
    code, out, err = run_cli(["init", mock_url, "-o", path], capsys)
    assert code == 0, err
    assert not err, err
    assert f"wrote {path}" in out and "APIs served: openai-chat" in out
    sc = load_scenario(path)
    assert sc.target.url == mock_url and sc.target.model == MODEL
    assert sc.target.api == "openai-chat"
    assert sc.target.extra_body == {"ignore_eos": True}  # the mock's /metrics are vLLM's
    assert sc.telemetry.server_metrics == "target"
    assert sc.workload.calibrate
    assert "#   tokenize: vLLM dialect of POST /tokenize" in path.read_text()

    out_dir = tmp_path / "run"
    code, _out, err = run_cli(["run", path, *SHORT, "--out", out_dir, "-q"], capsys)
    assert code == 0, err
    assert "warning" not in err.lower(), err
    records = list(read_records(out_dir / "records.jsonl"))
    assert len(records) == 8 and all(r.ok and r.output_tokens == 4 for r in records)


def test_init_refuses_to_write_over_a_file_without_force(
    mock_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("# my own\n")
    code, _out, err = run_cli(["init", mock_url, "-o", path], capsys)
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert path.read_text() == "# my own\n"
    code, _out, err = run_cli(["init", mock_url, "-o", path, "--force"], capsys)
    assert code == 0, err
    assert load_scenario(path).target.model == MODEL


#: (method, path) -> the request body -> (status, JSON answer)
Routes = dict[tuple[str, str], Callable[[bytes], tuple[int, object]]]


class RouteServer(LoopServer):
    """Answers the routes it is given with JSON, 404 to everything else; keeps what it was asked."""

    def __init__(self, routes: Routes) -> None:
        super().__init__()
        self.routes = routes
        self.asked: list[tuple[str, str, bytes]] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                method, path = head.decode().split(" ", 2)[:2]
                self.asked.append((method, path, body))
                route = self.routes.get((method, path))
                status, answer = route(body) if route else (404, {"detail": "Not Found"})
                payload = (
                    answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                )
                kind = "text/plain" if isinstance(answer, str) else "application/json"
                writer.write(
                    f"HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\n"
                    f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def only_models(_body: bytes) -> tuple[int, object]:
    return 200, {"data": [{"id": "only", "object": "model", "max_model_len": 300}]}


def test_init_against_a_server_of_models_only_is_one_line_exit_2_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = RouteServer({("GET", "/v1/models"): only_models})
    server.start()
    try:
        path = tmp_path / "bare.yaml"
        code, out, err = run_cli(["init", server.root, "-o", path, "--timeout", "3"], capsys)
    finally:
        server.stop()
    assert code == 2 and out == "", out
    assert err.strip().splitlines() == [
        f"loadgen: init: no API answered its probe at {server.root} (404: openai-chat, "
        "openai-completions, openai-responses, anthropic-messages, tgi, openai-embeddings, "
        "rerank); no API loadgen speaks here, or the URL is not the server's root; "
        "nothing written"
    ]
    assert not path.exists()
    posts = {path: json.loads(body) for method, path, body in server.asked if method == "POST"}
    for route, field in (
        ("/v1/chat/completions", "max_tokens"),
        ("/v1/completions", "max_tokens"),
        ("/v1/messages", "max_tokens"),
        ("/v1/responses", "max_output_tokens"),
    ):
        assert posts[route][field] == 1 and posts[route]["model"] == "only"
    assert posts["/generate"]["parameters"]["max_new_tokens"] == 1
    asked = {path for _method, path, _body in server.asked}
    assert {"/metrics", "/version", "/info", "/props", "/get_server_info", "/tokenize"} <= asked


def test_init_against_a_server_that_404s_everything_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = RouteServer({})  # 404 to every request, /v1/models too
    server.start()
    try:
        path = tmp_path / "none.yaml"
        code, out, err = run_cli(
            ["init", server.root + "/v1", "-o", path, "--timeout", "3"], capsys
        )
    finally:
        server.stop()
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"loadgen: init: no API answered its probe at {server.root}/v1 (404: ")
    assert line.endswith(
        "the URL ends in /v1 and loadgen adds /v1/... itself: give the server's root; "
        "nothing written"
    )
    assert not path.exists()
    assert ("GET", "/v1/v1/models") in {(m, p) for m, p, _ in server.asked}


def test_init_against_a_server_that_wants_a_key_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_key(_body: bytes) -> tuple[int, object]:
        return 401, {"error": {"message": "missing key"}}

    routes: Routes = {("GET", "/v1/models"): no_key}
    for api_path in ("/v1/chat/completions", "/v1/completions", "/v1/embeddings"):
        routes[("POST", api_path)] = no_key
    server = RouteServer(routes)
    server.start()
    try:
        path = tmp_path / "key.yaml"
        code, out, err = run_cli(["init", server.root, "-o", path, "--timeout", "3"], capsys)
    finally:
        server.stop()
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "(401: openai-chat, openai-completions, openai-embeddings; 404: " in line
    assert line.endswith("the server wants a key: give --api-key-env VAR; nothing written")
    assert not path.exists()


def test_init_against_a_dead_port_is_one_line_exit_2_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        path = tmp_path / "dead.yaml"
        code, out, err = run_cli(["init", f"http://127.0.0.1:{port}", "-o", path], capsys)
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1
    assert "refused the connection" in err and f"127.0.0.1:{port}/v1/models" in err
    assert not path.exists()


def tgi_tokenize(body: bytes) -> tuple[int, object]:
    """TGI's documented answer: one {id, text, start, stop} per token (here: one a word)."""
    words = json.loads(body)["inputs"].split()
    return 200, [{"id": i, "text": w, "start": 0, "stop": 0} for i, w in enumerate(words)]


def test_init_against_a_tgi_like_server_finds_tgi_by_its_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    info = {"model_id": "bigscience/bloom-560m", "version": "3.3.4", "max_total_tokens": 400}
    metrics = "# TYPE tgi_queue_size gauge\ntgi_queue_size 0\ntgi_batch_current_size 1\n"
    server = RouteServer(
        {
            ("GET", "/info"): lambda _b: (200, info),
            ("POST", "/generate"): lambda _b: (200, {"generated_text": "a"}),
            ("POST", "/tokenize"): tgi_tokenize,
            ("GET", "/metrics"): lambda _b: (200, metrics),
        }
    )
    server.start()
    try:
        path = tmp_path / "tgi.yaml"
        code, out, err = run_cli(
            ["init", server.root, "-o", path, "--model", "bloom", "--timeout", "3"], capsys
        )
    finally:
        server.stop()
    assert code == 0 and not err, err
    assert "engine: TGI 3.3.4, from GET /info" in out
    assert "context length: 400 tokens (GET /info)" in out
    assert "APIs served: tgi" in out and "tokenize: TGI dialect of POST /tokenize" in out
    sc = load_scenario(path)
    assert sc.target.api == "tgi" and sc.target.model == "bloom"
    assert sc.target.extra_body == {}  # TGI takes no ignore_eos
    assert sc.telemetry.server_metrics == "target"
    prompt, output = sc.workload.prompt_tokens, sc.workload.output_tokens
    assert prompt.dist == "fixed" and output.dist == "fixed"
    assert prompt.value + output.value <= 400
