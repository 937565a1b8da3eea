"""How the prompt lengths were calibrated: which engine's tokenize endpoint answered.

Owns :class:`PromptCalibration` (``Summary.calibration``): the engine and
endpoint that counted the two calibration prompts, and the fit it gave
(tokens = overhead + per_word x words).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["TOKENIZE_ENGINES", "PromptCalibration"]

#: the tokenize dialects loadgen calibrates with (loadgen.target.tokenize)
TOKENIZE_ENGINES = ("vllm", "llama.cpp", "tgi")


class PromptCalibration(Strict):
    engine: Literal["vllm", "llama.cpp", "tgi"] = Field(
        description="Whose tokenize dialect answered: vllm (vLLM's /tokenize; SGLang's "
        "answers the same), llama.cpp (llama-server's /tokenize), tgi (TGI's /tokenize)."
    )
    endpoint: str = Field(description="The path asked, e.g. POST /tokenize.")
    chat_template: bool = Field(
        description="The count includes the chat template's tokens (vLLM's messages form, "
        "llama.cpp's /apply-template); false: the prompt text alone."
    )
    per_word: float = Field(description="Tokens per word of loadgen's prompts.")
    overhead: float = Field(description="Tokens the server adds to every prompt.")
