"""The ``workload.images`` and ``workload.audio`` sections: inputs beyond text.

Synthetic media are made locally and seeded per request (:mod:`loadgen.workload.media`);
images from a dataset come with its rows (``"images": [...]`` in a JSONL row).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.scenario.dists import Distribution, FixedDist, FloatDistribution
from loadgen.strict import Spec

__all__ = [
    "AUDIO_APIS",
    "IMAGE_APIS",
    "MAX_AUDIO_S",
    "MAX_IMAGES",
    "MAX_IMAGE_SIDE",
    "AudioSpec",
    "ImagesSpec",
    "media_fits",
]

#: the APIs that take images in a request (builders in loadgen.client.adapters.media_parts),
#: and those that take audio
IMAGE_APIS = ("openai-chat", "openai-responses", "anthropic-messages")
AUDIO_APIS = ("openai-chat", "openai-transcriptions")

#: Draws of an image's side are clamped to this many pixels, counts to MAX_IMAGES,
#: audio lengths to MAX_AUDIO_S: bounds on what one request may carry in memory.
MAX_IMAGE_SIDE = 8192
MAX_IMAGES = 64
MAX_AUDIO_S = 3600.0


class ImagesSpec(Spec):
    count: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=1),
        description=f"Images per request (draws clamped to {MAX_IMAGES}).",
    )
    width: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=512),
        description=f"Width of each image in pixels (draws clamped to {MAX_IMAGE_SIDE}).",
    )
    height: Distribution = Field(
        default_factory=lambda: FixedDist(dist="fixed", value=512),
        description=f"Height of each image in pixels (draws clamped to {MAX_IMAGE_SIDE}).",
    )
    format: Literal["png", "jpeg"] = Field(
        "png", description="Encoding of the synthetic images: png | jpeg."
    )


class AudioSpec(Spec):
    seconds: FloatDistribution = Field(
        description=f"Length of each request's audio clip in seconds (clamped to "
        f"[0.1, {MAX_AUDIO_S:.0f}])."
    )
    sample_rate: int = Field(
        16000, ge=8000, le=48000, description="Samples per second of the WAV (mono, 16-bit)."
    )


def media_fits(api: str, images: ImagesSpec | None, audio: AudioSpec | None) -> str | None:
    """Why this api cannot send these inputs (one line), or None."""
    if images is not None and api not in IMAGE_APIS:
        return f"workload.images needs target.api {' | '.join(IMAGE_APIS)}, not {api}"
    if audio is not None and api not in AUDIO_APIS:
        return f"workload.audio needs target.api {' | '.join(AUDIO_APIS)}, not {api}"
    if api == "openai-transcriptions":
        if audio is None:
            return "target.api openai-transcriptions needs workload.audio (the clip to send)"
        if images is not None:
            return "target.api openai-transcriptions sends audio only: drop workload.images"
    return None
