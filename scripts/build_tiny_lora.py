"""Build a random-weight LoRA adapter for the tiny Llama, without any model hub.

A PEFT-format folder (adapter_config.json, adapter_model.safetensors) of rank
``--rank`` on q_proj and v_proj of every layer, seeded, bf16, with small
weights: vLLM serves it beside the base model (``--enable-lora --lora-modules
NAME=DIR --max-lora-rank R``), so a model mix of base and adapter is a real load
on the LoRA kernels. The shapes are read from the base model's config.json.

Run it with the vLLM venv's python (it needs torch and safetensors)::

    VENV/bin/python scripts/build_tiny_lora.py BASE_MODEL_DIR OUT_DIR [--rank 8]

Normally `bash scripts/vllm-cpu.sh lora` calls it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path, help="the base model folder (its config.json)")
    ap.add_argument("out", type=Path, help="the adapter folder to write")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    from safetensors.torch import save_file

    cfg = json.loads((args.base / "config.json").read_text())
    hidden = int(cfg["hidden_size"])
    head_dim = int(cfg.get("head_dim") or hidden // int(cfg["num_attention_heads"]))
    kv = int(cfg["num_key_value_heads"]) * head_dim
    out_of = {"q_proj": int(cfg["num_attention_heads"]) * head_dim, "v_proj": kv}
    gen = torch.Generator().manual_seed(args.seed)
    tensors = {}
    for layer in range(int(cfg["num_hidden_layers"])):
        for module, out in out_of.items():
            key = f"base_model.model.model.layers.{layer}.self_attn.{module}"
            a = torch.randn(args.rank, hidden, generator=gen) * 0.01
            b = torch.randn(out, args.rank, generator=gen) * 0.01
            tensors[f"{key}.lora_A.weight"] = a.to(torch.bfloat16)
            tensors[f"{key}.lora_B.weight"] = b.to(torch.bfloat16)
    args.out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(args.out / "adapter_model.safetensors"))
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "r": args.rank,
        "lora_alpha": 2 * args.rank,
        "lora_dropout": 0.0,
        "target_modules": sorted(out_of),
        "bias": "none",
        "fan_in_fan_out": False,
        "modules_to_save": None,
        "base_model_name_or_path": str(args.base),
    }
    (args.out / "adapter_config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote {args.out} ({len(tensors)} tensors, rank {args.rank})")


if __name__ == "__main__":
    main()
