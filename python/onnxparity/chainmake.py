"""Make a deployment chain's stages from a bundle and check them
(docs/chain.md):

    python -m onnxparity.chainmake BUNDLE OUT --transform fp16 --transform int8-qdq [--check]

writes OUT/NAME.onnx for each transform (onnxparity._transforms.TRANSFORMS:
ort-basic, ort-extended, slim, fp16, fp16-occ, fp16-region, int8-dynamic, int8-qdq) and
OUT/stages.json (each stage's name, model, precision, transform, options and
the versions of the packages that made it); prints the `onnxparity chain`
command of those stages, or with --check runs it (the tool found as the
pytest helper finds it: $ONNXPARITY_BIN, else `onnxparity` on PATH) and
exits with its code.  Exit 2 for bad arguments or an unknown transform, 3
when the bundle has no model.onnx, 1 when a transform fails (its error on
stderr).

    python -m onnxparity.chainmake fp16-search BUNDLE OUT [--budget N] [--no-shrink] [--ort-lib PATH]

searches a node_block_list that brings the float16 conversion within
float16's envelope (onnxparity._fp16search, docs/chain.md): writes each
conversion it judged (OUT/tryNNN.onnx) and OUT/fp16-search.json (the
answer: found, verdict, node_block_list, the steps), prints the list and the
verdict.  Exit 0 when a list was found (empty when the plain conversion
passes), 1 when none was within the budget, 2 bad arguments, 3 no
model.onnx, 4 when ONNX Runtime refused a conversion.
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


def fp16_search(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m onnxparity.chainmake fp16-search",
                                description="Search a float16 node_block_list that passes the chain.")
    p.add_argument("bundle")
    p.add_argument("out")
    p.add_argument("--budget", type=int, default=24, help="conversions to judge at most (default 24)")
    p.add_argument("--no-shrink", action="store_true", help="keep the grown list, do not shrink it")
    p.add_argument("--ort-lib", help="the ONNX Runtime library the chain runs on")
    a = p.parse_args(argv)
    if a.budget < 1:
        print(f"chainmake fp16-search: --budget must be at least 1, not {a.budget}", file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(a.bundle, "model.onnx")):
        print(f"chainmake fp16-search: {a.bundle}: no model.onnx", file=sys.stderr)
        return 3
    from . import _fp16search
    opts = {"ort_lib": a.ort_lib} if a.ort_lib else {}
    try:
        r = _fp16search.search(a.bundle, a.out, budget=a.budget, shrink=not a.no_shrink, **opts)
    except Exception as e:  # noqa: BLE001 - the converter's or the chain's own error, as it is
        print(f"chainmake fp16-search: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(a.out, "fp16-search.json"), "w") as f:
        json.dump(r, f, indent=1)
    print(f"plain fp16: {r['plain']['status']}" + (f", first divergent {r['plain']['first_node']}"
                                                   if r["plain"]["first_node"] else ""))
    if r["found"]:
        print(f"node_block_list={r['node_block_list']!r} (transform {r['transform']}): "
              f"verdict {r['verdict']}, {r['model']}")
        if r["op_form"]:
            print(f"op types {r['op_form']['op_types']!r} added to the default op_block_list: "
                  f"verdict {r['op_form']['verdict']}, {r['op_form']['model']}")
    else:
        print(f"no list found: verdict {r['verdict']}")
    print(r["note"])
    if r["found"]:
        return 0
    return 4 if r["status"] == "error" else 1


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "fp16-search":
        return fp16_search(argv[1:])
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
