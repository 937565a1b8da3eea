"""The scenario of a run without a file: ``loadgen run --url URL [--model M] [flags]``.

:data:`NO_FILE_DEFAULTS` is the document such a run starts from: the chat
API, fixed 512-token prompts and 128-token answers, a closed-loop sweep of 1,
4, 16 and 64 users, 100 measured requests a step, no SLA. The flags are laid
over it as over a file (:mod:`~loadgen.scenario.overrides`), so ``--rate``,
``--requests``, ``--prompt-tokens`` and the rest shape it; the model is
``auto`` (the one the server lists) unless ``--model`` names one, and the
built-in mock (``--url mock``) takes any name. ``loadgen init`` writes the
same values into the file it makes (:mod:`~loadgen.scenario.starter`), so a
file it wrote and a run without one measure the same thing.

The scenario is validated exactly as a file is (:func:`~loadgen.scenario.load.parse_scenario`,
source ``command line``); the run writes it, resolved, to its results
directory (``scenario.yaml``), from which ``loadgen run`` repeats it.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from urllib.parse import urlsplit

import yaml

from loadgen.errors import ScenarioError
from loadgen.scenario.limits import MAX_NAME
from loadgen.scenario.load import Overrides, parse_scenario
from loadgen.scenario.models import Scenario

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_PROMPT_TOKENS",
    "DEFAULT_REQUESTS",
    "NO_FILE_DEFAULTS",
    "NO_FILE_SOURCE",
    "no_file_scenario",
    "safe_name",
]

DEFAULT_PROMPT_TOKENS = 512
DEFAULT_OUTPUT_TOKENS = 128
DEFAULT_CONCURRENCY = (1, 4, 16, 64)
DEFAULT_REQUESTS = 100

#: what errors in the defaults themselves are blamed on (a flag's own errors name the flag)
NO_FILE_SOURCE = "command line"

#: the document a run without a file starts from (the flags are laid over it)
NO_FILE_DEFAULTS: dict[str, Any] = {
    "name": "run",
    "target": {"api": "openai-chat"},
    "workload": {
        "seed": 0,
        "prompt_tokens": {"dist": "fixed", "value": DEFAULT_PROMPT_TOKENS},
        "output_tokens": {"dist": "fixed", "value": DEFAULT_OUTPUT_TOKENS},
    },
    "load": {
        "mode": "concurrency",
        "concurrency": list(DEFAULT_CONCURRENCY),
        "requests_per_step": DEFAULT_REQUESTS,
    },
}

_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@,-]+")


def safe_name(text: str, fallback: str = "run") -> str:
    """``text`` as a scenario name (one path component): ``Qwen/Qwen2.5-7B`` ->
    ``Qwen-Qwen2.5-7B``."""
    name = _UNSAFE.sub("-", text).lstrip(".-")[:MAX_NAME].rstrip("-")
    return name or fallback


def no_file_scenario(overrides: Overrides) -> Scenario:
    """The defaults with the flags laid over them; ``--url`` is required.

    The run is named after ``--model`` (made path-safe), else after the URL's
    host (``mock`` for the built-in mock): results/<name>-<time> by default.
    """
    url = _flag_value(overrides, "--url", ("target", "url"))
    if url is None:
        msg = (
            f"{NO_FILE_SOURCE}: give a SCENARIO file or --url URL "
            "(e.g. loadgen run --url http://127.0.0.1:8000 --model auto)"
        )
        raise ScenarioError(msg)
    raw = copy.deepcopy(NO_FILE_DEFAULTS)
    model = _flag_value(overrides, "--model", ("target", "model"))
    if model is None and url != "mock":
        raw["target"]["model"] = "auto"  # the one model the server lists
    if isinstance(model, str) and model != "auto":
        raw["name"] = safe_name(model)
    elif isinstance(url, str):
        raw["name"] = safe_name(url if url == "mock" else (_host(url) or "run"))
    return parse_scenario(yaml.safe_dump(raw, sort_keys=False), NO_FILE_SOURCE, overrides)


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None  # the URL's own check says what is wrong with it


def _flag_value(overrides: Overrides, flag: str, path: tuple[str, ...]) -> Any:
    return overrides.get(flag, {}).get(path)
