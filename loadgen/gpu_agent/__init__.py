"""The GPU sidecar agent: samples NVML (or /proc) and serves it over HTTP.

A separate small package that runs beside the inference server; it imports
nothing from the rest of loadgen (a layering test checks it). Entry points:
``python -m loadgen.gpu_agent [ARGS]`` and :func:`main`, which ``loadgen agent``
forwards its raw arguments to. See docs/agent.md.
"""

from loadgen.gpu_agent.cli import build_parser, main

__all__ = ["build_parser", "main"]
