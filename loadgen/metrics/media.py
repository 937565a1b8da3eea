"""A step's inputs beyond text, and how long its requests took to send.

- send duration = sent_ns - start_ns: loadgen began the request to its last
  byte written (the h1 transport's stamp; the others stamp the hand-off).
- images per request = sum(images) / requests; megapixels per second =
  sum(width x height) / 10^6 / window; audio seconds per second = sum(audio_s)
  / window (all over the successful measured requests the step's throughput
  counts).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.metrics.stats import distribution_ms
from loadgen.metrics.vector import Columns
from loadgen.summary import Distribution, MediaStats

__all__ = ["media_stats", "send_ms"]


def send_ms(ok: Columns, confidence: float) -> Distribution | None:
    """The send duration's statistics; None with no successful request."""
    if not len(ok):
        return None
    return distribution_ms(ok["sent"] - ok["start"], confidence=confidence)


def media_stats(ok: Columns, counted: npt.NDArray[np.bool_], window_s: float) -> MediaStats | None:
    """Images, megapixels and audio seconds of the ``counted`` requests; None when no
    request of the step carried any."""
    images, pixels, audio_us = ok["images"], ok["image_pixels"], ok["audio_us"]
    if not len(ok) or not (images.any() or audio_us.any()):
        return None
    n = int(counted.sum())
    per_s = 1.0 / window_s if window_s else 0.0
    per_req = 1.0 / n if n else 0.0
    n_images = int(images[counted].sum())
    mp = int(pixels[counted].sum()) / 1e6
    audio = int(audio_us[counted].sum()) / 1e6
    return MediaStats(
        images_per_request=n_images * per_req,
        images_per_s=n_images * per_s,
        megapixels_per_request=mp * per_req,
        megapixels_per_s=mp * per_s,
        audio_s_per_request=audio * per_req,
        audio_s_per_s=audio * per_s,
        request_bytes_mean=int(ok["request_bytes"][counted].sum()) * per_req,
    )
