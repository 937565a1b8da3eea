"""An agent's context as it grows: what each call sends, its planned length, truncation.

The context is a head (the system prompt, when there is one, and the first
user message, or for a sub-agent the parent's whole context) and then one
*round* per earlier call: the answer as it really came back and the tool
result after it. Messages stay :data:`~loadgen.workload.plan.Message`
(``dict[str, str]``); a round whose answer made a real tool call (with
``workload.tools``) says so in three more keys, which each API's adapter
maps to its own form (:mod:`loadgen.client.adapters.agent_messages`):

- the answer: ``{"role": "assistant", "content": text, "call_id", "call_name",
  "call_arguments"}`` (the model's function name and arguments; the id is
  loadgen's own, ``call_<request id>``, one per answer);
- the result: ``{"role": "tool", "content": result, "call_id", "call_name"}``.

An answer without a tool call is a plain assistant message and its result a
user message (a ``tool`` message with no call before it breaks chat templates
that pair them, and servers that check).

Truncation (``max_context_tokens``): before a call whose prompt would be longer,
the oldest rounds are dropped, never the head nor the newest round (the result
the call acts on). Dropped rounds stay dropped for the later calls, as agents
compact; each call's ``truncated_tokens`` is what its prompt leaves out.

Planned lengths: with a tokenizer the whole prompt is counted as the server
counts it (the chat template rendered; a real tool call's keys are not
rendered the server's way, so such a prompt's count is close, not exact).
Without one, words, as the mock counts them: every content and every call's
arguments. A text API (openai-completions, tgi) gets the context flattened
to ``role: content`` lines and its count is that text's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadgen.workload.plan import Message
from loadgen.workload.prompts import PromptMaker, word_count

__all__ = ["AgentContext", "ToolUse", "flatten", "round_messages"]


@dataclass(slots=True, frozen=True)
class ToolUse:
    """The real tool call an answer made: loadgen's id for it, the model's name and arguments."""

    id: str
    name: str
    arguments: str


def round_messages(answer: str, tool: ToolUse | None, result: str) -> list[Message]:
    """One round: the answer and the tool result after it, in the neutral form."""
    if tool is None:
        return [{"role": "assistant", "content": answer}, {"role": "user", "content": result}]
    call = {"call_id": tool.id, "call_name": tool.name}
    return [
        {"role": "assistant", "content": answer, **call, "call_arguments": tool.arguments},
        {"role": "tool", "content": result, **call},
    ]


def flatten(messages: list[Message]) -> str:
    """A context as text for a text API: ``role: content`` lines (a call's name and
    arguments after its answer's text)."""
    lines = []
    for m in messages:
        text = m["content"]
        if "call_arguments" in m:
            text = f"{text} {m['call_name']} {m['call_arguments']}".lstrip()
        lines.append(f"{m['role']}: {text}")
    return "\n".join(lines)


@dataclass(slots=True)
class _Round:
    messages: list[Message]
    tokens: int  # what adding it grew the count by


@dataclass(slots=True)
class AgentContext:
    """One agent's context; :meth:`prompt` gives the next call's messages and length."""

    maker: PromptMaker
    head: list[Message]
    limit: int | None = None
    rounds: list[_Round] = field(default_factory=list)
    dropped: int = 0  # tokens of the rounds truncation dropped
    _total: int = -1  # the count of head + rounds (-1: not yet counted)

    def fork(self, answer: str, tool: ToolUse | None, task: str) -> AgentContext:
        """A sub-agent's context: this one, the answer that started it, and its task (as the
        tool result of that answer's call, or a user message); the whole is its head."""
        messages = [*self.messages(), *round_messages(answer, tool, task)]
        return AgentContext(self.maker, messages, self.limit)

    def messages(self) -> list[Message]:
        out = list(self.head)
        for r in self.rounds:
            out += r.messages
        return out

    def add(self, answer: str, tool: ToolUse | None, result: str) -> None:
        """The answer that came back and the tool result after it."""
        before = self.count()
        self.rounds.append(_Round(round_messages(answer, tool, result), 0))
        self._total = self._count(self.messages())
        self.rounds[-1].tokens = self._total - before

    def count(self) -> int:
        if self._total < 0:
            self._total = self._count(self.messages())
        return self._total

    def prompt(self) -> tuple[list[Message] | str, int, int]:
        """(what the next call sends, its planned length, the tokens truncation left out)."""
        total = self.count()
        if self.limit is not None and total > self.limit and len(self.rounds) > 1:
            while total > self.limit and len(self.rounds) > 1:
                gone = self.rounds.pop(0)
                self.dropped += gone.tokens
                total -= gone.tokens
            total = self._total = self._count(self.messages())
        messages = self.messages()
        sent: list[Message] | str = messages if self.maker.chat else flatten(messages)
        return sent, total, self.dropped

    def _count(self, messages: list[Message]) -> int:
        maker = self.maker
        if not maker.chat:
            return maker.count(flatten(messages))
        if maker.tokenizer is not None:
            return maker.count(messages)
        words = word_count(messages)
        words += sum(len(m["call_arguments"].split()) for m in messages if "call_arguments" in m)
        cal = maker.calibration
        return words if cal is None else cal.tokens_for(words)
