"""What every call to the target carries: its headers (the API key from the environment) and TLS.

The load path (:mod:`loadgen.execute.requester`) and the calls outside it
(pre-flight, ``/tokenize``, the step boundaries' ``/metrics`` scrape, telemetry)
read both from here.
"""

from __future__ import annotations

import os

from loadgen.client import ADAPTERS, TlsOptions
from loadgen.scenario import Scenario

__all__ = ["target_headers", "tls_options"]


def target_headers(sc: Scenario) -> dict[str, str]:
    """The API's own headers (``anthropic-version``), the scenario's extra headers over
    them, and the API key from its environment variable in the headers the API reads
    it from (``Authorization: Bearer``; Anthropic's ``x-api-key`` too)."""
    adapter = ADAPTERS[sc.target.api]
    headers = {**adapter.headers, **sc.target.headers}
    key_env = sc.target.api_key_env
    if key_env and os.environ.get(key_env):
        headers.update(adapter.auth_headers(os.environ[key_env]))
    return headers


def tls_options(sc: Scenario) -> TlsOptions:
    return TlsOptions(sc.target.tls.verify, sc.target.tls.ca_file)
