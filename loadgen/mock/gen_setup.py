"""What each generation request gets: its output length, its events, its Gen class.

Owns :class:`GenSetup`, the per-request set-up the server does between parsing a
request and starting it: the seeded output length (``max_tokens`` with
``ignore_eos``, else a natural length of mean ``mean_output_tokens``), how many
of a chat, Responses or Messages answer's tokens are reasoning, a planned tool
call or JSON answer (``structured``), the events in the request's API's shape
(OpenAI chat/completions, TGI, Responses, Messages, transcriptions, pooling) and
the Gen class (``StreamGen``, ``FaultyStreamGen`` for a mid-stream or framing
fault, ``BodyGen`` without streaming, ``PoolGen``).
"""

from __future__ import annotations

import random
import time

from loadgen.mock.events import SEQ_LEN, ChatEvents, CompletionEvents, Events
from loadgen.mock.events_messages import MessagesEvents
from loadgen.mock.events_responses import ResponsesEvents
from loadgen.mock.events_tgi import TgiEvents
from loadgen.mock.events_tools import (
    MessagesJsonEvents,
    MessagesToolEvents,
    ResponsesJsonEvents,
    ResponsesToolEvents,
)
from loadgen.mock.faults import CONTENT, FRAMING, MID_STREAM
from loadgen.mock.gen import BodyGen, Conn, Ctx, Gen, StreamGen
from loadgen.mock.gen_faults import FaultyStreamGen
from loadgen.mock.http import Request
from loadgen.mock.pooling import NO_EVENTS, Pooler, PoolGen, PoolSpec
from loadgen.mock.request import API_CHAT, API_TGI, GenSpec
from loadgen.mock.request_apis import API_MESSAGES, API_RESPONSES, Conversations
from loadgen.mock.settings import Settings
from loadgen.mock.structured import Answer, JsonAnswerEvents, ToolCallEvents, plan_answer
from loadgen.mock.transcribe import API_TRANSCRIPTIONS, TranscriptionEvents

__all__ = ["STREAM_ONLY", "GenSetup"]

#: the faults only a stream can carry (a non-streaming request gets none of them)
STREAM_ONLY = MID_STREAM | FRAMING


class GenSetup:
    """Builds each request's Gen; one per server (its seeded draws for requests without
    an ``x-request-id`` go on from one request to the next)."""

    def __init__(
        self, settings: Settings, ctx: Ctx, conversations: Conversations, pooler: Pooler
    ) -> None:
        self.settings = settings
        self.ctx = ctx
        self.conversations = conversations  # stored Responses answers (previous_response_id)
        self.pooler = pooler
        self.rng = random.Random(settings.seed)

    def make(
        self,
        conn: Conn,
        req: Request,
        spec: GenSpec,
        rid: str | None,
        fault: str | None,
        seconds: float = 0.0,
    ) -> Gen:
        """The request's generation: its length, its events in its API's shape, and the
        Gen class its streaming and fault ask for (not yet started)."""
        rng = random.Random(f"{self.settings.seed}:{rid}") if rid is not None else self.rng
        if isinstance(spec, PoolSpec):  # one step's prefill, then the whole answer
            return PoolGen(
                self.ctx, conn, spec, NO_EVENTS, rid=rid, path=req.path, recv_ns=req.recv_ns,
                n_out=1, finish="stop", offset=rng.randrange(SEQ_LEN), fault=fault,
                pooler=self.pooler,
            )  # fmt: skip
        n_out, finish = self._length(spec, rng)
        offset = rng.randrange(SEQ_LEN)
        response_id = rid if rid is not None else f"{rng.getrandbits(128):032x}"
        events: Events
        if spec.api == API_TGI:
            events = TgiEvents(spec.prompt_tokens, spec.details, spec.seed)
        elif spec.api in (API_RESPONSES, API_MESSAGES):
            answer = None
            if spec.structured is not None:
                answer = plan_answer(spec.structured, rng, fault in CONTENT)
            if answer is not None and answer.tool is not None and n_out < spec.max_tokens:
                # a call's opening and its arguments are two events of these APIs (as
                # vLLM sends them, a token each): a natural answer is never shorter
                n_out = min(spec.max_tokens, max(n_out, max(self.settings.reasoning_tokens, 0) + 2))
            events = self._api_events(spec, response_id, n_out, answer)
        else:
            head = (response_id, spec.model, int(time.time()), spec.prompt_tokens)
            usage = (spec.include_usage, spec.continuous_usage)
            answer = None
            if spec.api == API_CHAT and spec.structured is not None:
                answer = plan_answer(spec.structured, rng, fault in CONTENT)
            if answer is not None:
                kind = ToolCallEvents if answer.tool is not None else JsonAnswerEvents
                events = kind(*head, usage, self._reasoning(n_out), answer=answer, n_out=n_out)
            elif spec.api == API_CHAT:
                events = ChatEvents(*head, usage, self._reasoning(n_out))
            elif spec.api == API_TRANSCRIPTIONS:
                events = TranscriptionEvents(*head, usage, seconds)
            else:
                events = CompletionEvents(*head, usage)
        cls: type[Gen] = StreamGen
        if not spec.stream:
            cls = BodyGen
        elif fault in STREAM_ONLY:
            cls = FaultyStreamGen
        return cls(
            self.ctx, conn, spec, events, rid=rid, path=req.path, recv_ns=req.recv_ns,
            n_out=n_out, finish=finish, offset=offset, fault=fault,
        )  # fmt: skip

    def _api_events(self, spec: GenSpec, rid: str, n_out: int, answer: Answer | None) -> Events:
        """Responses or Messages events; their leading reasoning tokens as chat's; a planned
        tool call or JSON answer in that API's shape (loadgen.mock.events_tools)."""
        n_reason = (self._reasoning(n_out) or (0, ""))[0]
        if spec.api == API_MESSAGES:
            if answer is not None:
                head = (rid, spec.model, spec.prompt_tokens, n_reason)
                mkind = MessagesToolEvents if answer.tool is not None else MessagesJsonEvents
                return mkind(*head, answer=answer, n_out=n_out)
            return MessagesEvents(rid, spec.model, spec.prompt_tokens, n_reason)
        args = (rid, int(time.time()), spec, n_reason, self.conversations.keep, spec.previous_id)
        if answer is not None:
            kind = ResponsesToolEvents if answer.tool is not None else ResponsesJsonEvents
            return kind(*args, answer=answer, n_out=n_out)
        return ResponsesEvents(*args)

    def _reasoning(self, n_out: int) -> tuple[int, str] | None:
        """How many of a chat answer's ``n_out`` tokens are reasoning: at least one is not."""
        n = self.settings.reasoning_tokens
        if n <= 0:
            return None
        return min(n, n_out - 1), self.settings.reasoning_field

    def _length(self, spec: GenSpec, rng: random.Random) -> tuple[int, str]:
        """Output length: max_tokens with ignore_eos, else a seeded natural length."""
        if spec.ignore_eos:
            return spec.max_tokens, "length"
        natural = 1 + int(rng.expovariate(1.0 / self.settings.profile.mean_output_tokens))
        n = min(spec.max_tokens, max(spec.min_tokens, natural))
        if n == spec.max_tokens:
            return n, "length"
        return n, "eos_token" if spec.api == API_TGI else "stop"
