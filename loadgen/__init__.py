"""loadgen: an exact load generator and benchmark for live LLM inference servers."""

__version__ = "0.1.0"
