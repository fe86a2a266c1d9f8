#!/usr/bin/env bash
# run.sh CANARY — prove the sanitizers are active in the build that made
# CANARY (tests/canary/canary.c): each planted bug must be reported by its
# sanitizer and must stop the program.  Prints one line per bug and
# "canary: ASan and UBSan active"; exit 1 when either report is missing
# (the build is not instrumented, or recovers from UB), 2 on bad usage.
set -u
bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "usage: tests/canary/run.sh CANARY_BINARY" >&2
    exit 2
fi
bad=0
# mode, what the sanitizer's report must contain, who reports it
check() {
    local out rc
    out=$(ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 "$bin" "$1" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "$2"; then
        echo "canary $1: $3 reported it ($2), exit $rc"
    else
        echo "canary $1: NOT caught (exit $rc): $3 is not active in this build" >&2
        printf '%s\n' "$out" | head -n 5 | sed 's/^/    /' >&2
        bad=1
    fi
}
check heap "AddressSanitizer: heap-buffer-overflow" "AddressSanitizer"
check signed "runtime error: signed integer overflow" "UBSan"
if [ $bad -ne 0 ]; then
    echo "canary: FAILED: the sanitizer build does not catch planted bugs" >&2
    exit 1
fi
echo "canary: ASan and UBSan active"
