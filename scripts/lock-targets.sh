#!/usr/bin/env bash
# lock-targets.sh [IN [OUT]] — lock the deployment targets of a torch 2.x test
# environment: the '#target NAME==VERSION' lines of IN (default
# scripts/requirements-torch2.in) become '#target NAME==VERSION
# --hash=sha256:...' lines at the end of OUT (default
# scripts/requirements-torch2.txt); the rest of OUT is kept as it is.
#
# A deployment target is an ONNX Runtime build a user ships instead of the
# environment's onnxruntime (onnxruntime-openvino, onnxruntime-gpu): each
# owns the import name onnxruntime/, so it cannot share site-packages with the
# other.  '#target' lines are comments to pip; setup.sh installs each into its
# own folder (pip --target, --no-deps: it needs nothing the environment
# lacks).  Each wheel is downloaded alone (--no-deps), for Debian 12's
# /usr/bin/python3 (CPython 3.11, Linux x86-64); lock-torch2.sh calls this
# after writing the main lock.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
in=${1:-$top/scripts/requirements-torch2.in}
out=${2:-$top/scripts/requirements-torch2.txt}
[ -f "$in" ] && [ -f "$out" ] || { echo "lock-targets: usage: lock-targets.sh [IN [OUT]] (both files must exist)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 -m venv "$tmp/venv"
{
    grep -v '^#target' "$out" || true
    sed -n 's/^#target[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' "$in" | while read -r spec; do
        rm -rf "$tmp/w" && mkdir -p "$tmp/w"
        "$tmp/venv/bin/python" -m pip download -q --no-deps --only-binary :all: -d "$tmp/w" "$spec"
        f=$(ls "$tmp"/w/*.whl)
        hash=$("$tmp/venv/bin/python" -m pip hash -a sha256 "$f" | sed -n 's/^--hash=//p')
        printf '#target %s --hash=%s\n' "$spec" "$hash"
    done
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "lock-targets: $(grep -c '^#target' "$out") deployment target(s) -> $out" >&2
