"""Make a deployment chain's stages from a bundle and check them
(docs/chain.md):

    python -m onnxparity.chainmake BUNDLE OUT --transform fp16 --transform int8-qdq [--check]

writes OUT/NAME.onnx for each transform (onnxparity._transforms.TRANSFORMS:
ort-basic, ort-extended, slim, fp16, fp16-occ, int8-dynamic, int8-qdq) and
OUT/stages.json (each stage's name, model, precision, transform, options and
the versions of the packages that made it); prints the `onnxparity chain`
command of those stages, or with --check runs it (the tool found as the
pytest helper finds it: $ONNXPARITY_BIN, else `onnxparity` on PATH) and
exits with its code.  Exit 2 for bad arguments or an unknown transform, 3
when the bundle has no model.onnx, 1 when a transform fails (its error on
stderr).
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from typing import List, Optional

from . import _transforms


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m onnxparity.chainmake",
                                description="Make a deployment chain's stages from a bundle.")
    p.add_argument("bundle")
    p.add_argument("out")
    p.add_argument("--transform", action="append", required=True,
                   help=f"one of {', '.join(_transforms.TRANSFORMS)} (repeatable, in chain order)")
    p.add_argument("--check", action="store_true", help="run onnxparity chain on the stages")
    a = p.parse_args(argv)
    unknown = [t for t in a.transform if t not in _transforms.TRANSFORMS]
    if unknown:
        print(f"chainmake: unknown transform {unknown[0]!r}: one of {', '.join(_transforms.TRANSFORMS)}",
              file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(a.bundle, "model.onnx")):
        print(f"chainmake: {a.bundle}: no model.onnx", file=sys.stderr)
        return 3
    try:
        stages = _transforms.make(a.bundle, a.out, a.transform)
    except Exception as e:  # noqa: BLE001 - a transform's own error, reported as it is
        print(f"chainmake: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(a.out, "stages.json"), "w") as f:
        json.dump(stages, f, indent=1)
    tool = os.environ.get("ONNXPARITY_BIN") or shutil.which("onnxparity") or "onnxparity"
    cmd = [tool, "chain", a.bundle] + _transforms.stage_args(stages)
    if not a.check:
        print(shlex.join(cmd))
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
