"""loadgen's built-in inference server: a continuous-batching engine simulator.

Serves OpenAI completions/chat exactly as vLLM streams them, TGI's native
``/generate`` and ``/generate_stream``, vLLM's ``/tokenize``, ``/v1/models``,
``/health`` and ``/metrics`` (vLLM names), with a prefix cache in its engine,
reasoning streams, seeded faults, a simulated network delay and a ground-truth
file. A separate small package: of the rest of loadgen it imports only the
stdlib-only leaf ``loadgen.netstamp`` (kernel receive stamps), besides the
standard library, orjson and (when installed) uvloop. See docs/mock.md.
"""

from loadgen.mock.config import settings_from_argv
from loadgen.mock.model import closed_loop
from loadgen.mock.server import main, serve
from loadgen.mock.settings import DEFAULT_PROFILE, FAULT_KINDS, PROFILES, Profile, Settings

__all__ = [
    "DEFAULT_PROFILE",
    "FAULT_KINDS",
    "PROFILES",
    "Profile",
    "Settings",
    "closed_loop",
    "main",
    "serve",
    "settings_from_argv",
]
