#!/usr/bin/env bash
# run_unit.sh BIN... — run each unit-test binary from the repository root,
# show its closing line, and finish with the totals as "N passed, N failed".
set -u
pass=0; fail=0; bad=0
for t in "$@"; do
    out=$("$t" 2>&1); rc=$?
    last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    [ -n "$last" ] || last="(no result line)"
    printf '%-40s %s\n' "$(basename "$t")" "$last"
    if [ $rc -ne 0 ]; then printf '%s\n' "$out" | grep -E '^(FAIL|SKIP)|Sanitizer|runtime error' | head -40; bad=1; fi
    p=$(printf '%s' "$last" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
    f=$(printf '%s' "$last" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
    [ $rc -ne 0 ] && [ "${f:-0}" = 0 ] && fail=$((fail + 1))
done
echo "unit: $pass passed, $fail failed"
exit $bad
