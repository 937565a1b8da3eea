"""What a step's requests carried beyond text: images, audio, body sizes.

Owns :class:`MediaStats`. Rates are per second of the step's window (the
steady one where the step has one, as ``throughput``).
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["MediaStats"]


class MediaStats(Strict):
    """Images and audio of the step's successful measured requests."""

    images_per_request: float = Field(0.0, description="Mean images a request carried.")
    images_per_s: float = Field(0.0, description="Images sent per second.")
    megapixels_per_request: float = Field(
        0.0, description="Mean megapixels (width x height / 10^6, summed) a request carried."
    )
    megapixels_per_s: float = Field(0.0, description="Megapixels sent per second.")
    audio_s_per_request: float = Field(0.0, description="Mean seconds of audio a request carried.")
    audio_s_per_s: float = Field(
        0.0, description="Seconds of audio sent per second (above 1: faster than real time)."
    )
    request_bytes_mean: float = Field(0.0, description="Mean request body size in bytes.")
