#!/usr/bin/env bash
# bench/run.sh [BIN] — onnxparity side by side with what users would use
# instead, in one run, reported as ratios.
#
# Two sizes.  The default (`make bench`) keeps every peer ratio at sizes
# that finish within ten minutes on this 2-core machine and writes
# docs/benchmarks.md; BENCH_FULL=1 (`make bench-full`) runs every section at
# its full size, and the sections only it has (marked [full] below), and
# writes docs/benchmarks-full.md.
#
#   1. inspect: generated models of 16 MiB .. 1 GiB of weights (inline and
#      external; 256 MiB at most by default), and a torchvision resnet18
#      export (45 MB, 65 nodes),
#      against `onnx.load` in /usr/bin/python3: time and peak RSS.
#   2. compare: two 1 GiB (default: 256 MiB) float32 .npy files, `onnxparity compare` against
#      numpy (load + allclose + max abs/rel); the compare kernel in process
#      against memcpy of the same bytes (bench/cmpbench.c), the kernel this
#      CPU dispatches to against the portable vector loop, [full] their
#      instructions per element under callgrind and their inner loops
#      (bench/loops.py), and a check that they give the same bits
#      (bench/cmpsame.c).
#   3. check on a resnet18 bundle against a bare C program (bench/barecheck.c),
#      the Python API in-process against the tool as a subprocess
#      (bench/api_inproc.py), and the pip command against the tool it
#      launches (bench/wheel_launch.py over the wheel make bench builds).
#   3b. check at size against a bare ORT run plus reading the files
#      (bench/tensorsize.py: SiLU over 1 MiB and 100 MiB tensors, [full]
#      and 1 GiB), with and without the float64 reference.
#   4. bisect on a resnet18 bundle with every intermediate: time and peak
#      RSS against check, with one session and with --chunk N.
#   5. sweep over the optimization levels against one check per level.
#   6. [full] capture with the float64 reference pass off, at its default and on
#      every fixture (bench/capture64.py): resnet18 and a transformer.
#   6b. [full] capture time against a plain torch.onnx.export plus one eager forward
#      per fixture (bench/capturetime.py), reported as a ratio; goal 1.5x;
#      under torch 1.13 (legacy) and, with .venv-torch2, torch 2.x (dynamo).
#   7. compare of two .npz archives of 70,000 (default: 7,000) one-element
#      members against numpy (bench/npzbench.py): linear in the members,
#      target under 2 s at 70,000.
#   8. peers: `polygraphy run --onnxrt` against check on the resnet18 bundle,
#      same inputs, outputs, tolerances and ORT (bench/peers.py, run with the
#      torch 2.x environment's python; skipped, and said so, without it);
#      torch.onnx.verification's verify_onnx_program(compare_intermediates=
#      True) against bisect on the same dynamo exports, healthy and planted
#      (bench/peers_verify.py; the transformer encoder by default, [full]
#      and resnet18); [full] the zoo through diagnose, verification and
#      Polygraphy: who names the cause, who names the layer
#      (bench/peers_zoo.py); `onnxparity generate` beside a one-step logits
#      check in the style of optimum's validation over the same six planted
#      decoder faults (bench/decode_onestep.py); `onnxparity chain` beside
#      Polygraphy comparing an export with its ORT-optimized stage (a planted
#      fault) and its float16 stage: time, RSS, what each names
#      (bench/chain_peers.py).
#   9. [full] a model over 2 GiB (a random-init Llama-style decoder, 2.17 GiB of
#      float32 weights, external data): capture, check and bisect, each
#      step's time and peak RSS (bench/large_model.py; skipped, and said
#      so, with under 12 GiB of memory available).
#
# BIN defaults to build/onnxparity; the library beside it
# (BIN's directory/libonnxparity.a) is linked into the helper programs, and
# scratch files go to BIN's directory/bench/ (about 2 GiB by default, 9 GiB
# with BENCH_FULL=1).  BENCH_GIB=N scales the large cases of the full run
# (default 1).  BENCH_QUICK=1 runs every default section at smaller sizes
# and fewer repetitions (64 MiB): to check the script, not to publish
# figures; it writes a document only when BENCH_OUT says where (default:
# nowhere).  BENCH_OUT overrides the document's path in every mode.
set -euo pipefail
bin=$(readlink -f "${1:-build/onnxparity}")
bdir=$(dirname "$bin")
top=$(cd "$(dirname "$0")/.." && pwd)
out="$bdir/bench"
py=/usr/bin/python3
quick=${BENCH_QUICK:-0}
full=${BENCH_FULL:-0}
if [ "$quick" = 1 ]; then
    full=0 big=67108864 biglabel=64M reps=2 doc=${BENCH_OUT:-/dev/null}
elif [ "$full" = 1 ]; then
    gib=${BENCH_GIB:-1}
    big=$((gib * 1073741824)) biglabel="${gib}G" reps=5 doc=${BENCH_OUT:-$top/docs/benchmarks-full.md}
else
    big=268435456 biglabel=256M reps=3 doc=${BENCH_OUT:-$top/docs/benchmarks.md}
fi
lib="$bdir/libonnxparity.a"
[ -x "$bin" ] && [ -f "$lib" ] || { echo "bench: need $bin and $lib (make BUILD=$bdir)" >&2; exit 2; }
mkdir -p "$out"
cd "$top"
started=$SECONDS

cc_flags="-std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc"
gcc $cc_flags bench/genmodel.c "$lib" -o "$out/genmodel" -lm
gcc $cc_flags bench/cmpbench.c "$lib" -o "$out/cmpbench" -lm -lpthread
# the portable loop alone (no hand-written kernels, no clones): for this
# CPU, and for AVX2, the most valgrind runs
gcc $cc_flags -DONP_NO_CLONES -march=native bench/cmpbench.c src/compare/compare.c "$lib" \
    -o "$out/cmpbench-generic" -lm -lpthread
gcc $cc_flags -DONP_NO_CLONES -mavx2 bench/cmpbench.c src/compare/compare.c "$lib" \
    -o "$out/cmpbench-generic-avx2" -lm -lpthread
# the same portable loop with its public names renamed, for bench/cmpsame.c
gcc $cc_flags -DONP_NO_CLONES -Donp_compare=portable_compare \
    -Donp_compare_set_threads=portable_set_threads -Donp_tol_default=portable_tol_default \
    -Donp_tol_with=portable_tol_with -Donp_hist_edges=portable_hist_edges -Donp_compare_topk=portable_compare_topk \
    -c src/compare/compare.c -o "$out/compare_portable.o"
gcc $cc_flags bench/cmpsame.c "$out/compare_portable.o" "$lib" -o "$out/cmpsame" -lm -lpthread
gcc $cc_flags -I"${ORT_HOME:-third_party/onnxruntime}/include" bench/barecheck.c "$lib" \
    -o "$out/barecheck" -lzip -lcjson -ljansson -lcrypto -lz -lm -ldl -lpthread

# best-of-N wall time (EPOCHREALTIME, microseconds) and peak RSS (KiB, from
# GNU time) of a command: prints "SECONDS KIB".  With N > 1 the N timed runs
# are bare (a millisecond command is not charged for starting /usr/bin/time)
# and one more run under /usr/bin/time gives the RSS; with N = 1 the one run
# gives both.
measure() {
    local n=$1; shift
    local best="" rss t0 t1 t k
    for k in $(seq "$n"); do
        t0=$EPOCHREALTIME
        if [ "$n" = 1 ]; then
            /usr/bin/time -f "%M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/err.txt" || { cat "$out/err.txt" >&2; return 1; }
            rss=$(tail -1 "$out/time.txt")
        else
            "$@" >/dev/null 2>"$out/err.txt" || { cat "$out/err.txt" >&2; return 1; }
        fi
        t1=$EPOCHREALTIME
        t=$(awk "BEGIN{ printf \"%.4f\", $t1 - $t0 }")
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    if [ "$n" -gt 1 ]; then
        /usr/bin/time -f "%M" -o "$out/time.txt" "$@" >/dev/null 2>"$out/err.txt" || { cat "$out/err.txt" >&2; return 1; }
        rss=$(tail -1 "$out/time.txt")
    fi
    echo "$best $rss"
}

ratio() { awk "BEGIN{ if ($2 <= 0) print \"-\"; else if ($1 / $2 >= 10) printf \"%.0f\", $1 / $2; else printf \"%.2f\", $1 / $2 }"; }
mib() { awk "BEGIN{ printf \"%.0f\", $1 / 1024 }"; }
met() { awk "BEGIN{ exit !($1) }" && echo "met" || echo "**not met**"; }

# --- resnet18 bundles (made once, reused) ------------------------------------
# resnet18: outputs only (check, sweep); resnet18-int: every intermediate
# (bisect).  Random weights, seed 0, fixtures of batch 1, 4 and 8.
capture() {
    [ -f "$out/$1/model.onnx" ] && return 0
    echo "bench [$((SECONDS - started)) s]: capturing $1" >&2
    PYTHONPATH="$top/python" $py - "$out/$1" "$2" <<'PYEOF' >/dev/null 2>"$out/err.txt" || { cat "$out/err.txt" >&2; return 1; }
import sys, torch, torchvision, onnxparity
torch.manual_seed(0)
model = torchvision.models.resnet18().eval()
g = torch.Generator().manual_seed(0)
onnxparity.capture(model, [torch.randn(b, 3, 224, 224, generator=g) for b in (1, 4, 8)], sys.argv[1],
                   intermediates=sys.argv[2] == "1")
PYEOF
}
capture resnet18 0
capture resnet18-int 1
rn="$out/resnet18"
rni="$out/resnet18-int"

# --- 1. inspect ------------------------------------------------------------------
echo "bench [$((SECONDS - started)) s]: generating models in $out" >&2
if [ "$full" != 1 ]; then
    specs="16M:16777216:inline $biglabel:$big:inline $biglabel-ext:$big:external"
else
    specs="16M:16777216:inline 256M:268435456:inline $biglabel:$big:inline $biglabel-ext:$big:external"
fi
declare -a rows
for spec in $specs; do
    IFS=: read -r label bytes kind <<< "$spec"
    f="$out/model_$label.onnx"
    [ -f "$f" ] || "$out/genmodel" "$f" "$bytes" 64 $([ "$kind" = external ] && echo --external)
    read -r t_ours m_ours < <(measure $((4 * reps)) "$bin" inspect "$f")
    read -r t_py m_py < <(measure 1 $py -c "import onnx, sys; onnx.load(sys.argv[1])" "$f")
    rows+=("| $label ($kind) | $t_ours s | $(mib "$m_ours") MiB | $t_py s | $(mib "$m_py") MiB | $(ratio "$t_py" "$t_ours")× |")
    echo "bench [$((SECONDS - started)) s]: inspect $label: ours ${t_ours}s, onnx.load ${t_py}s" >&2
done

echo "bench [$((SECONDS - started)) s]: inspect resnet18" >&2
rn_mb=$(awk "BEGIN{ printf \"%.1f\", $(stat -c %s "$rn/model.onnx") / 1e6 }")
rn_nodes=$("$bin" inspect "$rn/model.onnx" | awk '$1=="nodes"{print $2}')
read -r t_rins m_rins < <(measure $((4 * reps)) "$bin" inspect "$rn/model.onnx")
read -r t_rpy m_rpy < <(measure 1 $py -c "import onnx, sys; onnx.load(sys.argv[1])" "$rn/model.onnx")
# onnx.load alone, after `import onnx`, best of 3 in one process
t_rload=$($py -c "
import sys, time, onnx
best = 1e9
for _ in range(3):
    t0 = time.perf_counter()
    onnx.load(sys.argv[1])
    best = min(best, time.perf_counter() - t0)
print(f'{best:.4f}')" "$rn/model.onnx")
r_rload=$(ratio "$t_rload" "$t_rins")
r_rproc=$(ratio "$t_rpy" "$t_rins")

# --- 2. compare ------------------------------------------------------------------
echo "bench [$((SECONDS - started)) s]: compare, two $biglabel float32 .npy files" >&2
$py - "$out" "$big" <<'PYEOF'
import sys, numpy as np, os
out, nbytes = sys.argv[1], int(sys.argv[2])
n = nbytes // 4
for name, seed in (("a", 1), ("b", 2)):
    p = os.path.join(out, f"cmp_{name}.npy")
    if os.path.exists(p) and os.path.getsize(p) == nbytes + 128:
        continue
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    if name == "b":
        a += np.float32(1e-6) * rng.standard_normal(n, dtype=np.float32)
    np.save(p, a)
PYEOF
read -r t_cmp m_cmp < <(measure 3 "$bin" compare "$out/cmp_a.npy" "$out/cmp_b.npy")
read -r t_np m_np < <(measure 1 $py -c "
import numpy as np, sys
a = np.load(sys.argv[1]); b = np.load(sys.argv[2])
ok = np.allclose(b, a, rtol=1e-4, atol=1e-5)
d = np.abs(b - a); m = d.max(); r = (d / np.abs(a)).max()
" "$out/cmp_a.npy" "$out/cmp_b.npy")
gbs() { awk "BEGIN{ printf \"%.2f\", 2 * $big / $1 / 1e9 }"; }

echo "bench [$((SECONDS - started)) s]: compare kernel against memcpy" >&2
kernel=$("$out/cmpbench" "$big" 2>/dev/null)
generic=$("$out/cmpbench-generic" "$big" 2>/dev/null)
memcpy_gbs=$(echo "$kernel" | awk '$1=="memcpy"{print $4}')
k1=$(echo "$kernel" | awk '$1=="compare" && $2==1{print $4}')
k2=$(echo "$kernel" | awk '$1=="compare" && $2==2{print $4}')
g1=$(echo "$generic" | awk '$1=="compare" && $2==1{print $4}')
g_memcpy=$(echo "$generic" | awk '$1=="memcpy"{print $4}')
if grep -qw avx512f /proc/cpuinfo; then kpath="hand-written AVX-512 (\`fast_f32_avx512\`)"
elif grep -qw avx2 /proc/cpuinfo; then kpath="hand-written AVX2 (\`fast_f32_avx2\`)"
else kpath="portable vector loop"; fi

# same bits: the dispatched kernel against the portable loop, natively and
# under valgrind (which makes the AVX2 kernel run on an AVX-512 machine)
echo "bench [$((SECONDS - started)) s]: same bits, kernels against the portable loop" >&2
if [ "$full" = 1 ]; then same_n=100 same_vg=12; else same_n=40 same_vg=0; fi
same_native=$("$out/cmpsame" $same_n | awk '{print $2}')
same_avx2="-"
[ "$same_vg" -gt 0 ] && command -v valgrind >/dev/null && same_avx2=$(valgrind --tool=none -q "$out/cmpsame" $same_vg | awk '{print $2}')

# instructions per element under callgrind: valgrind emulates up to AVX2,
# so these are the AVX2 kernel and the portable loop built for AVX2
echo "bench [$((SECONDS - started)) s]: callgrind" >&2
cg_bytes=16777216 cg_n=$((16777216 / 4))
ir_per_elem() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" "$out/$1" "$cg_bytes" --once >/dev/null 2>&1
    callgrind_annotate --inclusive=yes "$out/cg.$1" 2>/dev/null |
        awk -v n=$cg_n '/:onp_compare \[/ && !done { gsub(",", "", $1); printf "%.1f", $1 / n; done = 1 }'
}
if [ "$full" = 1 ] && command -v valgrind >/dev/null; then
    ir_new=$(ir_per_elem cmpbench)
    ir_old=$(ir_per_elem cmpbench-generic-avx2)
else
    ir_new="-" ir_old="-"
fi
# the kernels' loops, from the disassembly
objdump -d --no-show-raw-insn "$out/cmpbench" > "$out/cmpbench.dis"
objdump -d --no-show-raw-insn "$out/cmpbench-generic-avx2" > "$out/cmpbench-generic-avx2.dis"
objdump -d --no-show-raw-insn "$out/cmpbench-generic" > "$out/cmpbench-generic.dis"
loops_of() { $py bench/loops.py "$1" "$2" | awk '$2 >= 20'; }
loop_rows() { # FILE FUNC PER: "| FUNC | insns | vector | reg | elements |"
    loops_of "$1" "$2" | awk -v per="$3" '{ printf "| `%s` | %d | %d | %s | %s |\n", $1, $2, $3, $4, per }'
}

# --- 3. check overhead -------------------------------------------------------------
echo "bench [$((SECONDS - started)) s]: check overhead on a torchvision resnet18 bundle" >&2
ortlib=$("$bin" check "$rn" --format json | $py -c "import json,sys; print(json.load(sys.stdin)['environment']['ort_library'])")
read -r t_check m_check < <(measure "$reps" "$bin" check "$rn")
read -r t_bare _ < <(measure "$reps" "$out/barecheck" "$ortlib" "$rn")
read -r t_nolint _ < <(measure "$reps" "$bin" check "$rn" --no-lint)
overhead=$(awk "BEGIN{ printf \"%.1f\", 100 * ($t_check - $t_bare) / $t_bare }")
# the Python API in-process against the tool as a subprocess, from one warm Python
read -r t_api t_apisub t_apini < <(ONNXPARITY_LIB="$(dirname "$lib")/libonnxparity.so.0" PYTHONPATH="$top/python" \
    $py bench/api_inproc.py "$rn" "$bin" "$reps")
# the pip command against the tool it launches (the wheel `make bench` builds
# first; without one the row says so): bench/wheel_launch.py's markdown rows
wheel=$(ls "$bdir"/wheel/onnxparity-*.whl 2>/dev/null | head -1 || true)
if [ -n "$wheel" ]; then
    wheel_rows=$($py bench/wheel_launch.py --wheel "$wheel" --runs 15 || true)
else
    wheel_rows="(no wheel in $bdir/wheel: \`make wheel\` builds it; \`make bench\` does first)"
fi

# --- 3b. check at size: SiLU over 1 MiB .. 1 GiB tensors -------------------------
echo "bench [$((SECONDS - started)) s]: check against a bare ORT run at size" >&2
if [ "$quick" = 1 ]; then sizes="1MB"; elif [ "$full" = 1 ]; then sizes="1MB 100MB 1GB"; else sizes="1MB 100MB"; fi
tsize=$(PYTHONPATH="$top/python" $py bench/tensorsize.py "$bin" "$out/barecheck" "$ortlib" "$out/tensorsize" \
    "$reps" $sizes)
tsize_met=$(echo "$tsize" | awk '$1=="TARGETS"{print $2}')
tsize=$(echo "$tsize" | grep -v '^TARGETS')

# --- 4. bisect -------------------------------------------------------------------------
echo "bench [$((SECONDS - started)) s]: bisect on resnet18 with every intermediate" >&2
n_values=$("$bin" bisect "$rni" --format json 2>/dev/null |
    $py -c "import json,sys; print(json.load(sys.stdin)['summary']['values_exposed'])")
int_mb=$(du -sm "$rni" | awk '{print $1}')
read -r t_bcheck m_bcheck < <(measure 3 "$bin" check "$rni")
has_chunk=0
usage=$("$bin" bisect 2>&1 || true)
case "$usage" in *--chunk*) has_chunk=1 ;; esac
declare -a brows
if [ "$has_chunk" = 1 ]; then
    read -r t_bis m_bis < <(measure 3 "$bin" bisect "$rni" --chunk 1000000000)
    brows+=("| bisect, every value in one session (\`--chunk 1000000000\`) | 1 | $t_bis s | $(mib "$m_bis") MiB | $(ratio "$t_bis" "$t_bcheck")× | $(ratio "$m_bis" "$m_bcheck")× |")
    read -r t_bdef m_bdef < <(measure 3 "$bin" bisect "$rni")
    s_def=$("$bin" bisect "$rni" | awk '$1=="chunks"{print $2}')
    brows+=("| bisect (default chunking) | ${s_def:-?} | $t_bdef s | $(mib "$m_bdef") MiB | $(ratio "$t_bdef" "$t_bcheck")× | $(ratio "$m_bdef" "$m_bcheck")× |")
    for c in 10 4; do
        read -r t_c m_c < <(measure 1 "$bin" bisect "$rni" --chunk $c)
        s_c=$("$bin" bisect "$rni" --chunk $c | awk '$1=="chunks"{print $2}')
        brows+=("| bisect --chunk $c | ${s_c:-?} | $t_c s | $(mib "$m_c") MiB | $(ratio "$t_c" "$t_bcheck")× | $(ratio "$m_c" "$m_bcheck")× |")
        eval "m_chunk$c=$m_c"
    done
else
    read -r t_bis m_bis < <(measure 3 "$bin" bisect "$rni")
    brows+=("| bisect, every value in one session | 1 | $t_bis s | $(mib "$m_bis") MiB | $(ratio "$t_bis" "$t_bcheck")× | $(ratio "$m_bis" "$m_bcheck")× |")
fi

# --- 5. sweep --------------------------------------------------------------------------
echo "bench [$((SECONDS - started)) s]: sweep against one check per level" >&2
levels="disable basic extended layout all"
read -r t_sweep m_sweep < <(measure 1 "$bin" sweep "$rn" --no-search)
read -r t_once m_once < <(measure 1 "$bin" sweep "$rn" --no-search --once)
t_checks=0 m_checks=0
declare -a srows
for l in $levels; do
    read -r t_l m_l < <(measure 1 "$bin" check "$rn" --opt-level "$l" --no-lint --no-bisect)
    srows+=("| check --opt-level $l | $t_l s | $(mib "$m_l") MiB |")
    t_checks=$(awk "BEGIN{ printf \"%.4f\", $t_checks + $t_l }")
    [ "$m_l" -gt "$m_checks" ] && m_checks=$m_l
done
n_levels=$(echo $levels | wc -w)
n_fix=$(ls -d "$rn"/test_data_set_* | wc -l)

# --- 6. capture with and without the float64 reference [full] ---------------------------
cap64="" captime=""
if [ "$full" = 1 ]; then
echo "bench [$((SECONDS - started)) s]: capture, float64 reference off / default / every fixture" >&2
cap64=$(PYTHONPATH="$top/python" $py bench/capture64.py "$out/cap64" 3)

# --- 6b. capture time against a plain export + one eager forward per fixture [full] ---
echo "bench [$((SECONDS - started)) s]: capture time against torch.onnx.export + one eager forward per fixture" >&2
cap_reps=5
captime=$(PYTHONPATH="$top/python" $py bench/capturetime.py "$out/captime" 1 --header)$'\n'
captime+=$(PYTHONPATH="$top/python" $py bench/capturetime.py "$out/captime" "$cap_reps")
if [ -x "$top/.venv-torch2/bin/python" ]; then  # torch 2.x, the dynamo exporter
    captime+=$'\n'$(PYTHONPATH="$top/python" "$top/.venv-torch2/bin/python" bench/capturetime.py \
        "$out/captime" "$cap_reps")
fi
captime+=$'\n'$(PYTHONPATH="$top/python" $py bench/capturetime.py "$out/captime" 1 --footer)
fi

# --- 7. compare of two .npz archives of many small members ---------------------------
echo "bench [$((SECONDS - started)) s]: compare, two .npz archives of many one-element members" >&2
npz=$($py bench/npzbench.py "$bin" "$out/npz" "$([ "$full" = 1 ] && echo 70000 || echo 20000)")

# --- 8. peers: Polygraphy against check ----------------------------------------
venv_py="$top/.venv-torch2/bin/python"
if [ -x "$venv_py" ]; then
    echo "bench [$((SECONDS - started)) s]: polygraphy run against check" >&2
    peers=$(PYTHONPATH="$top/python" "$venv_py" bench/peers.py "$bin" "$rn" "$reps" 2>"$out/err.txt") \
        || { cat "$out/err.txt" >&2; exit 1; }
    echo "bench [$((SECONDS - started)) s]: torch.onnx.verification against bisect" >&2
    verify=$(PYTHONPATH="$top/python" "$venv_py" bench/peers_verify.py "$bin" "$out/verify" \
        $([ "$full" = 1 ] || echo encoder:planted) 2>"$out/err.txt") || { cat "$out/err.txt" >&2; exit 1; }
    echo "bench [$((SECONDS - started)) s]: the decode loop beside a one-step logits check" >&2
    decode=$(PYTHONPATH="$top/python" "$venv_py" bench/decode_onestep.py "$bin" 2>"$out/err.txt") \
        || { cat "$out/err.txt" >&2; exit 1; }
    echo "bench [$((SECONDS - started)) s]: the deployment chain beside polygraphy" >&2
    chainp=$(PYTHONPATH="$top/python" "$venv_py" bench/chain_peers.py "$bin" "$out/chain" 2>"$out/err.txt") \
        || { cat "$out/err.txt" >&2; exit 1; }
    zoo_peers=""
    if [ "$full" = 1 ]; then
        echo "bench [$((SECONDS - started)) s]: the zoo through diagnose, verification and polygraphy" >&2
        zoo_peers=$(PYTHONPATH="$top/python" "$venv_py" bench/peers_zoo.py "$bin" "$out/zoo-peers" 2>"$out/err.txt") \
            || { cat "$out/err.txt" >&2; exit 1; }
    fi
else
    peers=$'## Peers: Polygraphy against check\n\nSkipped: no .venv-torch2 (make venv builds it).'
    verify="" zoo_peers="" decode="" chainp=""
fi

# --- 9. a model over 2 GiB -------------------------------------------------------------
avail_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if [ "$full" != 1 ]; then
    large=""
elif [ ! -x "$venv_py" ] || [ "$avail_kib" -lt $((12 * 1024 * 1024)) ]; then
    large="## A model over 2 GiB: capture, check and bisect"$'\n\n'"Skipped: needs .venv-torch2 and 12 GiB of memory available ($((avail_kib / 1024)) MiB now)."
else
    echo "bench [$((SECONDS - started)) s]: a 2.17 GiB Llama-style model: capture, check, bisect" >&2
    large=$(PYTHONPATH="$top/python" "$venv_py" bench/large_model.py "$bin" "$out/large" 2>"$out/err.txt") \
        || { cat "$out/err.txt" >&2; exit 1; }
fi

elapsed=$((SECONDS - started))

# --- the document -------------------------------------------------------------------
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
# the widest vector ISA: the comparison's loops differ (AVX-512, AVX2, SSE2)
isa=$(grep -qw avx512f /proc/cpuinfo && echo "AVX-512" || { grep -qw avx2 /proc/cpuinfo && echo "AVX2, no AVX-512" || echo "SSE2"; })
{
    [ "$full" = 1 ] && echo "# Benchmarks at full size" || echo "# Benchmarks"
    echo
    if [ "$full" = 1 ]; then
        echo "Written by \`make bench-full\` ($(date -u +%Y-%m-%d)); every figure below comes from one run"
        echo "of \`BENCH_FULL=1 bench/run.sh\`, which took **${elapsed} s**: every section at full size,"
        echo "the large-model ones included. \`make bench\` (docs/benchmarks.md) is the quick one."
    else
        echo "Written by \`make bench\` ($(date -u +%Y-%m-%d)); every figure below comes from one run"
        echo "of \`bench/run.sh\`, which took **${elapsed} s** (target: under 10 minutes on 2 cores:"
        echo "$(met "$elapsed <= 600"))."
        echo "Scratch files (captured bundles, generated models and tensors) stay in the build folder's"
        echo "bench/ and are reused: a first run on a clean build folder makes them too, which that"
        echo "figure leaves out."
        echo "The sections at full size (1 GiB models and tensors, the zoo through every peer, capture"
        echo "time, a 2.17 GiB decoder) are \`make bench-full\`'s: docs/benchmarks-full.md."
    fi
    echo "The machine is shared (other jobs held its 2 cores during the run; the run itself under"
    echo "\`nice\`): read the figures as ratios of commands measured in the same run, under the"
    echo "same load, not as absolute times."
    echo "Machine: $cpu ($isa), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB memory; gcc $(gcc -dumpversion); Python $($py -c 'import sys; print(sys.version.split()[0])'), onnx $($py -c 'import onnx; print(onnx.__version__)'), numpy $($py -c 'import numpy; print(numpy.__version__)'), torch $($py -c 'import torch; print(torch.__version__)'); ONNX Runtime $("$bin" check "$rn" --format json | $py -c "import json,sys; print(json.load(sys.stdin)['environment']['ort_version'])")."
    [ "$quick" = 1 ] && { echo; echo "**BENCH_QUICK=1: small sizes, fewer repetitions; not figures to publish.**"; }
    echo
    echo "## inspect vs onnx.load"
    echo
    echo "### resnet18 (torchvision, exported by the capture package)"
    echo
    echo "$rn_mb MB, $rn_nodes nodes, weights inline. onnxparity: best of $((4 * reps)); onnx.load: best of 3"
    echo "in one process after \`import onnx\`, and the whole \`python3 -c 'import onnx; onnx.load(...)'\`."
    echo
    echo "| reader | time | peak RSS | onnxparity is |"
    echo "|---|---|---|---|"
    echo "| onnxparity inspect (process) | $t_rins s | $(mib "$m_rins") MiB | |"
    echo "| onnx.load (in process) | $t_rload s | | **${r_rload}×** faster |"
    echo "| python3 + import onnx + onnx.load (process) | $t_rpy s | $(mib "$m_rpy") MiB | ${r_rproc}× faster |"
    echo
    echo "Target 20× against onnx.load: $(met "$t_rload / $t_rins >= 20") (${r_rload}× against onnx.load alone, a"
    echo "whole onnxparity process against one call inside a warm Python)."
    echo
    echo "### generated models of growing size"
    echo
    echo "Models made by \`bench/genmodel.c\`: 64 Add nodes, weights of the size shown,"
    echo "inline or in one external file. onnxparity: best of $((4 * reps)); onnx.load: one run."
    echo
    echo "| model | onnxparity inspect | peak RSS | onnx.load | peak RSS | speed-up |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "onnxparity maps the file and decodes names, dims and offsets only, so its time"
    echo "and memory do not grow with the bytes of the weights (external data is checked"
    echo "for location and bounds, never read). onnx.load parses every byte into Python"
    echo "objects, and reads external data too."
    echo
    echo "## compare: two $biglabel float32 .npy files"
    echo
    echo "| tool | time | input GB/s | peak RSS |"
    echo "|---|---|---|---|"
    echo "| onnxparity compare (end to end) | $t_cmp s | $(gbs "$t_cmp") | $(mib "$m_cmp") MiB |"
    echo "| numpy: load + allclose + max abs/rel (float32) | $t_np s | $(gbs "$t_np") | $(mib "$m_np") MiB |"
    echo
    echo "End to end, onnxparity is **$(ratio "$t_np" "$t_cmp")×** numpy (target 10×)."
    echo
    echo "### the kernel"
    echo
    echo "In memory (\`bench/cmpbench.c\`, best of 3), as GB/s of input read. This CPU runs"
    echo "the $kpath kernel; \"portable loop\" is the GCC-vector-extension loop"
    echo "every other dtype and CPU uses (built with \`-march=native\`), which float32 ran"
    echo "before the hand-written kernels. Both give the same bits for every metric."
    echo
    echo "| kernel | GB/s | vs memcpy |"
    echo "|---|---|---|"
    echo "| memcpy (1 thread, bytes read) | $memcpy_gbs | 1.00 |"
    echo "| onp_compare, 1 thread | $k1 | **$(ratio "$k1" "$memcpy_gbs")** |"
    echo "| onp_compare, 2 threads | $k2 | $(ratio "$k2" "$memcpy_gbs") |"
    echo "| portable loop, 1 thread (memcpy in that run: $g_memcpy) | $g1 | $(ratio "$g1" "$g_memcpy") |"
    echo
    echo "Single-thread speed-up of the kernel over the portable loop: **$(ratio "$k1" "$g1")×**."
    echo "Same bits (\`bench/cmpsame.c\`: the whole metrics struct, random tensors of every float"
    echo "dtype and size, values on the histogram edges, zeros, NaN and infinities, four"
    echo "tolerances, one and two threads): $same_native differences over $same_n tensors natively,"
    if [ "$same_vg" -gt 0 ]; then echo "$same_avx2 over $same_vg under valgrind (the AVX2 kernel)."
    else echo "none run under valgrind here (the AVX2 kernel: make test-c and make bench-full run it)."; fi
    echo "End to end (default threads) onnxparity reads $(gbs "$t_cmp") GB/s, $(ratio "$(gbs "$t_cmp")" "$memcpy_gbs") of memcpy."
    echo
    if [ "$full" = 1 ]; then
    echo "Instructions per element (callgrind, \`onp_compare\` inclusive, $((cg_bytes / 1048576)) MiB of float32,"
    echo "one thread; valgrind emulates up to AVX2, so these are the AVX2 builds):"
    echo
    echo "| kernel | instructions / element |"
    echo "|---|---|"
    echo "| portable loop, AVX2 (the compiler's clone float32 ran before) | $ir_old |"
    echo "| hand-written AVX2 kernel (\`fast_f32_avx2\`) | $ir_new |"
    echo
    echo "Inner loops, from the disassembly (\`bench/loops.py\`): instructions per"
    echo "iteration, how many of them are vector instructions, the widest register."
    echo
    echo "| loop of | instructions | vector | register | elements per iteration |"
    echo "|---|---|---|---|---|"
    loop_rows "$out/cmpbench.dis" fast_f32_avx512 8
    loop_rows "$out/cmpbench.dis" fast_f32_avx2 "4 (one of 6 passes)"
    loop_rows "$out/cmpbench-generic.dis" fast_f32 8
    echo
    fi
    echo "## check overhead: torchvision resnet18 (random weights), $n_fix fixtures"
    echo
    echo "| program | time (best of $reps) |"
    echo "|---|---|"
    echo "| bare C program: same ORT library, same session, same fixtures, nothing else (\`bench/barecheck.c\`) | $t_bare s |"
    echo "| onnxparity check | $t_check s |"
    echo "| onnxparity check --no-lint | $t_nolint s |"
    echo
    note=""
    awk "BEGIN{exit !($overhead < 0)}" && note=" (negative: within this machine's run-to-run noise)"
    echo "Overhead of check over the bare run: **$overhead%**$note (target 5%). check adds the model's"
    echo "sha256 (libcrypto, on a second thread while ORT builds the session), lint, reading and"
    echo "comparing the expected outputs, and the report; and it runs ORT in a worker process (the"
    echo "default isolation: one fork, inputs and outputs through a socket), where the bare program"
    echo "calls ORT in-process."
    echo
    echo "### the Python API: onnxparity.check in-process against the tool as a subprocess"
    echo
    echo "One warm Python (the library loaded once), best of $reps each, the same check document."
    echo
    echo "| from Python | time |"
    echo "|---|---|"
    echo "| \`onnxparity.check(bundle)\` (libonnxparity.so through ctypes) | $t_api s |"
    echo "| \`subprocess.run([onnxparity, \"check\", bundle, \"--format\", \"json\"])\` | $t_apisub s |"
    echo "| \`onnxparity.check(bundle, isolate=False)\` (ORT in the calling process) | $t_apini s |"
    echo
    echo "In-process is **$(ratio "$t_apisub" "$t_api")×** the speed of the subprocess with the default"
    echo "isolation, **$(ratio "$t_apisub" "$t_apini")×** without it. Isolated, every call forks a worker that"
    echo "builds ONNX Runtime's environment and session anew, from either side; in-process without the"
    echo "worker the environment is built once and kept, which is where the time goes (a kernel crash"
    echo "then takes the caller down: the trade the option names)."
    echo
    echo "### the pip command against the tool it launches"
    echo
    echo "The manylinux wheel installed into a fresh virtual environment with nothing else"
    echo "(bench/wheel_launch.py): the console command (Python starts, imports onnxparity._tool,"
    echo "execs the tool) against the tool the wheel carries, interleaved, median of 15 after a"
    echo "warm-up.  Budget (issue 33): 1.2 x native + 60 ms."
    echo
    echo "$wheel_rows"
    echo
    echo "## check at size: against a bare ONNX Runtime run"
    echo
    echo "\`torch.nn.SiLU()\` (elementwise: ORT's run is about one pass over the bytes, so every"
    echo "extra pass of check shows at full weight) over one [1, 16, H, W] float32 input (the size column: the"
    echo "input's bytes, and the output's), captured by \`onnxparity.capture\` with the float64"
    echo "reference (reference64/output_0.pb, twice the output's bytes) and without it"
    echo "(bench/tensorsize.py). The bare run (\`bench/barecheck.c --read-expected\`): the same ORT"
    echo "library and session options, the input read with libonnxparity's reader, one Run, the"
    echo "expected output and its float64 reference read while ORT's output is held (every page of a"
    echo "mapped one read once); it compares nothing. The reader maps a .pb whose raw_data is aligned"
    echo "for its element and copies one that is not, for both programs alike (where raw_data starts"
    echo "is the writer's doing: here the 100 MiB input is aligned and its output and reference are"
    echo "not, at 1 MiB the reverse). Each command in its own process, bare and check in turn,"
    echo "$((4 * reps)) times at 1 MiB and $reps times above: the best wall time of each"
    echo "(time.perf_counter around the process; a load that comes and goes falls on both), and the"
    echo "peak RSS of one more run of each under GNU time."
    echo "Targets (issue 34): check within 1.3× the time and 1.5× the peak RSS of the bare run."
    echo
    echo "| tensor | float64 reference | bundle | bare run | peak RSS | onnxparity check | peak RSS | verdict | time vs bare | RSS vs bare |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    echo "$tsize"
    echo
    echo "Within both targets: $tsize_met rows. What check does beyond the bare run (issue 34, third"
    echo "round): the comparison, one pass over ORT's output and the expected one (and the float64"
    echo "reference, in the same walk); ONNX Runtime in a worker process, which creates its own"
    echo "session while the tool hashes the ORT library for the report; ORT's output written"
    echo "straight into shared memory the tool maps (whose pages cost here about twice private"
    echo "ones to fault in and free). Not done any more: the input copied into the worker (it maps"
    echo "the fixture's file itself when the tool's reader mapped it), the expected output read"
    echo "after the run (it is read beside it), a second pass over each output for its scale, the"
    echo "library hashed after the session. Without the float64 reference ORT runs once here (every"
    echo "output within its tolerance: the report's \`noise_rerun\` is \`not-needed\`;"
    echo "docs/compare.md). docs/benchmarks-full.md: the 1 GiB rows and the profile."
    echo
    echo "## bisect: resnet18, every intermediate exposed"
    echo
    echo "The same model and fixtures captured with eager intermediates ($n_values values exposed,"
    echo "$int_mb MB on disk). Each fixture runs once per instrumented session; \`check\` on the same"
    echo "bundle (best of 3) is the baseline. Besides the instrumented sessions, bisect also runs"
    echo "the plain model (its \`reproduce:\` line: do the instrumented outputs still match the"
    echo "plain ones against eager?), so it does more than one pass per fixture even unchunked."
    echo
    echo "| command | sessions | time | peak RSS | time vs check | RSS vs check |"
    echo "|---|---|---|---|---|---|"
    echo "| onnxparity check | 1 | $t_bcheck s | $(mib "$m_bcheck") MiB | 1.00× | 1.00× |"
    printf '%s\n' "${brows[@]}"
    echo
    if [ "$has_chunk" = 1 ]; then
        echo "One session fetches every exposed value of a fixture at once, so its peak holds"
        echo "the intermediates of the largest fixture (batch 8). \`--chunk N\` exposes at most N"
        echo "values per session and runs every fixture once per chunk: the peak falls"
        echo "($(mib "$m_bis") → $(mib "$m_chunk4") MiB at N = 4) while the time grows with the number of sessions"
        echo "(each one builds an ORT session and reruns the whole network). check's"
        echo "$(mib "$m_bcheck") MiB (one session, the fixtures and their outputs) is the floor."
    else
        echo "\`--chunk N\` (expose at most N values per session) is not in this build: the"
        echo "figures are for full exposure only, and the memory bound of chunked mode is missing."
    fi
    echo
    echo "## sweep: $n_levels optimization levels against $n_levels checks"
    echo
    echo "\`onnxparity sweep --no-search\` (one process: fixtures read once, one session per level)"
    echo "against $n_levels separate \`onnxparity check --opt-level L --no-lint --no-bisect\` runs (one run each)."
    echo
    echo "| command | time | peak RSS |"
    echo "|---|---|---|"
    printf '%s\n' "${srows[@]}"
    echo "| **$n_levels checks, total** | $t_checks s | $(mib "$m_checks") MiB (largest) |"
    echo "| **onnxparity sweep --no-search --once** (like for like) | $t_once s | $(mib "$m_once") MiB |"
    echo "| onnxparity sweep --no-search (default: each fixture twice) | $t_sweep s | $(mib "$m_sweep") MiB |"
    echo
    echo "Like for like (\`--once\`: each fixture once per level, $((n_levels * n_fix)) inferences as the"
    echo "checks), sweep takes **$(ratio "$t_once" "$t_checks")×** the time of the $n_levels checks. By default"
    echo "sweep runs every fixture twice per level (its determinism probe), $((2 * n_levels * n_fix))"
    echo "inferences: $(ratio "$t_sweep" "$t_checks")× the checks' time. Reading the model and the fixtures"
    echo "once saves the process starts and reads; ORT building $n_levels sessions and running resnet18"
    echo "is most of either figure."
    echo
    [ -z "$cap64" ] || { echo "$cap64"; echo; }
    [ -z "$captime" ] || { echo "$captime"; echo; }
    echo "$npz"
    echo
    echo "$peers"
    echo
    [ -z "$verify" ] || { echo "$verify"; echo; }
    [ -z "$zoo_peers" ] || { echo "$zoo_peers"; echo; }
    [ -z "$decode" ] || { echo "## generate: the decode loop beside a one-step logits check"; echo;
                          echo "$decode"; echo; }
    [ -z "$chainp" ] || { echo "$chainp"; echo; }
    [ -z "$large" ] || { echo "$large"; echo; }
    echo "## Targets"
    echo
    echo "- inspect resnet18 vs onnx.load: target 20×, measured ${r_rload}× ($(met "$t_rload / $t_rins >= 20"))."
    echo "- inspect: cost flat in initializer bytes (the times above do not grow from 16 MiB to $biglabel)."
    echo "- compare vs numpy: target 10×, measured $(ratio "$t_np" "$t_cmp")× end to end ($(met "$t_np / $t_cmp >= 10"))."
    echo "- compare kernel on one thread vs memcpy: target 0.5, measured $(ratio "$k1" "$memcpy_gbs") ($(met "$k1 / $memcpy_gbs >= 0.5"))."
    [ "$full" = 1 ] && echo "  $ir_new instructions per element under callgrind (AVX2), from $ir_old for the portable loop."
    echo "- check overhead vs a bare ORT program: target 5%, measured $overhead%."
    echo "- check at size vs a bare ORT run plus reading the files: within 1.3× the time and 1.5× the"
    echo "  peak RSS in $tsize_met rows (issue 34, Must-show 1)."
    echo "- bisect with every intermediate: $(ratio "$t_bis" "$t_bcheck")× the time and $(ratio "$m_bis" "$m_bcheck")× the peak RSS of check."
    echo "- sweep vs one check per level: $(ratio "$t_once" "$t_checks")× the time like for like (\`--once\`);"
    echo "  $(ratio "$t_sweep" "$t_checks")× by default, which runs each fixture twice for determinism."
    [ "$full" = 1 ] || echo "- make bench itself: target 10 minutes, took ${elapsed} s ($(met "$elapsed <= 600"))."
} > "$doc"
[ "$doc" = /dev/null ] || cat "$doc"
echo "bench [$((SECONDS - started)) s]: done in ${elapsed} s" >&2
