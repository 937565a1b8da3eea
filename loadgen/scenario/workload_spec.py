"""The ``workload`` section: what each request sends.

Lengths come from distributions (``loadgen.scenario.dists``) or a dataset;
prompts are synthetic words, exact-length text for a tokenizer, or token ids;
a shared prefix and multi-turn sessions shape them like production traffic.
Paths are plain strings here; ``loadgen.scenario.load`` resolves relative ones
against the scenario's folder, and the workload package reads the files.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from loadgen.scenario.agent_spec import AgentSpec
from loadgen.scenario.cancel_spec import CancelSpec
from loadgen.scenario.dists import (
    DatasetSpec,
    Distribution,
    FixedDist,
    FloatDistribution,
)
from loadgen.scenario.limits import MAX_REQUESTS, MAX_TOKENS, MAX_VOCAB
from loadgen.scenario.media_spec import AudioSpec, ImagesSpec
from loadgen.scenario.output_spec import ResponseFormatSpec, ToolsSpec
from loadgen.strict import Spec

__all__ = ["PrefixSpec", "SessionSpec", "WorkloadSpec"]


class PrefixSpec(Spec):
    tokens: int | None = Field(
        None,
        ge=1,
        le=MAX_TOKENS,
        description="Length of each shared prefix in tokens (or give `share`).",
    )
    share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Length of the shared prefix as a fraction of the mean prompt length "
        "(instead of tokens).",
    )
    groups: int = Field(
        1,
        ge=1,
        le=MAX_REQUESTS,
        description="How many distinct shared prefixes; each request draws one.",
    )

    @model_validator(mode="after")
    def _one_length(self) -> PrefixSpec:
        if (self.tokens is None) == (self.share is None):
            raise ValueError("give exactly one of `tokens` and `share`")
        return self


class SessionSpec(Spec):
    turns: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=4),
        description="Turns per session; each turn's new user message is "
        "`workload.prompt_tokens` long.",
    )
    think_time_s: FloatDistribution | None = Field(
        None, description="Seconds a user waits after an answer before the next turn (None: 0)."
    )
    # -- Responses sessions
    state: Literal["client", "server"] = Field(
        "client",
        description="client: each turn sends the whole conversation; server (openai-responses "
        "only): each turn sends only its new message and chains previous_response_id, so the "
        "server keeps the conversation.",
    )


class WorkloadSpec(Spec):
    seed: int = Field(
        0, ge=0, le=2**63 - 1, description="Seed of every random draw (0 is a valid seed)."
    )
    prompt_tokens: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=128),
        description="Prompt length in tokens.",
    )
    output_tokens: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=128),
        description="Output length in tokens, sent as max_tokens.",
    )
    prompt_as: Literal["text", "token_ids"] = Field(
        "text",
        description="text: N random common words; token_ids: N random token ids "
        "(exact prompt lengths with no tokenizer; openai-completions only).",
    )
    vocab_size: int = Field(
        1000,
        ge=2,
        le=MAX_VOCAB,
        description="prompt_as token_ids: ids are drawn from [100, vocab_size).",
    )
    tokenizer: str | None = Field(
        None,
        description="A local tokenizer.json or Hugging Face model folder: prompts of exactly "
        "the requested length for that tokenizer (needs loadgen[tokenizers]).",
    )
    calibrate: bool = Field(
        True,
        description="Without a tokenizer: measure words per token once with the server's "
        "/tokenize (vLLM) when it offers one.",
    )
    prompt_tolerance: float = Field(
        0.02,
        ge=0,
        description="Relative difference between requested and server-counted prompt tokens "
        "beyond which a request is flagged.",
    )
    dataset: DatasetSpec | None = Field(
        None, description="Prompts from a local dataset file instead of synthetic ones."
    )
    prefix: PrefixSpec | None = Field(
        None, description="Shared prefixes: each prompt starts with one of `groups` prefixes."
    )
    sessions: SessionSpec | None = Field(
        None, description="Multi-turn chat sessions: each prompt carries the previous turns."
    )
    # -- tool calls and structured output
    tools: ToolsSpec | None = Field(
        None,
        description="Function definitions sent with every request (`file` or synthetic "
        "`count`); each tool call's arguments are validated against its parameters.",
    )
    tool_choice: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="auto, required, none, or the NAME of one tool (sent as a named "
        "function choice); needs `tools`. None: not sent (the server's default, auto).",
    )
    response_format: ResponseFormatSpec | None = Field(
        None,
        description="Schema-constrained answers: {json_schema: FILE} or {type: json_object}; "
        "each answer is validated.",
    )
    # -- pooling APIs (embeddings, rerank): loadgen.scenario.pooling checks them against the api
    batch: Distribution | None = Field(
        None,
        description="api openai-embeddings: inputs per request, each of `prompt_tokens` "
        "tokens (None: 1).",
    )
    documents: Distribution | None = Field(
        None,
        description="api rerank: documents per request, each of `prompt_tokens` tokens (None: 8).",
    )
    query_tokens: Distribution | None = Field(
        None, description="api rerank: the query's length in tokens (None: 16)."
    )
    # -- inputs beyond text (images, audio)
    images: ImagesSpec | None = Field(
        None,
        description="Synthetic images in each request (seeded; openai-chat image_url parts).",
    )
    audio: AudioSpec | None = Field(
        None,
        description="A synthetic WAV clip in each request (openai-chat input_audio, "
        "openai-transcriptions' file).",
    )
    # -- agents: tasks of LLM calls with tool results and sub-agents
    agent: AgentSpec | None = Field(
        None,
        description="Agent tasks: each a loop of LLM calls, every prompt carrying the "
        "earlier answers and tool results (not with `sessions`).",
    )
    # -- users who stop (loadgen.scenario.cancel_spec)
    cancel: CancelSpec | None = Field(
        None,
        description="A share of the requests aborted mid-stream by the client, after "
        "`after_tokens` token events or `after_s` seconds (seeded).",
    )

    @model_validator(mode="after")
    def _compatible(self) -> WorkloadSpec:
        if self.prompt_as == "token_ids":
            for name in ("tokenizer", "dataset", "prefix", "sessions", "agent"):
                if getattr(self, name) is not None:
                    raise ValueError(f"prompt_as token_ids cannot be combined with {name}")
        if self.dataset is not None:
            for name in ("prefix", "sessions", "agent"):
                if getattr(self, name) is not None:
                    raise ValueError(f"a dataset brings its own prompts: drop `{name}`")
        if self.agent is not None and self.sessions is not None:
            raise ValueError("give `sessions` (chats) or `agent` (agent tasks), not both")
        if self.tool_choice is not None and self.tools is None:
            raise ValueError("tool_choice needs `tools` (the functions to choose from)")
        if self.tools is not None and self.response_format is not None:
            raise ValueError("give `tools` or `response_format`, not both")
        return self
