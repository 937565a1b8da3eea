"""Tool calls and JSON answers in the Responses and Messages streams, as vLLM 0.32 writes them.

The answer is planned as chat's (:func:`~loadgen.mock.structured.plan_answer`);
one token, one event, as for text, the first answer token opening the call:

- Responses (:class:`ResponsesToolEvents`): the call's ``response.output_item.added``
  (a ``function_call`` item: ``name``, ``call_id``, ``arguments: ""``) is the first
  token's event, each later token a ``response.function_call_arguments.delta``
  (``output_index``, ``delta``); then ``function_call_arguments.done``,
  ``output_item.done`` and ``response.completed`` with the ``function_call`` item
  in ``output``. vLLM's simple streaming path (a tool parser) writes them so: the
  parser's name chunk opens the item, its argument chunks are the deltas.
- Responses JSON answers (``text.format``; :class:`ResponsesJsonEvents`): the
  text stream with the answer's pieces as the ``output_text`` deltas, status
  ``completed`` (the whole JSON text is sent, as chat's JSON answer ends ``stop``).
- Messages (:class:`MessagesToolEvents`): ``content_block_start`` of a ``tool_use``
  block (``id``, ``name``, ``input: {}``) is the first token's event, each later
  token an ``input_json_delta`` (``partial_json``) of that block's ``index``;
  ``content_block_stop``, ``message_delta`` with ``stop_reason: tool_use`` (vLLM
  says ``tool_use`` for a named choice too) and ``message_stop``.
- Messages JSON answers (``output_config.format``; :class:`MessagesJsonEvents`): the
  text stream with the answer's pieces as the ``text_delta`` texts, ``stop_reason``
  ``end_turn`` (vLLM turns the format into chat's ``response_format``, so its answer
  is chat's JSON text, streamed as Messages text).

A one-token answer opens the call and carries its whole arguments in one token
(two events). Every event differs (no pre-framed runs); the constant parts are
encoded once per request.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson

from loadgen.mock.events_messages import (
    SIGNATURE,
    STOP_REASONS,
    MessagesEvents,
    _delta,
    _sse,
    _start,
    _thinking_end,
)
from loadgen.mock.events_responses import ResponsesEvents
from loadgen.mock.events_responses import _sse as _event
from loadgen.mock.http_framing import chunk
from loadgen.mock.request import GenSpec
from loadgen.mock.structured import Answer, _pieces

__all__ = [
    "MessagesJsonEvents",
    "MessagesToolEvents",
    "ResponsesJsonEvents",
    "ResponsesToolEvents",
    "call_pieces",
]

_ARGS = b"response.function_call_arguments.delta"


def call_pieces(text: str, n: int) -> list[str]:
    """A call's ``n`` token events: an opening without arguments, then ``text`` in pieces
    (one token: the whole text with the opening)."""
    return ["", *_pieces(text, n - 1)] if n > 1 else [text]


class ResponsesToolEvents(ResponsesEvents):
    """A function call, streamed as Responses events (after any reasoning item)."""

    needs_text = False

    def __init__(
        self,
        rid: str,
        created: int,
        spec: GenSpec,
        n_reason: int,
        keep: Callable[[str, list[str]], None] | None,
        previous: str | None = None,
        *,
        answer: Answer,
        n_out: int,
    ):
        super().__init__(rid, created, spec, n_reason, keep, previous)
        self.answer = answer
        self.pieces = call_pieces(answer.text, max(1, n_out - n_reason))
        self.fc_id = "fc_" + rid
        tag = random.Random(rid).getrandbits(64)
        self.call_id = f"call_{tag:016x}"
        self.seq = 0
        self.dhead = b'event: %s\ndata: {"delta":' % _ARGS
        self.dtail = b',"item_id":"%s","output_index":%d,"sequence_number":' % (
            self.fc_id.encode(),
            self.out,
        )

    def _item(self, status: str, arguments: str) -> dict[str, Any]:
        return {
            "arguments": arguments, "call_id": self.call_id, "name": self.answer.tool,
            "type": "function_call", "id": self.fc_id, "async": None, "caller": None,
            "namespace": None, "status": status,
        }  # fmt: skip

    def first(self) -> bytes:
        return chunk(self._opening() + (self._added(2, True) if self.n_reason else b""))

    def _next(self) -> int:
        self.seq += 1
        return self.seq - 1

    def _delta(self, text: str) -> bytes:
        return (
            self.dhead
            + orjson.dumps(text)
            + self.dtail
            + b"%d" % self._next()
            + b',"type":"%s"}\n\n' % _ARGS
        )

    def _open(self, k: int) -> bytes:
        """The reasoning item's end (if any) and the call's ``output_item.added``."""
        switch = b""
        if self.n_reason:
            switch = self._reasoning_done(4 + k, "")
            self.seq = 7 + k
        else:
            self.seq = 2
        added = {
            "item": self._item("in_progress", ""), "output_index": self.out,
            "sequence_number": self._next(), "type": "response.output_item.added",
        }  # fmt: skip
        return switch + _event("response.output_item.added", added)

    def token(self, k: int, v: int) -> bytes:
        j = k - self.n_reason
        if j == 0:
            data = self._open(k)
            return chunk(data + self._delta(self.pieces[0]) if self.pieces[0] else data)
        return chunk(self._delta(self.pieces[j]))

    def _output(self) -> list[dict[str, Any]]:
        output = [self._item("completed", self.answer.text)]
        if self.n_reason:
            output.insert(0, self._reasoning_item(""))
        return output

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        head = self.token(k, v)
        ids = {"item_id": self.fc_id, "output_index": self.out}
        done = _event(
            "response.function_call_arguments.done",
            {"arguments": self.answer.text, **ids, "name": self.answer.tool,
             "sequence_number": self._next(), "type": "response.function_call_arguments.done"},
        ) + _event(
            "response.output_item.done",
            {"item": self._item("completed", self.answer.text), "output_index": self.out,
             "sequence_number": self._next(), "type": "response.output_item.done"},
        )  # fmt: skip
        final = self._response("completed", self._output(), self._usage(k + 1))
        self._keep_call()
        completed = {"response": final, "sequence_number": self._next(),
                     "type": "response.completed"}  # fmt: skip
        return head + chunk(done + _event("response.completed", completed))

    def _keep_call(self) -> None:
        if self.keep is not None:
            self.keep(self.rid, [str(t) for t in self.spec.tokens] + self.answer.text.split())

    def body(self, variants: bytes, finish: str) -> bytes:
        self._keep_call()
        return orjson.dumps(self._response("completed", self._output(), self._usage(len(variants))))


class ResponsesJsonEvents(ResponsesEvents):
    """A JSON answer (``text.format``), streamed as ``output_text`` deltas of its pieces."""

    def __init__(self, *args: Any, answer: Answer, n_out: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answer = answer
        self.pieces = _pieces(answer.text, max(1, n_out - self.n_reason))
        self.jhead = b'event: response.output_text.delta\ndata: {"content_index":0,"delta":'
        self.jtail = b',"item_id":"%s","logprobs":[],"output_index":%d,"sequence_number":' % (
            self.msg_id.encode(),
            self.out,
        )

    def _head(self, k: int, v: int) -> bytes:
        return self.jhead + orjson.dumps(self.pieces[k - self.n_reason]) + self.jtail

    def answer_text(self, variants: bytes) -> str:
        return self.answer.text

    def token(self, k: int, v: int) -> bytes:
        return chunk(self._switch(k) + self._head(k, v) + b"%d" % (self.base + k) + self.tail)

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        """The whole answer is sent: ``completed``, as chat's JSON answer ends ``stop``."""
        return super().last(k, v, self.answer.finish, variants)

    def body(self, variants: bytes, finish: str) -> bytes:
        return super().body(variants, self.answer.finish)


class MessagesToolEvents(MessagesEvents):
    """A tool call, streamed as a Messages ``tool_use`` block (after any thinking block)."""

    def __init__(
        self, rid: str, model: str, prompt_tokens: int, n_reason: int, *, answer: Answer, n_out: int
    ):
        super().__init__(rid, model, prompt_tokens, n_reason)
        self.frames = None
        self.answer = answer
        self.pieces = call_pieces(answer.text, max(1, n_out - n_reason))
        self.tool_id = f"toolu_{random.Random(rid).getrandbits(64):016x}"

    def first(self) -> bytes:
        opening = self._message_start()
        if self.n_reason:
            opening += _start(0, b'{"type":"thinking","thinking":""}')
        return chunk(opening)

    def _args(self, text: str) -> bytes:
        data = b'{"type":"content_block_delta","delta":{"type":"input_json_delta",'
        data += b'"partial_json":%s},"index":%d}' % (orjson.dumps(text), self.index)
        return _sse(b"content_block_delta", data)

    def token(self, k: int, v: int) -> bytes:
        j = k - self.n_reason
        if j:
            return chunk(self._args(self.pieces[j]))
        out = b""
        if self.n_reason:  # the thinking block's signature and end
            out = _thinking_end()
        block: dict[str, Any] = {"type": "tool_use", "id": self.tool_id, "name": self.answer.tool}
        block["input"] = {}
        out += _start(self.index, orjson.dumps(block))
        if self.pieces[0]:
            out += self._args(self.pieces[0])
        return chunk(out)

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        return self.token(k, v) + self._ending(k, b"tool_use")

    def body(self, variants: bytes, finish: str) -> bytes:
        try:
            value: Any = orjson.loads(self.answer.text)
        except orjson.JSONDecodeError:
            value = self.answer.text  # a broken answer (fault invalid_json): its text as is
        content: list[dict[str, Any]] = []
        if self.n_reason:
            content.append({"type": "thinking", "thinking": "", "signature": SIGNATURE})
        content.append({"type": "tool_use", "id": self.tool_id, "name": self.answer.tool,
                        "input": value})  # fmt: skip
        return orjson.dumps({
            "id": self.rid, "type": "message", "role": "assistant", "content": content,
            "model": self.model, "stop_reason": "tool_use",
            "usage": self.usage(len(variants)),
        })  # fmt: skip


class MessagesJsonEvents(MessagesEvents):
    """A JSON answer (``output_config.format``), streamed as ``text_delta`` events of its
    pieces (after any thinking block)."""

    def __init__(
        self, rid: str, model: str, prompt_tokens: int, n_reason: int, *, answer: Answer, n_out: int
    ):
        super().__init__(rid, model, prompt_tokens, n_reason)
        self.frames = None  # every event differs
        self.answer = answer
        self.pieces = _pieces(answer.text, max(1, n_out - n_reason))

    def token(self, k: int, v: int) -> bytes:
        text = orjson.dumps(self.pieces[k - self.n_reason])
        return self._switch(k) + chunk(_delta(self.index, b"text_delta", b"text", text))

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        """The whole answer is sent: ``end_turn``, as chat's JSON answer ends ``stop``."""
        stop = STOP_REASONS.get(self.answer.finish, "end_turn").encode()
        return self.token(k, v) + self._ending(k, stop)

    def body(self, variants: bytes, finish: str) -> bytes:
        content: list[dict[str, Any]] = []
        if self.n_reason:
            content.append({"type": "thinking", "thinking": "", "signature": SIGNATURE})
        content.append({"type": "text", "text": self.answer.text})
        return orjson.dumps({
            "id": self.rid, "type": "message", "role": "assistant", "content": content,
            "model": self.model, "stop_reason": STOP_REASONS.get(self.answer.finish, "end_turn"),
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": len(variants)},
        })  # fmt: skip
