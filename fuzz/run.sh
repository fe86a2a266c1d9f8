#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS — fuzz each libFuzzer target BUILD_DIR/fuzz_X for
# SECONDS (-max_total_time), one target after another.
#
# Seeds come from the committed corpus fuzz/corpus/X/, which is only read:
# new inputs go to the scratch folder BUILD_DIR/corpus/X/ (kept between runs,
# so coverage accumulates), crash reproducers to
# BUILD_DIR/fuzz-artifacts/STAMP/X/, the full log to BUILD_DIR/logs/.
# libFuzzer stops a target at its first crash.
#
# Prints per target "fuzz_X: N execs in Ss, C crashes" (and each reproducer),
# writes the same lines to BUILD_DIR/fuzz-report.txt, and exits 1 when any
# target crashed, 2 on bad usage.  Extra libFuzzer flags: FUZZ_FLAGS.
set -u

build=${1:-}
secs=${2:-}
if [ -z "$build" ] || [ ! -d "$build" ] || ! [ "$secs" -gt 0 ] 2>/dev/null; then
    echo "usage: fuzz/run.sh BUILD_DIR SECONDS" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
stamp=$(date +%Y%m%d-%H%M%S)
report=$build/fuzz-report.txt
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$build/logs"
{
    echo "# fuzz run $stamp: ${secs}s per target"
} >"$report"

total_crashes=0
targets=0
for bin in "$build"/fuzz_*; do
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
    name=$(basename "$bin")
    target=${name#fuzz_}
    scratch=$build/corpus/$target
    artifacts=$build/fuzz-artifacts/$stamp/$target
    log=$build/logs/$name.log
    mkdir -p "$scratch" "$artifacts"
    seeds=()
    [ -d "$here/corpus/$target" ] && seeds=("$here/corpus/$target")
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} "$scratch" "${seeds[@]}" >"$log" 2>&1
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    crashes=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
        -o -name 'oom-*' \) | wc -l)
    line="$name: ${execs:-0} execs in ${secs}s, $crashes crashes"
    echo "$line" | tee -a "$report"
    if [ "$crashes" -gt 0 ]; then
        find "$artifacts" -type f | sort | sed 's/^/    reproducer: /' | tee -a "$report"
        grep -E 'ERROR: |runtime error|SUMMARY' "$log" | head -n 5 | sed 's/^/    /' | tee -a "$report"
    fi
    total_crashes=$((total_crashes + crashes))
    targets=$((targets + 1))
done
echo "fuzz: $targets targets, $total_crashes crashes (report: $report)" | tee -a "$report"
[ "$targets" -gt 0 ] && [ "$total_crashes" -eq 0 ]
