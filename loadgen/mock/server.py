"""The mock server: routes, generation set-up, start and stop.

Owns the wiring: which path answers what (OpenAI completions/chat/responses,
Anthropic messages, embeddings, rerank, audio transcriptions, TGI
generate/generate_stream, /tokenize, /v1/models, /health, /metrics), the fault a
request draws, the choice of scheduler (``BatchEngine`` with its prefix cache, or
``FixedPacer``), and the process life cycle (listening line, SIGTERM/SIGINT,
flushing the truth file); with ``--network-delay-ms`` each connection is put
behind the delay line (:mod:`loadgen.mock.netdelay`). Each request's length,
events and Gen class are :mod:`loadgen.mock.gen_setup`'s; answers before any
header (injected refusals, resets) are :mod:`loadgen.mock.refusals`'.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import threading
import time

import orjson

from loadgen.mock.cache import PrefixCache
from loadgen.mock.config import settings_from_argv
from loadgen.mock.engine import BatchEngine, FixedPacer
from loadgen.mock.events import variant_sequence
from loadgen.mock.faults import AFTER_RESPONSE, PRE_HEADER, FaultPlan
from loadgen.mock.gen import Ctx, Gen
from loadgen.mock.gen_setup import STREAM_ONLY, GenSetup
from loadgen.mock.http import HttpConn, Request
from loadgen.mock.http_framing import SSE_TYPE, HttpError, fastapi_error, response_head
from loadgen.mock.metrics import Metrics, cache_labels
from loadgen.mock.netdelay import DelayedConn, DelayLine
from loadgen.mock.pooling import POOLING_ROUTES, Pooler, parse_pooling
from loadgen.mock.refusals import pre_header_fault, record_refusal
from loadgen.mock.request import (
    API_CHAT,
    API_COMPLETIONS,
    API_TGI,
    GenSpec,
    parse_openai,
    parse_tgi,
)
from loadgen.mock.request_apis import (
    API_MESSAGES,
    API_RESPONSES,
    Conversations,
    parse_messages,
    parse_responses,
)
from loadgen.mock.settings import Settings
from loadgen.mock.sock import listen
from loadgen.mock.spec import SpecDecode
from loadgen.mock.tokens import tokenize
from loadgen.mock.transcribe import API_TRANSCRIPTIONS, parse_transcription
from loadgen.mock.truth import TruthWriter

__all__ = ["MockServer", "main", "serve"]

log = logging.getLogger("loadgen.mock")

# path -> (method, api or endpoint name, streaming for TGI)
ROUTES: dict[str, tuple[str, str]] = {
    "/v1/completions": ("POST", API_COMPLETIONS),
    "/v1/chat/completions": ("POST", API_CHAT),
    "/v1/responses": ("POST", API_RESPONSES),
    "/v1/messages": ("POST", API_MESSAGES),
    "/generate": ("POST", "tgi"),
    "/generate_stream": ("POST", "tgi_stream"),
    "/tokenize": ("POST", "tokenize"),
    "/v1/models": ("GET", "models"),
    "/version": ("GET", "version"),
    "/v1/audio/transcriptions": ("POST", API_TRANSCRIPTIONS),
    "/health": ("GET", "health"),
    "/metrics": ("GET", "metrics"),
    **POOLING_ROUTES,  # /v1/embeddings, /rerank (and /v1/rerank, /v2/rerank)
}
#: what /version answers: vLLM's shape, the mock named in its local part
MOCK_VERSION = "0.0.0+loadgen.mock"
METRICS_TYPE = b"text/plain; version=0.0.4; charset=utf-8"


class MockServer:
    """Per-process state: scheduler, metrics, truth file, fault plan, connections."""

    def __init__(self, settings: Settings, loop: asyncio.AbstractEventLoop):
        self.settings = settings
        self.loop = loop
        self.model_name = settings.model or "loadgen-mock"
        self.engine: BatchEngine | FixedPacer
        self.metrics = Metrics(self.model_name, lambda: self.engine.gauges())
        self.metrics.cache_info = cache_labels(
            settings.block_size, settings.profile.kv_cache_tokens, settings.prefix_cache_tokens != 0
        )
        if settings.fixed:
            self.engine = FixedPacer(settings.ttft_ms, settings.itl_ms, settings.burst, loop)
        else:
            spec = None
            if settings.spec_decode is not None:  # a draft model: its counters in /metrics
                spec = SpecDecode(*settings.spec_decode, settings.seed)
                self.metrics.spec = spec
            self.engine = BatchEngine(settings.profile, loop, self.metrics, self._cache(), spec)
        delay_ns = round(settings.network_delay_ms * 1e6)
        self.truth = TruthWriter(settings.truth, loop, delay_ns) if settings.truth else None
        #: --network-delay-ms: every connection's traffic goes through it
        self.delay = DelayLine(delay_ns, loop) if delay_ns else None
        self.faults = FaultPlan(settings.faults, settings.seed)
        seq = variant_sequence(settings.seed)
        self.ctx = Ctx(loop, self.metrics, self.truth, seq, settings.stall_s)
        self.conns: set[HttpConn] = set()
        #: stored Responses answers, for previous_response_id
        self.conversations = Conversations()
        self.pooler = Pooler(settings.embedding_dim, settings.seed)  # embeddings, rerank
        self.setup = GenSetup(settings, self.ctx, self.conversations, self.pooler)

    def _cache(self) -> PrefixCache | None:
        settings = self.settings
        tokens = settings.prefix_cache_tokens
        if tokens is None:
            tokens = settings.profile.kv_cache_tokens
        if tokens < settings.block_size:
            return None
        return PrefixCache(tokens, settings.block_size)

    def protocol(self) -> HttpConn | DelayedConn:
        conn = HttpConn(self.handle, self._lost)
        self.conns.add(conn)
        return conn if self.delay is None else DelayedConn(conn, self.delay)

    def close(self) -> None:
        if self.delay is not None:  # what is still on its way is dropped
            self.delay.close()
        for conn in list(self.conns):
            if conn.transport is not None:
                conn.transport.abort()
        self.engine.close()
        if self.truth is not None:
            self.truth.close()

    def _lost(self, conn: HttpConn) -> None:
        self.conns.discard(conn)
        if isinstance(conn.current, Gen):
            gen = conn.current
            if not gen.dead:  # the client went away mid-answer: free its slot at once
                gen.abort()
                self.engine.drop(gen)

    def handle(self, conn: HttpConn, req: Request) -> None:
        route = ROUTES.get(req.path)
        if route is None:
            exc = fastapi_error(404, "Not Found")
            conn.send_simple(exc.status, exc.body)
            return
        method, name = route
        if req.method != method:
            exc = fastapi_error(405, "Method Not Allowed")
            conn.send_simple(exc.status, exc.body, extra=((b"allow", method.encode()),))
        elif name == "health":
            conn.send_simple(200, b"")
        elif name == "metrics":
            conn.send_simple(200, self.metrics.render(), content_type=METRICS_TYPE)
        elif name == "models":
            conn.send_simple(200, self._models())
        elif name == "version":
            conn.send_simple(200, orjson.dumps({"version": MOCK_VERSION}))
        elif name == "tokenize":
            self._tokenize(conn, req)
        else:
            self._generate(conn, req, name)

    def _models(self) -> bytes:
        created = int(time.time())
        card = {
            "id": self.model_name,
            "object": "model",
            "created": created,
            "owned_by": "vllm",
            "root": self.model_name,
            "parent": None,
            "max_model_len": self.settings.profile.max_model_len,
        }
        # vLLM lists each LoRA adapter as a card of its own, the base model as its parent
        loras = [
            {**card, "id": name, "root": name, "parent": self.model_name}
            for name in self.settings.loras
        ]
        return orjson.dumps({"object": "list", "data": [card, *loras]})

    def _tokenize(self, conn: HttpConn, req: Request) -> None:
        try:
            body = tokenize(req.body, self.settings.served, self.settings.profile.max_model_len)
        except HttpError as exc:
            conn.send_simple(exc.status, exc.body)
            return
        conn.send_simple(200, body)

    def _parse(self, req: Request, name: str) -> tuple[GenSpec, float]:
        """The request's generation, and its audio clip's seconds (transcriptions; else 0)."""
        s = self.settings
        limit = s.profile.max_model_len
        if name.startswith("tgi"):
            return parse_tgi(req.body, name == "tgi_stream", s.served, limit), 0.0
        if name == API_TRANSCRIPTIONS:
            ctype = req.headers.get("content-type", "")
            return parse_transcription(req.body, ctype, s.served, limit, s.audio_tokens_per_s)
        rates = (s.image_tokens_per_mp, s.audio_tokens_per_s)
        if name == API_RESPONSES:
            return parse_responses(req.body, s.served, limit, self.conversations, rates), 0.0
        if name == API_MESSAGES:
            return parse_messages(req.body, s.served, limit, rates), 0.0
        if req.path in POOLING_ROUTES:
            return parse_pooling(req.body, name, s.served, limit, self.pooler.dim), 0.0
        return parse_openai(req.body, name, s.served, limit, rates), 0.0

    def _generate(self, conn: HttpConn, req: Request, name: str) -> None:
        rid = req.headers.get("x-request-id")
        try:
            spec, seconds = self._parse(req, name)
        except HttpError as exc:
            record_refusal(self.truth, req, rid, exc.status, None, 0)
            conn.send_simple(exc.status, exc.body)
            return
        fault = self.faults.pick()
        if fault in STREAM_ONLY and not spec.stream:
            fault = None
        if fault is not None:
            log.warning("fault %s request=%s path=%s", fault, rid, req.path)
        if fault in PRE_HEADER:
            pre_header_fault(conn, req, spec, rid, fault, self.settings.retry_after_s, self.truth)
            return
        if fault in AFTER_RESPONSE:
            conn.close_after = True  # the response goes out whole; then the 408 (HttpConn)
        gen = self.setup.make(conn, req, spec, rid, fault, seconds)
        conn.current = gen
        if fault == "slow_first_byte":
            delay = self.settings.slow_first_byte_s
            gen.sched_ns += int(delay * 1e9)
            self.loop.call_later(delay, self._start, conn, gen)
        else:
            self._start(conn, gen)

    def _start(self, conn: HttpConn, gen: Gen) -> None:
        if conn.closed:
            gen.abort()
            return
        if gen.spec.stream:
            extra = ((b"x-request-id", gen.rid.encode()),) if gen.rid else ()
            ctype = SSE_TYPE if gen.spec.api != API_TGI else b"text/event-stream"
            conn.transport.write(
                response_head(200, ctype, length=None, keep_alive=conn.keep_alive, extra=extra)
            )
        self.engine.submit(gen)


async def serve(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Listen, print the listening line, serve until ``stop`` or SIGTERM/SIGINT."""
    loop = asyncio.get_running_loop()
    server = MockServer(settings, loop)
    listener = await listen(
        server.protocol,
        settings.host,
        settings.port,
        backlog=4096,
        tls=settings.tls,
        tx=settings.truth is not None,  # only the truth file needs transmit stamps
    )
    stop = stop or asyncio.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    port = listener.sockets[0].getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    scheme = "https" if settings.tls else "http"
    sys.stdout.write(f"loadgen-mock listening on {scheme}://{host}:{port}\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        listener.close()
        server.close()
        await listener.wait_closed()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m loadgen.mock`` and ``loadgen mock``."""
    settings = settings_from_argv(argv)
    logging.basicConfig(
        level=settings.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s loadgen-mock %(levelname)s %(message)s",
    )
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
