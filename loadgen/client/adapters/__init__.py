"""Protocol adapters, one small file each; :data:`ADAPTERS` maps the scenario's api name.

An adapter builds a request body and turns one stream event into a delta;
it does no I/O. May import: loadgen.workload (the prompt), loadgen.errors.

An adapter that sends tools or a response format (an
:class:`~loadgen.workload.tools.OutputAsk`) is built per run by
:func:`make_adapter` from :data:`WITH_OUTPUT`.

Public names: ADAPTERS, WITH_OUTPUT, Adapter, AnthropicMessages, Delta, OpenAIChat,
OpenAICompletions, OpenAIEmbeddings, OpenAIResponses, OpenAITranscriptions, Rerank, Tgi,
make_adapter.
"""

from collections.abc import Callable

from loadgen.client.adapters.anthropic_messages import AnthropicMessages
from loadgen.client.adapters.base import Adapter, Delta
from loadgen.client.adapters.openai_chat import OpenAIChat
from loadgen.client.adapters.openai_completions import OpenAICompletions
from loadgen.client.adapters.openai_embeddings import OpenAIEmbeddings
from loadgen.client.adapters.openai_responses import OpenAIResponses
from loadgen.client.adapters.openai_transcriptions import OpenAITranscriptions
from loadgen.client.adapters.rerank import Rerank
from loadgen.client.adapters.tgi import Tgi
from loadgen.workload import OutputAsk

__all__ = [
    "ADAPTERS",
    "WITH_OUTPUT",
    "Adapter",
    "AnthropicMessages",
    "Delta",
    "OpenAIChat",
    "OpenAICompletions",
    "OpenAIEmbeddings",
    "OpenAIResponses",
    "OpenAITranscriptions",
    "Rerank",
    "Tgi",
    "make_adapter",
]

ADAPTERS: dict[str, Adapter] = {
    "openai-completions": OpenAICompletions(),
    "openai-chat": OpenAIChat(),
    "tgi": Tgi(),
    "openai-responses": OpenAIResponses(),
    "anthropic-messages": AnthropicMessages(),
    "openai-embeddings": OpenAIEmbeddings(),
    "rerank": Rerank(),
    "openai-transcriptions": OpenAITranscriptions(),
}

#: api -> the adapter that sends tools / a response format with every request
WITH_OUTPUT: dict[str, Callable[[OutputAsk], Adapter]] = {
    "openai-chat": OpenAIChat,
    "openai-responses": OpenAIResponses,
    "anthropic-messages": AnthropicMessages,
}


def make_adapter(api: str, output: OutputAsk | None = None) -> Adapter:
    """The adapter of ``api``; with ``output``, one that sends its tools or response format
    (ValueError for an API that carries none: the scenario refuses that first)."""
    if output is None:
        return ADAPTERS[api]
    build = WITH_OUTPUT.get(api)
    if build is None:
        raise ValueError(f"{api} sends no tools or response_format")
    return build(output)
