"""``/v1/responses`` events and bodies, byte for byte as vLLM 0.32 sends them.

vLLM's simple (non-harmony) stream: ``response.created`` and
``response.in_progress`` (the response so far), then per output item an
``output_item.added`` and ``content_part.added``, one delta event per token
(``response.reasoning_text.delta`` for the leading reasoning tokens,
``response.output_text.delta`` for the answer), the item's three ``done``
events, and ``response.completed`` with the whole response (its output
items, ``status`` ``incomplete`` when cut at ``max_output_tokens``, and
``usage``). Every event carries an ``event:`` line and a ``sequence_number``
(0, 1, 2, ... in the order written); no ``[DONE]``. (One difference: the
``done`` events of a reasoning item that closes mid-stream carry no text; the
final event has it.) vLLM writes no delta for
a token that decodes to no text; the mock's Responses tokens all have text,
so its events equal its usage counts.

Per request the constant parts of each token event are encoded once; a token
event is its pre-encoded head, its sequence number and a fixed tail. The
completed response is stored for ``previous_response_id`` (``keep``) when the
request asked (``store``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from loadgen.mock.events import TEXTS, Events
from loadgen.mock.http_framing import CHUNK_END, chunk
from loadgen.mock.request import GenSpec

__all__ = ["ResponsesEvents", "answer_words", "token_text"]

_DELTA = b"response.output_text.delta"
_RDELTA = b"response.reasoning_text.delta"


def token_text(v: int) -> str:
    """The text of a token of variant ``v``: never empty (variant 0 reads as variant 1)."""
    return TEXTS[v or 1]


def answer_words(variants: bytes) -> list[str]:
    """The words of the answer made of ``variants`` (the tokens a later turn counts)."""
    return "".join(token_text(v) for v in variants).split()


def _sse(kind: str, value: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(value) + b"\n\n"


class ResponsesEvents(Events):
    """One request's ``/v1/responses`` stream (``n_reason`` leading reasoning tokens)."""

    needs_text = True

    def __init__(
        self,
        rid: str,
        created: int,
        spec: GenSpec,
        n_reason: int,
        keep: Callable[[str, list[str]], None] | None,
        previous: str | None = None,
    ):
        self.rid = "resp_" + rid
        self.created = created
        self.spec = spec
        self.n_reason = n_reason
        self.keep = keep if spec.store else None
        self.previous = previous
        self.msg_id = "msg_" + rid
        self.rs_id = "rs_" + rid
        self.out = 1 if n_reason else 0  # the message item's output_index
        self.base = 9 if n_reason else 4  # sequence number of answer token k is base + k
        json_text = [orjson.dumps(token_text(v)) for v in range(len(TEXTS))]
        self.heads = [
            b'event: %s\ndata: {"content_index":0,"delta":%s,"item_id":"%s",'
            b'"logprobs":[],"output_index":%d,"sequence_number":'
            % (_DELTA, t, self.msg_id.encode(), self.out)
            for t in json_text
        ]
        self.tail = b',"type":"%s"}\n\n' % _DELTA
        self.rheads = [
            b'event: %s\ndata: {"content_index":0,"delta":%s,"item_id":"%s",'
            b'"output_index":0,"sequence_number":' % (_RDELTA, t, self.rs_id.encode())
            for t in json_text
        ]
        self.rtail = b',"type":"%s"}\n\n' % _RDELTA

    def _response(self, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        # ResponsesResponse.from_request, fields in vLLM's order
        incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self.rid, "created_at": self.created, "incomplete_details": incomplete,
            "instructions": None, "metadata": None, "model": self.spec.model,
            "object": "response", "output": output, "parallel_tool_calls": True,
            "temperature": 1.0, "tool_choice": "none", "tools": [], "top_p": 1.0,
            "background": False, "max_output_tokens": self.spec.max_tokens,
            "max_tool_calls": None, "previous_response_id": self.previous, "prompt": None,
            "reasoning": None, "service_tier": "auto", "status": status, "text": None,
            "top_logprobs": None, "truncation": "disabled", "usage": usage, "user": None,
            "presence_penalty": 0.0, "frequency_penalty": 0.0, "kv_transfer_params": None,
            "ec_transfer_params": None, "input_messages": None, "output_messages": None,
        }  # fmt: skip

    def _added(self, seq: int, reasoning: bool) -> bytes:
        if reasoning:
            item: dict[str, Any] = {
                "id": self.rs_id, "summary": [], "type": "reasoning", "content": None,
                "encrypted_content": None, "status": "in_progress",
            }  # fmt: skip
            part: dict[str, Any] = {"text": "", "type": "reasoning_text"}
        else:
            item = {
                "id": self.msg_id, "content": [], "role": "assistant", "status": "in_progress",
                "type": "message", "phase": None,
            }  # fmt: skip
            part = {"annotations": [], "text": "", "type": "output_text", "logprobs": []}
        out = 0 if reasoning else self.out
        item_id = self.rs_id if reasoning else self.msg_id
        added = {"item": item, "output_index": out, "sequence_number": seq}
        part_added = {
            "content_index": 0, "item_id": item_id, "output_index": out, "part": part,
            "sequence_number": seq + 1,
        }  # fmt: skip
        return _sse(
            "response.output_item.added", {**added, "type": "response.output_item.added"}
        ) + _sse(
            "response.content_part.added", {**part_added, "type": "response.content_part.added"}
        )

    def _reasoning_item(self, text: str) -> dict[str, Any]:
        return {
            "id": self.rs_id, "summary": [], "type": "reasoning",
            "content": [{"text": text, "type": "reasoning_text"}],
            "encrypted_content": None, "status": "completed",
        }  # fmt: skip

    def _message_item(self, text: str) -> dict[str, Any]:
        part: dict[str, Any] = {
            "annotations": [], "text": text, "type": "output_text", "logprobs": None
        }  # fmt: skip
        return {
            "id": self.msg_id, "content": [part] if text else [], "role": "assistant",
            "status": "completed", "type": "message", "phase": None,
        }  # fmt: skip

    def _reasoning_done(self, seq: int, text: str) -> bytes:
        ids = {"content_index": 0, "item_id": self.rs_id, "output_index": 0}
        part = {"text": text, "type": "reasoning_text"}
        return (
            _sse("response.reasoning_text.done", {**ids, "sequence_number": seq, "text": text,
                 "type": "response.reasoning_text.done"})
            + _sse("response.content_part.done", {**ids, "part": part, "sequence_number": seq + 1,
                   "type": "response.content_part.done"})
            + _sse("response.output_item.done", {"item": self._reasoning_item(text),
                   "output_index": 0, "sequence_number": seq + 2,
                   "type": "response.output_item.done"})
        )  # fmt: skip

    def _opening(self) -> bytes:
        """``response.created`` and ``response.in_progress`` (sequence numbers 0 and 1)."""
        initial = self._response("in_progress", [], None)
        return _sse(
            "response.created",
            {"response": initial, "sequence_number": 0, "type": "response.created"},
        ) + _sse(
            "response.in_progress",
            {"response": initial, "sequence_number": 1, "type": "response.in_progress"},
        )

    def first(self) -> bytes:
        return chunk(self._opening() + self._added(2, bool(self.n_reason)))

    def reasoning(self, k: int, v: int) -> bytes:
        return chunk(self.rheads[v] + b"%d" % (4 + k) + self.rtail)

    def _switch(self, k: int) -> bytes:
        """Before the first answer token after reasoning: the reasoning item's end, the
        message item's start (the reasoning text is not needed: it is in the final event)."""
        if not self.n_reason or k != self.n_reason:
            return b""
        return self._reasoning_done(4 + k, "") + self._added(7 + k, False)

    def token(self, k: int, v: int) -> bytes:
        return chunk(self._switch(k) + self.heads[v] + b"%d" % (self.base + k) + self.tail)

    def _head(self, k: int, v: int) -> bytes:
        """The answer token's event up to its sequence number."""
        return self.heads[v]

    def answer_text(self, variants: bytes) -> str:
        """The answer's text (the reasoning tokens left out)."""
        return "".join(token_text(x) for x in variants[self.n_reason :])

    def last(self, k: int, v: int, finish: str, variants: bytes) -> bytes:
        seq = self.base + k
        r = self.n_reason
        text = self.answer_text(variants)
        status = "incomplete" if finish == "length" else "completed"
        output = [self._message_item(text)]
        if r:
            output.insert(0, self._reasoning_item("".join(token_text(x) for x in variants[:r])))
        ids = {"content_index": 0, "item_id": self.msg_id, "output_index": self.out}
        part = (
            output[-1]["content"][0]
            if text
            else {"annotations": [], "text": "", "type": "output_text", "logprobs": None}
        )
        ending = (
            _sse("response.output_text.done", {"content_index": 0, "item_id": self.msg_id,
                 "logprobs": [], "output_index": self.out, "sequence_number": seq + 1,
                 "text": text, "type": "response.output_text.done"})
            + _sse("response.content_part.done", {**ids, "part": part,
                   "sequence_number": seq + 2, "type": "response.content_part.done"})
            + _sse("response.output_item.done", {"item": output[-1], "output_index": self.out,
                   "sequence_number": seq + 3, "type": "response.output_item.done"})
        )  # fmt: skip
        final = self._response(status, output, self._usage(len(variants)))
        self._keep(variants)
        completed = {"response": final, "sequence_number": seq + 4, "type": "response.completed"}
        return chunk(
            self._switch(k)
            + self._head(k, v)
            + b"%d" % seq
            + self.tail
            + ending
            + _sse("response.completed", completed)
        )

    def trailer(self, n: int, done: bool) -> bytes:
        return CHUNK_END  # response.completed was the last event: no [DONE]

    def error_event(self, message: str) -> bytes:
        """OpenAI's ``error`` event (``code``, ``message``, ``param``, ``sequence_number``)."""
        body = {"code": "server_error", "message": message, "param": None,
                "sequence_number": 0, "type": "error"}  # fmt: skip
        return chunk(b"event: error\ndata: " + orjson.dumps(body) + b"\n\n")

    def _usage(self, n: int) -> dict[str, Any]:
        p = self.spec.prompt_tokens
        return {
            "input_tokens": p,
            "input_tokens_details": {"cached_tokens": self.cached_tokens,
                                     "cache_write_tokens": self.created_tokens,
                                     "input_tokens_per_turn": [], "cached_tokens_per_turn": []},
            "output_tokens": n,
            "output_tokens_details": {"reasoning_tokens": min(n, self.n_reason),
                                      "tool_output_tokens": 0, "output_tokens_per_turn": [],
                                      "tool_output_tokens_per_turn": []},
            "total_tokens": p + n,
        }  # fmt: skip

    def _keep(self, variants: bytes) -> None:
        if self.keep is not None:
            answer = self.answer_text(variants).split()
            self.keep(self.rid, [str(t) for t in self.spec.tokens] + answer)

    def body(self, variants: bytes, finish: str) -> bytes:
        r = self.n_reason
        output = [self._message_item(self.answer_text(variants))]
        if r:
            output.insert(0, self._reasoning_item("".join(token_text(x) for x in variants[:r])))
        status = "incomplete" if finish == "length" else "completed"
        self._keep(variants)
        return orjson.dumps(self._response(status, output, self._usage(len(variants))))
