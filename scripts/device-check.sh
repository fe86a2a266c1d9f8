#!/usr/bin/env bash
# device-check.sh [BUNDLE...] — the CUDA path on a machine with an NVIDIA GPU
# (issue 29): what the CPU-side unit tests (tests/unit/test_precision.c)
# cannot show.  Under 10 minutes on one GPU; run from the repository root
# after `make` (BIN=PATH names another tool).
#
#   1. onnxruntime-gpu 1.23.2 (pinned below, its wheel's sha256 required;
#      --no-deps: CUDA 12 and cuDNN 9 come from the machine, or from
#      `pip install nvidia-cuda-runtime-cu12 nvidia-cudnn-cu12 ...` with
#      GPU_EXTRAS=1) into a virtual environment, WORK/venv (default WORK
#      /tmp/onp-device-check; WHEEL=FILE installs a wheel already here, for a
#      machine without network).  Its library is found as the user finds it:
#      python -m onnxparity.ortlib --package onnxruntime-gpu.
#   2. The CUDA provider is offered by that library (else exit 77: skipped,
#      with ORT's reason).
#   3. For each bundle (default: examples/healthy and examples/training):
#      check on the CPU (the tool's own ORT), check on CUDA with
#      use_tf32=0 and with use_tf32=1 (ORT's default), and sweep CPU and
#      CUDA side by side.  Verified, per bundle:
#        - CUDA runs (environment.provider CUDAExecutionProvider);
#        - TF32 off: the same verdict as the CPU (examples/healthy passes;
#          examples/training fails as training-mode on both);
#        - TF32 on: the same verdict, or, where it fails and the CPU passes,
#          the cause reduced-precision naming use_tf32=1 and the fix
#          use_tf32=0 — never execution-provider for a TF32 difference;
#        - the sweep has a CUDA column (available) and finishes.
#      Every document is kept in WORK/out for the report.
# Exit 0 all verified, 1 a check above failed (named on stderr), 77 no GPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$top/build/onnxparity}
WORK=${WORK:-/tmp/onp-device-check}
GPU_PKG="onnxruntime-gpu==1.23.2"
GPU_SHA256="d76d1ac7a479ecc3ac54482eea4ba3b10d68e888a0f8b5f420f0bdf82c5eec59" # cp311 manylinux_2_28 x86_64
bundles=("$@")
[ ${#bundles[@]} -gt 0 ] || bundles=("$top/examples/healthy" "$top/examples/training")
t0=$SECONDS
bad=0

say() { printf 'device-check: %s\n' "$*" >&2; }
fail() { say "FAIL: $*"; bad=1; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

[ -x "$BIN" ] || { say "no tool at $BIN (make first, or BIN=PATH)"; exit 1; }
mkdir -p "$WORK/out"

# --- 1. onnxruntime-gpu, hash-pinned -----------------------------------------------
if [ ! -x "$WORK/venv/bin/python" ]; then
    python3 -m venv "$WORK/venv" || { say "cannot create a venv"; exit 1; }
fi
if ! "$WORK/venv/bin/python" -c 'import importlib.metadata as m; m.distribution("onnxruntime-gpu")' 2>/dev/null; then
    req="$WORK/gpu.req"
    printf '%s --hash=sha256:%s\n' "$GPU_PKG" "$GPU_SHA256" > "$req"
    if [ -n "${WHEEL:-}" ]; then
        got=$(sha256sum "$WHEEL" | cut -d' ' -f1)
        [ "$got" = "$GPU_SHA256" ] || { say "WHEEL $WHEEL: sha256 $got, expected $GPU_SHA256"; exit 1; }
        "$WORK/venv/bin/python" -m pip install -q --no-deps "$WHEEL" || exit 1
    else
        "$WORK/venv/bin/python" -m pip install -q --no-deps --require-hashes --only-binary :all: -r "$req" || exit 1
    fi
    if [ "${GPU_EXTRAS:-0}" = 1 ]; then
        "$WORK/venv/bin/python" -m pip install -q nvidia-cuda-runtime-cu12 nvidia-cudnn-cu12 \
            nvidia-cublas-cu12 nvidia-cufft-cu12 nvidia-curand-cu12 nvidia-cuda-nvrtc-cu12 || exit 1
    fi
fi
lib=$(PYTHONPATH="$top/python" "$WORK/venv/bin/python" -m onnxparity.ortlib --package onnxruntime-gpu) ||
    { say "onnxparity.ortlib found no onnxruntime-gpu library"; exit 1; }
say "onnxruntime-gpu library: $lib ($((SECONDS - t0)) s)"
# the nvidia-* wheels' libraries, when GPU_EXTRAS installed them
for d in "$WORK"/venv/lib/python3*/site-packages/nvidia/*/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

# --- 2. the CUDA provider is there ------------------------------------------------
probe="$WORK/out/probe.json"
"$BIN" check "${bundles[0]}" --ort-lib "$lib" --provider cuda --no-bisect --no-env-target \
    --format json > "$probe" 2> "$WORK/out/probe.err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    say "skipped: the CUDA provider does not run here: $(head -c 600 "$WORK/out/probe.err")"
    exit 77
fi

# --- 3. each bundle: CPU, CUDA with TF32 off and on, the sweep ------------------------
for b in "${bundles[@]}"; do
    name=$(basename "$b")
    o="$WORK/out/$name"
    "$BIN" check "$b" --no-env-target --format json > "$o.cpu.json"; cpu_rc=$?
    "$BIN" check "$b" --no-env-target --ort-lib "$lib" --provider cuda --provider-opt use_tf32=0 \
        --format json > "$o.cuda-tf32-off.json"; off_rc=$?
    "$BIN" check "$b" --no-env-target --ort-lib "$lib" --provider cuda --provider-opt use_tf32=1 \
        --format json > "$o.cuda-tf32-on.json"; on_rc=$?
    "$BIN" sweep "$b" --ort-lib "$lib" --providers cpu,cuda --once --no-search --format json \
        > "$o.sweep.json"; sweep_rc=$?
    for f in "$o.cuda-tf32-off.json" "$o.cuda-tf32-on.json"; do
        prov=$(jget "$f" 'd["environment"]["provider"]' 2>/dev/null)
        [ "$prov" = CUDAExecutionProvider ] || fail "$name: $(basename "$f"): provider '$prov'"
    done
    [ $off_rc -eq $cpu_rc ] || fail "$name: TF32 off exits $off_rc, the CPU $cpu_rc"
    if [ $on_rc -ne $cpu_rc ]; then
        top1=$(jget "$o.cuda-tf32-on.json" 'd["causes"][0]["id"] if d["causes"] else ""')
        ev=$(jget "$o.cuda-tf32-on.json" '" ".join(d["causes"][0]["evidence"]) if d["causes"] else ""')
        fx=$(jget "$o.cuda-tf32-on.json" 'd["causes"][0]["fix"] if d["causes"] else ""')
        [ "$top1" = reduced-precision ] || fail "$name: TF32 on differs from the CPU and the cause is '$top1'"
        case "$ev" in *use_tf32=1*) ;; *) fail "$name: TF32's cause does not name use_tf32=1" ;; esac
        case "$fx" in *use_tf32=0*) ;; *) fail "$name: TF32's fix does not name use_tf32=0" ;; esac
    fi
    [ $sweep_rc -le 1 ] || fail "$name: sweep exit $sweep_rc"
    cuda_col=$(jget "$o.sweep.json" \
        'any(c["provider"]=="CUDAExecutionProvider" and c["available"] for c in d["sweep"]["configurations"])' 2>/dev/null)
    [ "$cuda_col" = True ] || fail "$name: the sweep has no available CUDA column"
    say "$name: cpu $cpu_rc, cuda tf32 off $off_rc, on $on_rc, sweep $sweep_rc ($((SECONDS - t0)) s)"
done
say "done in $((SECONDS - t0)) s; documents in $WORK/out"
exit $bad
