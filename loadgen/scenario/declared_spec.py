"""``target.declared``: the server's numeric precision as the user knows it.

Not every server states its dtype, its quantization or its KV cache's dtype
(vLLM states the first two only at a development endpoint), yet a comparison
of an FP16 run with an FP8 one is only honest when both are known. What is
declared here is recorded beside what the server stated
(``summary.environment.declared``), as declared, never as measured, and
``loadgen compare`` flags a difference in either.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from loadgen.strict import Spec

__all__ = ["DECLARED_KEYS", "DeclaredSpec"]

#: the fields of ``target.declared``, in the order they are shown
DECLARED_KEYS = ("dtype", "quantization", "kv_cache_dtype")
#: the longest declared value
MAX_WORD = 64


def _word(value: str) -> str:
    if not 0 < len(value) <= MAX_WORD or any(c.isspace() or not c.isprintable() for c in value):
        msg = f"expected one word of 1 to {MAX_WORD} characters (bfloat16, fp8, ...)"
        raise ValueError(msg)
    return value


#: a declared value: one word, no spaces or control characters
Word = Annotated[str, AfterValidator(_word)]


class DeclaredSpec(Spec):
    dtype: Word | None = Field(
        None,
        description="The weights' dtype as served (bfloat16, float16, ...): declared, not "
        "measured.",
    )
    quantization: Word | None = Field(
        None,
        description="The quantization method (fp8, awq, gptq, ...; none: unquantized): "
        "declared, not measured.",
    )
    kv_cache_dtype: Word | None = Field(
        None,
        description="The KV cache's dtype (auto, fp8_e4m3, ...): declared, not measured.",
    )

    def given(self) -> dict[str, str]:
        """The fields the scenario set, in :data:`DECLARED_KEYS` order."""
        values = (getattr(self, key) for key in DECLARED_KEYS)
        return {key: v for key, v in zip(DECLARED_KEYS, values, strict=True) if v is not None}
