#!/usr/bin/env bash
# demo.sh BIN — the main job on the example bundles shipped in examples/:
# inspect a model, then check two exports of the same small CNN against
# their eager PyTorch outputs.  The healthy export passes; the export made
# while the model was still in training mode fails, and bisect names the
# first node that diverges; demo/report.html shows it all.  Exits 0 when
# every verdict is the expected one.
set -u
bin=${1:-build/onnxparity}
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
[ -n "${NO_COLOR:-}" ] || [ ! -t 1 ] && say() { printf '\n== %s\n' "$*"; }

say "inspect examples/healthy/model.onnx"
"$bin" inspect examples/healthy/model.onnx || exit 1

say "check examples/healthy (exported in eval mode): expect pass"
"$bin" check examples/healthy --top-k auto
healthy=$?

say "check examples/training (exported in training mode): expect FAIL"
"$bin" check examples/training --top-k auto
training=$?

say "bisect examples/training: which node diverges first?"
"$bin" bisect examples/training | head -n 18
bisect=${PIPESTATUS[0]}

say "report: demo/report.html"
mkdir -p demo
tmp=$(mktemp -d)
"$bin" bisect examples/training --format json > "$tmp/bisect.json"
"$bin" diagnose examples/training --format json > "$tmp/diagnose.json"
"$bin" check examples/training --format json > "$tmp/check.json"
"$bin" report "$tmp/bisect.json" "$tmp/diagnose.json" "$tmp/check.json" --html demo/report.html
report=$?
rm -rf "$tmp"
[ "$report" -eq 0 ] && echo "wrote demo/report.html (open it in a browser: no network needed)"

say "summary"
echo "healthy export:  exit $healthy (0 = parity holds)"
echo "training export: exit $training (1 = parity fails)"
echo "bisect:          exit $bisect (1 = a first divergent node was named)"
echo "report:          exit $report (0 = demo/report.html written)"
if [ "$healthy" -eq 0 ] && [ "$training" -eq 1 ] && [ "$bisect" -eq 1 ] && [ "$report" -eq 0 ]; then
    echo "demo: every verdict as expected"
    exit 0
fi
echo "demo: unexpected verdicts" >&2
exit 1
