"""Protocol adapters, one small file each; :data:`ADAPTERS` maps the scenario's api name.

An adapter builds a request body and turns one stream event into a delta;
it does no I/O. May import: loadgen.workload (the prompt), loadgen.errors.

Public names: ADAPTERS, Adapter, Delta, OpenAIChat, OpenAICompletions,
OpenAITranscriptions, Tgi.
"""

from loadgen.client.adapters.base import Adapter, Delta
from loadgen.client.adapters.openai_chat import OpenAIChat
from loadgen.client.adapters.openai_completions import OpenAICompletions
from loadgen.client.adapters.openai_transcriptions import OpenAITranscriptions
from loadgen.client.adapters.tgi import Tgi

__all__ = [
    "ADAPTERS",
    "Adapter",
    "Delta",
    "OpenAIChat",
    "OpenAICompletions",
    "OpenAITranscriptions",
    "Tgi",
]

ADAPTERS: dict[str, Adapter] = {
    "openai-completions": OpenAICompletions(),
    "openai-chat": OpenAIChat(),
    "tgi": Tgi(),
    "openai-transcriptions": OpenAITranscriptions(),
}
