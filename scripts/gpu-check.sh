#!/usr/bin/env bash
# gpu-check.sh: does the loadgen agent see a real GPU work?
#
# On a machine with an NVIDIA GPU: starts the agent (100 ms sampling), records a
# few seconds of idle baseline, runs a torch matmul loop on the GPU, then checks,
# on the GPU that carried the load, that utilisation and power rose and memory
# used grew, and prints the samples.
#
#   scripts/gpu-check.sh            # LOAD_S=8 BASELINE_S=3 PYTHON=python3
#
# GPU_CHECK_FAKE=N runs the agent on N fake GPUs (only to test this script
# without a GPU; the load checks are then skipped or fail, as they should).
#
# Exit codes: 0 pass (or load checks skipped: torch with CUDA not installed),
#             1 a check failed or the agent misbehaved, 2 no NVIDIA GPU/driver here.
set -euo pipefail

PYTHON=${PYTHON:-python3}
LOAD_S=${LOAD_S:-8}
BASELINE_S=${BASELINE_S:-3}
cd "$(dirname "$0")/.."

say() { printf 'gpu-check: %s\n' "$*"; }

# --- is there a GPU at all? -------------------------------------------------
fake_args=()
if [[ -n "${GPU_CHECK_FAKE:-}" ]]; then
    fake_args=(--fake-nvml "$GPU_CHECK_FAKE")
elif ! "$PYTHON" -c 'import pynvml; pynvml.nvmlInit(); assert pynvml.nvmlDeviceGetCount() > 0' 2>/dev/null; then
    if command -v nvidia-smi >/dev/null 2>&1; then
        say "nvidia-smi exists but NVML (pynvml) cannot open a GPU; check the driver and nvidia-ml-py"
    else
        say "no NVIDIA GPU or driver on this machine (no NVML, no nvidia-smi); nothing to check"
    fi
    exit 2
fi

# --- start the agent --------------------------------------------------------
workdir=$(mktemp -d)
agent_pid=""
cleanup() {
    if [[ -n "$agent_pid" ]] && kill -0 "$agent_pid" 2>/dev/null; then
        kill "$agent_pid" && wait "$agent_pid" 2>/dev/null || true
    fi
    rm -rf "$workdir"
}
trap cleanup EXIT

"$PYTHON" -m loadgen.gpu_agent --port 0 --interval-ms 100 "${fake_args[@]}" >"$workdir/out" 2>"$workdir/err" &
agent_pid=$!
for _ in $(seq 1 100); do
    grep -q 'listening on' "$workdir/out" 2>/dev/null && break
    kill -0 "$agent_pid" 2>/dev/null || break
    sleep 0.2
done
if ! grep -q 'listening on' "$workdir/out" 2>/dev/null; then
    say "the agent did not start:"; cat "$workdir/err" >&2; exit 1
fi
url=$(sed -n 's/.*listening on //p' "$workdir/out" | head -n1)
say "agent at $url"
curl_json() { "$PYTHON" -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }
curl_json "$url/health" >"$workdir/health.json"
"$PYTHON" - "$workdir/health.json" <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
for g in h["gpus"]:
    print(f"gpu-check: GPU {g['index']}: {g['name']}, driver {h['driver_version']}, "
          f"energy {g['energy_source']}, unsupported {g['unsupported']}")
EOF

# --- baseline, then load ----------------------------------------------------
t_start=$(curl_json "$url/clock" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["mono_ns"])')
sleep "$BASELINE_S"
t_load=$(curl_json "$url/clock" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["mono_ns"])')
if "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    say "loading cuda:0 with a fp16 matmul loop for ${LOAD_S}s"
    CUDA_DEVICE_ORDER=PCI_BUS_ID LOAD_S=$LOAD_S "$PYTHON" - <<'EOF'
import os, time, torch
dev = torch.device("cuda:0")
a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
keep = [torch.empty(1 << 30, dtype=torch.uint8, device=dev)]  # +1 GiB, so memory used grows
end = time.monotonic() + float(os.environ["LOAD_S"])
n = 0
while time.monotonic() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    n += 20
print(f"gpu-check: {n} matmuls of 8192x8192 fp16 on {torch.cuda.get_device_name(dev)}")
EOF
    loaded=1
else
    say "torch with CUDA not found: no load put on the GPU; idle samples only"
    loaded=0
fi
sleep 1  # let the last loaded samples land
curl_json "$url/samples?since=$t_start" >"$workdir/samples.json"

# --- check and print --------------------------------------------------------
"$PYTHON" - "$workdir/samples.json" "$t_load" "$loaded" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
t_load, loaded = int(sys.argv[2]), sys.argv[3] == "1"
rows = [r for r in data["samples"] if r["kind"] == "gpu"]
by_gpu = {}
for r in rows:
    by_gpu.setdefault(r["gpu"], []).append(r)

def stat(rs, key, fn):
    vs = [r[key] for r in rs if key in r]
    return fn(vs) if vs else None

mean = lambda vs: sum(vs) / len(vs)
verdicts = {}
for gpu, rs in sorted(by_gpu.items()):
    base = [r for r in rs if r["t_ns"] < t_load]
    load = [r for r in rs if r["t_ns"] >= t_load]
    u0, u1 = stat(base, "util_gpu_pct", mean), stat(load, "util_gpu_pct", max)
    p0, p1 = stat(base, "power_w", mean), stat(load, "power_w", mean)
    m0, m1 = stat(base, "mem_used_bytes", max), stat(load, "mem_used_bytes", max)
    checks = {
        "utilisation rose": u0 is not None and u1 is not None and u1 >= 50 and u1 > u0 + 20,
        "power rose": p0 is not None and p1 is not None and p1 > p0 * 1.10 and p1 > p0 + 10,
        "memory grew": m0 is not None and m1 is not None and m1 > m0 + (512 << 20),
    }
    verdicts[gpu] = checks
    print(f"gpu-check: GPU {gpu}: util {u0} -> max {u1} %, power {p0} -> {p1} W, "
          f"mem {m0} -> {m1} B; " + ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in checks.items()))
hot = max(verdicts, key=lambda g: sum(verdicts[g].values())) if verdicts else None
print("gpu-check: samples of GPU", hot, "(t_s from start, util %, mem MiB, power W, energy J)")
t0 = by_gpu[hot][0]["t_ns"] if hot is not None else 0
for r in by_gpu.get(hot, []):
    mark = "L" if r["t_ns"] >= t_load else " "
    print(f"  {mark} {(r['t_ns'] - t0) / 1e9:7.2f}  {r.get('util_gpu_pct', '-'):>5}  "
          f"{r.get('mem_used_bytes', 0) / 2**20:9.0f}  {r.get('power_w', '-'):>8}  {r.get('energy_j', '-')}")
if not rows:
    print("gpu-check: FAIL: the agent returned no GPU samples"); sys.exit(1)
if not loaded:
    print("gpu-check: SKIPPED load checks (install torch with CUDA to run them)"); sys.exit(0)
if hot is None or not all(verdicts[hot].values()):
    print("gpu-check: FAIL: no GPU showed utilisation, power and memory rising under load"); sys.exit(1)
print(f"gpu-check: PASS on GPU {hot}")
EOF
