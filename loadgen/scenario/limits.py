"""Upper (and a few lower) bounds on scenario values, so no input can overflow or exhaust memory.

Each bound is far beyond any real benchmark and well below what would make
loadgen crash (an overflowing float, a list of 10^12 requests, a billion-token
prompt). docs/scenario.md lists them; every float is also finite (no .inf, .nan).
"""

from __future__ import annotations

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_CONCURRENCY",
    "MAX_FILE_BYTES",
    "MAX_LIST",
    "MAX_NAME",
    "MAX_RATE",
    "MAX_REQUESTS",
    "MAX_SCALE",
    "MAX_SECONDS",
    "MAX_TOKENS",
    "MAX_VOCAB",
    "MAX_WORKERS",
    "MIN_RATE",
    "MIN_SCALE",
    "MIN_SECONDS",
]

#: durations, timeouts, waits, think times: one week
MAX_SECONDS = 604_800.0
#: the shortest timeout or polling interval
MIN_SECONDS = 0.001
#: requests in flight (concurrency, max_concurrency, probe_concurrency)
MAX_CONCURRENCY = 100_000
#: requests per step, warm-up requests, dataset limit
MAX_REQUESTS = 10_000_000
#: requests per second
MAX_RATE = 1_000_000.0
MIN_RATE = 1e-6
#: a prompt or output length in tokens, and a prefix
MAX_TOKENS = 2_000_000
#: the vocabulary of token-id prompts
MAX_VOCAB = 10_000_000
#: trace time_scale and burstiness
MAX_SCALE = 1e6
MIN_SCALE = 1e-6
#: values in a sweep list (concurrency, rate, time_scale) or an empirical list
MAX_LIST = 10_000
#: characters of the scenario's name
MAX_NAME = 100
#: worker processes of one run (load.workers)
MAX_WORKERS = 256
#: target.extra_body as JSON: every request carries it
MAX_BODY_BYTES = 1_048_576
#: the files a scenario names, by what they are (each is refused larger, and read no further)
MAX_FILE_BYTES = {
    "dataset": 4 << 30,  # read whole: ShareGPT's is 0.7 GB
    "trace": 16 << 30,  # read a row at a time
    "tokenizer": 1 << 30,  # tokenizer.json: tens of MB for the largest vocabularies
    "lengths file": 256 << 20,  # one count a line
    "CA file": 16 << 20,  # PEM certificates
    "tools file": 16 << 20,  # function definitions, read whole
    "schema": 16 << 20,  # one JSON schema, read whole
}
