#!/usr/bin/env bash
# replay.sh BUILD_DIR — replay the fuzz corpora through the libFuzzer targets
# as an ordinary test (no mutation: each input runs once).
#
# For each target binary BUILD_DIR/fuzz_X: every file of the committed corpus
# fuzz/corpus/X/, then extra seeds taken at run time from the ONNX test data
# when it is installed (ONNX_TESTDATA, default /usr/share/libonnx-testdata/data):
#   model  every model.onnx
#   pb     every *.pb
#   wire   both
#   lint, extdata  every model.onnx
# (other targets, e.g. npy/npz, testdata, manifest, criteria: the committed
# corpus only).  Nothing from the
# test data is copied into the repository.  The extras stop once a target has
# used FUZZ_REPLAY_SECONDS (default 60); the committed corpus always runs.
#
# Prints per target "fuzz_X: N inputs replayed, ok" (or the crashing input and
# the sanitizer's report), then "fuzz-replay: N passed, N failed" with one
# count per target.  Exit status 1 when any target crashed, 2 on bad usage.
set -u

build=${1:-}
if [ -z "$build" ] || [ ! -d "$build" ]; then
    echo "usage: fuzz/replay.sh BUILD_DIR (holding the fuzz_X binaries)" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
testdata=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
budget=${FUZZ_REPLAY_SECONDS:-60}
batch=200 # inputs per libFuzzer process
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Extra seeds for a target, one path per line.
extras() {
    [ -d "$testdata" ] || return 0
    case $1 in
    model) find "$testdata" -type f -name model.onnx ;;
    pb) find "$testdata" -type f -name '*.pb' ;;
    wire) find "$testdata" -type f \( -name model.onnx -o -name '*.pb' \) ;;
    lint | extdata) find "$testdata" -type f -name model.onnx ;;
    esac | LC_ALL=C sort
}

# Run one list of inputs; 0 when none crashed.  On a crash, print the input
# that crashed and the sanitizer's summary.
run_list() {
    local bin=$1 list=$2 log=$tmp/log
    [ -s "$list" ] || return 0
    # -timeout: a single input taking longer is a failure (a hang)
    if xargs -d '\n' -n "$batch" "$bin" -timeout=30 -rss_limit_mb=4096 <"$list" >"$log" 2>&1; then
        return 0
    fi
    local input # the last input started before the first sanitizer report
    input=$(awk '/^Running: /{r=substr($0, 10)} /ERROR: |runtime error|deadly signal/{print r; exit}' "$log")
    echo "$(basename "$bin"): CRASH on ${input:-an unknown input}"
    grep -E 'ERROR: |runtime error|SUMMARY|#[0-9]+ 0x.* in ' "$log" | head -n 25 | sed 's/^/    /'
    return 1
}

passed=0
failed=0
for bin in "$build"/fuzz_*; do
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
    name=$(basename "$bin")
    target=${name#fuzz_}
    start=$SECONDS
    count=0
    ok=1
    # the committed corpus, always in full
    find "$here/corpus/$target" -type f 2>/dev/null | LC_ALL=C sort >"$tmp/corpus"
    if run_list "$bin" "$tmp/corpus"; then
        count=$(wc -l <"$tmp/corpus")
    else
        ok=0
    fi
    # extra seeds, in batches, until the time budget is spent
    extras "$target" >"$tmp/extra"
    total=$(wc -l <"$tmp/extra")
    done_extra=0
    while [ $ok = 1 ] && [ "$done_extra" -lt "$total" ]; do
        if [ $((SECONDS - start)) -ge "$budget" ]; then
            echo "$name: time budget (${budget}s) reached after $done_extra of $total test-data seeds"
            break
        fi
        tail -n +$((done_extra + 1)) "$tmp/extra" | head -n "$batch" >"$tmp/chunk"
        n=$(wc -l <"$tmp/chunk")
        if run_list "$bin" "$tmp/chunk"; then
            done_extra=$((done_extra + n))
        else
            ok=0
        fi
    done
    count=$((count + done_extra))
    if [ $ok = 1 ]; then
        echo "$name: $count inputs replayed, ok"
        passed=$((passed + 1))
    else
        echo "$name: FAILED"
        failed=$((failed + 1))
    fi
done

if [ $((passed + failed)) -eq 0 ]; then
    echo "fuzz-replay: no fuzz_X binaries in $build" >&2
    echo "fuzz-replay: 0 passed, 1 failed"
    exit 1
fi
echo "fuzz-replay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
