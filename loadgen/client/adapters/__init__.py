"""Protocol adapters, one small file each; :data:`ADAPTERS` maps the scenario's api name."""

from loadgen.client.adapters.base import Adapter, Delta
from loadgen.client.adapters.openai_chat import OpenAIChat
from loadgen.client.adapters.openai_completions import OpenAICompletions
from loadgen.client.adapters.tgi import Tgi

__all__ = ["ADAPTERS", "Adapter", "Delta", "OpenAIChat", "OpenAICompletions", "Tgi"]

ADAPTERS: dict[str, Adapter] = {
    "openai-completions": OpenAICompletions(),
    "openai-chat": OpenAIChat(),
    "tgi": Tgi(),
}
