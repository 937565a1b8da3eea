"""Small helpers shared by the OpenAI adapters.

Imports: the standard library only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["error_text", "usage_counts"]


def usage_counts(usage: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(prompt_tokens, completion_tokens)`` from an OpenAI usage block."""
    return usage.get("prompt_tokens"), usage.get("completion_tokens")


def error_text(error: Any) -> str:
    """One line from an in-stream error object or string."""
    if isinstance(error, dict):
        return str(error.get("message") or error)[:200]
    return str(error)[:200]
