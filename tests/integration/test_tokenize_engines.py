"""Prompt calibration with each engine's own tokenize endpoint, against imitations on 127.0.0.1.

Each imitation answers as the engine's docs and code say (llama.cpp's server
README and tests, TGI's router, SGLang's serving_tokenize.py) and refuses
what the engine refuses; its tokenizer is simple enough that the right
calibration is known: ``tokens = overhead + per_word x words``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

from loadgen.client.transport import TlsOptions
from loadgen.report.terminal.console import format_run_header
from loadgen.summary import ClockAnchor, PromptCalibration, Summary
from loadgen.target.tokenize import calibrate

Handler = Callable[[dict[str, Any]], tuple[int, Any]]


def words(text: str) -> int:
    return len(text.split())


def llama_cpp_tokenize(body: dict[str, Any]) -> tuple[int, Any]:
    """2 tokens a word, a BOS with add_special; no ``content``: no tokens (as llama.cpp)."""
    content = body.get("content")
    if not isinstance(content, str):
        return 200, {"tokens": []}
    bos = [1] if body.get("add_special") else []
    return 200, {"tokens": bos + [7] * (2 * words(content))}


def llama_cpp_template(body: dict[str, Any]) -> tuple[int, Any]:
    text = body["messages"][-1]["content"]
    return 200, {"prompt": f"<|user|> {text} <|assistant|>"}  # two more words


def tgi_tokenize(body: dict[str, Any]) -> tuple[int, Any]:
    """A BOS plus 3 tokens a word, as a list of token objects; no ``inputs``: 422."""
    inputs = body.get("inputs")
    if not isinstance(inputs, str):
        return 422, {"error": "missing field `inputs`", "error_type": "validation"}
    ids = [1] + [9] * (3 * words(inputs))
    return 200, [{"id": t, "text": "x", "start": i, "stop": i + 1} for i, t in enumerate(ids)]


def sglang_tokenize(body: dict[str, Any]) -> tuple[int, Any]:
    """A prompt only (no messages): 1 token a word plus a BOS, vLLM's answer shape."""
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        return 400, {"object": "error", "message": "Field required: prompt", "code": 400}
    ids = [1] + [5] * words(prompt)
    return 200, {"tokens": ids, "count": len(ids), "max_model_len": 4096}


class Imitation:
    """An aiohttp server in its own thread serving ``routes`` (path -> handler) and
    recording each path asked, in order."""

    def __init__(self, routes: dict[str, Handler]) -> None:
        self.routes = routes
        self.asked: list[str] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _answer(self, request: web.Request) -> web.Response:
        self.asked.append(request.path)
        handler = self.routes.get(request.path)
        if handler is None:
            return web.json_response({"error": "Not Found"}, status=404)
        status, body = handler(await request.json())
        return web.json_response(body, status=status)

    def _serve(self) -> None:
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self._answer)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def __enter__(self) -> Imitation:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def serve() -> Iterator[Callable[[dict[str, Handler]], Imitation]]:
    started: list[Imitation] = []

    def start(routes: dict[str, Handler]) -> Imitation:
        server = Imitation(routes).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__()


def test_llama_cpp_chat_goes_through_its_template_then_tokenize(
    serve: Callable[[dict[str, Handler]], Imitation],
) -> None:
    server = serve({"/tokenize": llama_cpp_tokenize, "/apply-template": llama_cpp_template})
    cal = calibrate(server.url, "m", True, {}, TlsOptions(), api="openai-chat")
    assert cal is not None
    assert cal.engine == "llama.cpp" and cal.chat_template
    assert cal.endpoint == "POST /tokenize (after POST /apply-template)"
    assert cal.per_word == pytest.approx(2.0)
    assert cal.overhead == pytest.approx(1 + 2 * 2)  # BOS, and the template's two words
    assert cal.words_for(64) == 30  # a 64-token request gets 30 words, not 64


def test_llama_cpp_completions_count_the_text_and_its_bos(
    serve: Callable[[dict[str, Handler]], Imitation],
) -> None:
    server = serve({"/tokenize": llama_cpp_tokenize})
    cal = calibrate(server.url, "m", False, {}, TlsOptions(), api="openai-completions")
    assert cal is not None
    assert (cal.engine, cal.chat_template, cal.endpoint) == ("llama.cpp", False, "POST /tokenize")
    assert cal.per_word == pytest.approx(2.0) and cal.overhead == pytest.approx(1.0)


def test_tgi_is_asked_first_for_api_tgi(serve: Callable[[dict[str, Handler]], Imitation]) -> None:
    server = serve({"/tokenize": tgi_tokenize})
    cal = calibrate(server.url, "m", False, {}, TlsOptions(), api="tgi")
    assert cal is not None
    assert (cal.engine, cal.chat_template) == ("tgi", False)
    assert cal.per_word == pytest.approx(3.0) and cal.overhead == pytest.approx(1.0)
    assert server.asked == ["/tokenize", "/tokenize"]  # its own dialect first: one try a prompt


def test_tgi_behind_an_openai_api_is_found_after_the_others(
    serve: Callable[[dict[str, Handler]], Imitation],
) -> None:
    server = serve({"/tokenize": tgi_tokenize})
    cal = calibrate(server.url, "m", True, {}, TlsOptions(), api="openai-chat")
    assert cal is not None and cal.engine == "tgi"
    assert cal.per_word == pytest.approx(3.0)


def test_sglang_answers_the_vllm_prompt_form(
    serve: Callable[[dict[str, Handler]], Imitation],
) -> None:
    server = serve({"/tokenize": sglang_tokenize})
    cal = calibrate(server.url, "m", True, {}, TlsOptions(), api="openai-chat")
    assert cal is not None
    assert (cal.engine, cal.chat_template) == ("vllm", False)  # no template: prompt form
    assert cal.per_word == pytest.approx(1.0) and cal.overhead == pytest.approx(1.0)


def test_a_server_with_no_tokenize_leaves_the_approximation(
    serve: Callable[[dict[str, Handler]], Imitation],
) -> None:
    server = serve({})
    assert calibrate(server.url, "m", True, {}, TlsOptions()) is None


def test_the_run_header_names_the_engine_that_calibrated() -> None:
    summary = Summary(
        loadgen_version="x",
        name="n",
        run_id="r",
        target_url="http://h:1",
        api="openai-chat",
        model="m",
        clock_anchor=ClockAnchor(monotonic_ns=0, wall_ns=0),
        metrics_profile="loadgen",
        prompt_length_source="server",
        calibration=PromptCalibration(
            engine="llama.cpp",
            endpoint="POST /tokenize (after POST /apply-template)",
            chat_template=True,
            per_word=2.0,
            overhead=5.0,
        ),
    )
    header = format_run_header(summary)
    flat = " ".join(header.split())  # the console wraps the line at 80 columns
    assert "prompt lengths: server (llama.cpp's POST /tokenize (after POST /apply-template): " in (
        flat
    )
    assert "2.000 tokens/word + 5.0, chat template counted" in flat
