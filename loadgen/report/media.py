"""The step's inputs beyond text (images, audio): what they weighed and how fast they went.

No steps.csv columns; the figures are summary.json's ``steps[].media``.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import StepSummary

__all__ = ["media_text", "section"]


def media_text(step: StepSummary) -> str | None:
    """``inputs: 1.5 images/request, 0.42 MP/s, 3.1 s audio/s, 1.2 MB/request, sent in
    4.1 ms mean, beside 812 prompt tokens/s``; None when no request carried media."""
    m = step.media
    if m is None:
        return None
    parts = []
    if m.images_per_request:
        parts += [f"{m.images_per_request:.2f} images/request", f"{m.megapixels_per_s:.2f} MP/s"]
    if m.audio_s_per_request:
        parts.append(f"{m.audio_s_per_s:.2f} s audio/s")
    parts.append(f"{m.request_bytes_mean / 1e6:.2f} MB/request")
    if step.send_ms is not None and step.send_ms.mean is not None:
        parts.append(f"sent in {step.send_ms.mean:.2f} ms mean")
    tokens = step.throughput.input_tokens_per_s
    return f"inputs: {', '.join(parts)}, beside {tokens:,.0f} prompt tokens/s"


def section(step: StepSummary) -> Section | None:
    """The line; None when no request carried media."""
    text = media_text(step)
    return None if text is None else Section("media", (text,))
