"""Build a tiny random-weight Whisper that vLLM serves on ``/v1/audio/transcriptions``.

No model hub: a byte-level BPE trained on the standard library's sources
(as build_tiny_llama.py trains it) with Whisper's special tokens
(``<|endoftext|>``, ``<|startoftranscript|>``, one ``<|xx|>`` per language,
``<|transcribe|>``, ``<|translate|>``, ``<|notimestamps|>``, ...), a
``WhisperFeatureExtractor`` (16 kHz, 80 mel bins, 30 s windows) and random
bf16 weights, seeded. vLLM's decoder prompt is ``<|startoftranscript|><|xx|>
<|transcribe|><|notimestamps|>`` (four tokens; ``<|prev|>`` and the request's
``prompt`` before them); the audio goes to the encoder, whose tokens are not in
``usage``.

Run it with the vLLM venv's python::

    VENV/bin/python scripts/build_tiny_whisper.py OUT_DIR

Normally ``bash scripts/vllm-cpu.sh whisper`` calls it (a few seconds).
"""

from __future__ import annotations

import argparse
import sysconfig
from pathlib import Path
from typing import Any

EOT = "<|endoftext|>"
SOT = "<|startoftranscript|>"
TASK_TOKENS = ("<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>")
TAIL_TOKENS = ("<|nospeech|>", "<|notimestamps|>", "<|prev|>")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="model directory to write")
    ap.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary size")
    ap.add_argument(
        "--d-model",
        type=int,
        default=128,
        help="head_dim = d_model / heads: 32 or 64 (vLLM-CPU refuses 16)",
    )
    ap.add_argument("--layers", type=int, default=2, help="encoder and decoder layers each")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0, help="weight seed (0 is a valid seed)")
    ap.add_argument("--max-files", type=int, default=300, help="stdlib files to train on")
    return ap.parse_args(argv)


def special_tokens() -> list[str]:
    from transformers.models.whisper.tokenization_whisper import LANGUAGES

    langs = [f"<|{code}|>" for code in LANGUAGES]
    return [EOT, SOT, *langs, *TASK_TOKENS, *TAIL_TOKENS]


def train_bpe(vocab_size: int, max_files: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level BPE on the stdlib's *.py files, as build_tiny_llama.py; ``<|endoftext|>`` id 0."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(str(p) for p in stdlib.glob("*.py"))[:max_files]
    if not files:
        msg = f"no *.py files under {stdlib!r} to train the tokenizer on"
        raise SystemExit(msg)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train(files, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return model["vocab"], merges


def save_processor(args: argparse.Namespace) -> Any:
    """WhisperTokenizer (the trained BPE), WhisperFeatureExtractor, WhisperProcessor."""
    from transformers import (
        AddedToken,
        WhisperFeatureExtractor,
        WhisperProcessor,
        WhisperTokenizer,
    )

    specials = special_tokens()
    vocab, merges = train_bpe(args.vocab, args.max_files)
    tok = WhisperTokenizer(vocab=vocab, merges=merges)
    tok.add_special_tokens(
        {
            "additional_special_tokens": [
                AddedToken(t, normalized=False, special=True) for t in specials[1:]
            ]
        }
    )
    # the post-processor as a real Whisper's: <|startoftranscript|><|notimestamps|>
    # text <|endoftext|> (built at init, before the special tokens existed)
    tok.set_prefix_tokens(predict_timestamps=False)
    processor = WhisperProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tok
    )
    processor.save_pretrained(args.out)
    return tok


def save_model(tok: Any, args: argparse.Namespace) -> int:
    """Write random bf16 Whisper weights; return the parameter count."""
    import torch
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    eot, sot = tok.convert_tokens_to_ids(EOT), tok.convert_tokens_to_ids(SOT)
    torch.manual_seed(args.seed)
    config = WhisperConfig(
        vocab_size=len(tok),
        num_mel_bins=80,
        d_model=args.d_model,
        encoder_layers=args.layers,
        decoder_layers=args.layers,
        encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads,
        encoder_ffn_dim=args.d_model * 4,
        decoder_ffn_dim=args.d_model * 4,
        max_source_positions=1500,
        max_target_positions=448,
        bos_token_id=eot,
        eos_token_id=eot,
        pad_token_id=eot,
        decoder_start_token_id=sot,
        suppress_tokens=[],
        begin_suppress_tokens=[],
    )
    model = WhisperForConditionalGeneration(config).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    GenerationConfig(
        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, decoder_start_token_id=sot
    ).save_pretrained(args.out)
    return sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tok = save_processor(args)
    n_params = save_model(tok, args)
    files = sorted(p.name for p in args.out.iterdir())
    print(f"built {args.out}: vocab={len(tok)} params={n_params} files={files}")


if __name__ == "__main__":
    main()
