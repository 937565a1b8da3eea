"""What one request is (:class:`RequestSpec`) and the seeding of each step's draws.

Seeded per (workload seed, step index), so each step sees the same requests
whatever ran before it, and a rerun sends the same prompts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from loadgen.workload.media import Media

__all__ = ["Message", "Prompt", "RequestSpec", "step_rng"]


#: One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``.
Message = dict[str, str]
#: What a request sends: text, token ids (completions only) or chat messages.
Prompt = str | list[int] | list[Message]


@dataclass(slots=True, frozen=True)
class RequestSpec:
    """One request to send."""

    index: int
    prompt: Prompt
    prompt_tokens: int  # as planned: exact with a tokenizer, else the approximation
    max_tokens: int
    warmup: bool = False
    ramp: bool = False  # started during load.ramp_up_s: recorded, out of the metrics
    session: int | None = None
    turn: int | None = None  # 0-based turn of a multi-turn session
    keep_text: bool = False  # the runner needs the answer text (multi-turn sessions)
    # -- model mixes (target.models)
    model: str | None = None  # the model this request names; None: target.model
    # -- Responses sessions (workload.sessions.state: server)
    #: the server keeps this turn's answer (Responses ``store``): the next turn chains it
    server_state: bool = False
    #: the previous turn's response id: the prompt holds only the new message
    previous_response_id: str | None = None
    # -- pooling APIs (embeddings, rerank)
    #: embeddings: the texts to embed; rerank: the documents (``prompt`` is the query)
    inputs: tuple[str, ...] = ()
    # -- inputs beyond text (images, audio)
    media: tuple[Media, ...] = ()  # encoded when the workload is built (workload.media)
    # -- synthetic media made off the event loop (closed loop)
    #: (draw, index) of synthetic media still to make (``MediaMaker.made``): a closed
    #: loop's requests are planned without them, and loadgen.execute.media_feed makes
    #: them in a helper process ahead of the send; None: nothing left to make
    media_due: tuple[int, int] | None = None
    # -- agents (workload.agent, agent traces): ``session`` is the agent task
    call: int | None = None  # 0-based index of this LLM call in its agent's loop
    agent: int | None = None  # which agent of the task: 0 the main one, 1.. its sub-agents
    parent: int | None = None  # a sub-agent's call: the index of the call that started it
    agent_depth: int | None = None  # 0 the main agent, 1 a sub-agent, ...
    truncated_tokens: int = 0  # context dropped to stay within max_context_tokens
    # -- users who stop (workload.cancel): abort the stream after this much
    cancel_after_tokens: int | None = None  # token events received
    cancel_after_ns: int | None = None  # since the request was sent


def step_rng(seed: int, step: int, stream: int) -> np.random.Generator:
    """Independent generator for (seed, step, stream); stream 0 = requests, 1 = arrivals."""
    return np.random.default_rng([seed, step, stream])
