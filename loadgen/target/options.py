"""What every call to the target carries: its headers (the API key from the environment) and TLS.

The load path (:mod:`loadgen.execute.requester`) and the calls outside it
(pre-flight, ``/tokenize``, the prefix-cache scrape, telemetry) read both from here.

Imports: os, loadgen.client.transport (TLS options), loadgen.scenario.
"""

from __future__ import annotations

import os

from loadgen.client.transport import TlsOptions
from loadgen.scenario.models import Scenario

__all__ = ["target_headers", "tls_options"]


def target_headers(sc: Scenario) -> dict[str, str]:
    """The scenario's extra headers, with the API key from its environment variable."""
    headers = dict(sc.target.headers)
    key_env = sc.target.api_key_env
    if key_env and os.environ.get(key_env):
        headers["Authorization"] = f"Bearer {os.environ[key_env]}"
    return headers


def tls_options(sc: Scenario) -> TlsOptions:
    return TlsOptions(sc.target.tls.verify, sc.target.tls.ca_file)
