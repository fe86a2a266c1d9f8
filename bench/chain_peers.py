"""bench/chain_peers.py BIN SCRATCH — `onnxparity chain` beside Polygraphy
comparing the same two models (issue 30, Must-show 4).

A torchvision ResNet-18 (10 classes, 64x64 images, batches 2 and 3, random
weights, captured with the legacy exporter: its node names carry the module
paths) and two models made from its export by onnxparity._transforms:

  ort-extended*  ONNX Runtime's extended offline optimization, with one
                 FusedConv's weight scaled by 1.5 after it (a planted fault in
                 a fused node: Conv+Relu became FusedConv, which writes the
                 Relu's output name);
  fp16           the float16 conversion (keep_io_types), healthy.

For each pair (the export, the stage), what a user would run:

  onnxparity chain BUNDLE --stage NAME=MODEL     one command: both models over
                 the bundle's fixtures, each judged against eager at its
                 precision, the first divergent value matched in both graphs;
  polygraphy run EXPORT --save-outputs REF.json, then polygraphy run STAGE
                 --load-outputs REF.json: the stage's outputs against the
                 export's, Polygraphy's default tolerances (rtol = atol = 1e-5);
                 with --onnx-outputs mark all on both, every value the two
                 graphs name alike is compared too.

Each command runs once under GNU time (wall time and peak RSS of the same
run); a Polygraphy comparison is its two commands (time summed, RSS the
larger).  Run with the torch 2.x environment's python (.venv-torch2:
polygraphy, onnxruntime, onnxconverter-common).  Prints a markdown section.
"""
import contextlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

with contextlib.redirect_stdout(sys.stderr):  # polygraphy and torch log to stdout
    import onnx
    import torch
    import torchvision
    from onnx import numpy_helper
    from polygraphy.json import save_json

    import onnxparity
    from onnxparity import _transforms, ortlib


def timed(cmd):
    """(wall s, peak RSS KiB, exit code, stdout, stderr) of one run."""
    r = subprocess.run(["/usr/bin/time", "-f", "@@time %e %M", *cmd], capture_output=True, text=True)
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("@@time ")][-1]
    _, t, kib = line.split()
    return float(t), int(kib), r.returncode, r.stdout, r.stderr


def capture(bundle):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    g = torch.Generator().manual_seed(0)
    with contextlib.redirect_stdout(sys.stderr):
        onnxparity.capture(model, [torch.randn(b, 3, 64, 64, generator=g) for b in (2, 3)], str(bundle),
                           exporter="legacy")


def plant(src, dst):
    """The middle FusedConv's weight x1.5; returns that node."""
    m = onnx.load(src)
    fused = [n for n in m.graph.node if n.op_type == "FusedConv"]
    node = fused[len(fused) // 2]
    inits = {i.name: i for i in m.graph.initializer}
    w = inits[node.input[1]]
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * 1.5, w.name))
    onnx.save(m, dst)
    return node


def feeds(bundle):
    out = []
    for d in sorted(bundle.glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        f = {}
        for p in sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.rsplit("_", 1)[1])):
            t = onnx.load_tensor(str(p))
            f[t.name] = numpy_helper.to_array(t)
        out.append(f)
    return out


SAVED = {}  # mark_all: (time, rss) of the export's --save-outputs run, made once per mode


def polygraphy(exe, export, stage, inputs, ref, mark_all):
    """Polygraphy's two commands: (time, rss, passed, mismatched values in its
    order, values compared over the iterations).  The export's outputs are
    saved once per mode and reused (the same command for every pair); its
    time and RSS count in each pair."""
    extra = ["--onnx-outputs", "mark", "all"] if mark_all else []
    base = ["--onnxrt", "--load-inputs", str(inputs)] + extra
    ref = ref.with_name(f"{ref.stem}{'-all' if mark_all else ''}.json")
    if mark_all not in SAVED:
        t1, m1, rc1, _, e1 = timed([exe, "run", str(export), *base, "--save-outputs", str(ref)])
        if rc1:
            sys.exit(f"bench/chain_peers.py: polygraphy could not run {export}: {e1.strip()[-2000:]}")
        SAVED[mark_all] = (t1, m1)
    t1, m1 = SAVED[mark_all]
    t2, m2, rc2, out, err = timed([exe, "run", str(stage), *base, "--load-outputs", str(ref)])
    text = out + err
    mism = re.findall(r"Mismatched outputs: \[(.*?)\]", text)
    names = re.findall(r"'([^']*)'", mism[0]) if mism else []
    compared = len(re.findall(r"Comparing Output: ", text))
    passed = rc2 == 0 and "FAILED" not in text
    return t1 + t2, max(m1, m2), passed, names, compared


def chain(binary, bundle, name, model, prec):
    cmd = [str(binary), "chain", str(bundle), "--stage", f"{name}={model}", "--precision", f"{name}={prec}",
           "--format", "json", "--ort-lib", str(ortlib.find()[0])]
    t, kib, rc, out, err = timed(cmd)
    if rc not in (0, 1):
        sys.exit(f"bench/chain_peers.py: onnxparity chain exit {rc}: {err.strip()}")
    return t, kib, json.loads(out)


def main():
    binary, scratch = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    exe = shutil.which("polygraphy", path=str(pathlib.Path(sys.executable).parent))
    if exe is None:
        sys.exit("bench/chain_peers.py: no polygraphy beside this python (run it with .venv-torch2/bin/python)")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    bundle = scratch / "bundle"
    t0 = time.perf_counter()
    capture(bundle)
    with contextlib.redirect_stdout(sys.stderr):
        stages = {s["name"]: s for s in _transforms.make(str(bundle), str(scratch / "stages"),
                                                         ["ort-extended", "fp16"])}
        save_json(feeds(bundle), str(scratch / "inputs.json"))
    bad = scratch / "stages" / "ort-extended-bad.onnx"
    node = plant(stages["ort-extended"]["model"], str(bad))
    prep = time.perf_counter() - t0
    export = bundle / "model.onnx"
    n_export = sum(len(n.output) for n in onnx.load(str(export)).graph.node)
    pairs = [("ort-extended*", "ort-extended", bad, "fp32"), ("fp16", "fp16", stages["fp16"]["model"], "fp16")]
    rows, names = [], []
    for label, name, model, prec in pairs:
        tc, mc, doc = chain(binary, bundle, name, model, prec)
        st = next(s for s in doc["stages"] if s["name"] == name)
        fd = st["first_divergent"]
        first = fd["first"] if fd and fd.get("found") else None
        what = f"stage {name} **{st['status']}**"
        if first:
            what += (f"; first divergent value `{first['value']}`: `{first['node']}` ({first['op_type']}) "
                     f"in the stage, `{first['export_node']}` ({first['export_op_type']}) in the export, "
                     f"export group {' + '.join(g['op_type'] for g in fd.get('export_group', []))}, "
                     f"modules {', '.join(fd.get('modules', [])) or 'none'} "
                     f"({fd['values_compared']} values compared)")
        rows.append(f"| {label} | onnxparity chain | {tc:.2f} s | {mc / 1024:.0f} MiB | 1.00× | 1.00× | {what} |")
        for mark_all in (False, True) if first else (False,):
            tp, mp, ok, mism, compared = polygraphy(exe, export, model, scratch / "inputs.json",
                                                       scratch / "ref.json", mark_all)
            nfix = len(list(bundle.glob("test_data_set_*")))
            say = "PASSED" if ok else f"FAILED: {len(mism)} mismatched"
            if mism:
                say += f", first in its list `{mism[0]}`"
            if mark_all:
                say += f" ({compared // nfix} of the export's {n_export} values compared: the ones named alike)"
            cmd = "polygraphy run ×2" + (" --onnx-outputs mark all" if mark_all else "")
            rows.append(f"| {label} | {cmd} | {tp:.2f} s | {mp / 1024:.0f} MiB | {tp / tc:.2f}× | "
                        f"{mp / mc:.2f}× | {say} |")
        names.append(first)
    total = time.perf_counter() - t0
    print("## chain: the deployment chain beside Polygraphy")
    print()
    print(f"ResNet-18 (10 classes, 64×64, fixtures of batch 2 and 3, legacy export) and two models made from its "
          f"export: `ort-extended*` (ONNX Runtime's extended optimization, then the weight of FusedConv "
          f"`{node.name}` ×1.5: a planted fault in a fused node) and `fp16` (float16, keep_io_types; "
          f"healthy). Each command once under GNU time (time and peak RSS of the same run); a Polygraphy "
          f"comparison is two commands (save the export's outputs, once and counted in each pair; compare the "
          f"stage's), times summed. "
          f"`onnxparity chain` runs the export and the stage against eager and matches the first divergent "
          f"value; its ratios are the denominators. Preparation (capture, transforms) {prep:.0f} s, the "
          f"section {total:.0f} s.")
    print()
    print("| pair | command | time | peak RSS | time vs chain | RSS vs chain | what it names |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(r)
    print()
    print("What each names: Polygraphy compares the stage's outputs with the export's at a fixed tolerance, "
          "so the healthy float16 stage fails there, while chain finds it within float16's envelope against "
          "eager. With `mark all` Polygraphy lists every value named alike in both graphs that differs (the "
          "fault and everything after it, in graph order) and skips the values a fusion renamed or removed; "
          "chain names the stage and its first divergent value with that value's producer in both graphs: the "
          "fused node in the stage, the node the fusion ended in in the export (the legacy exporter's node "
          "names carry the module path).")
    os.environ.get("ONP_BENCH_KEEP") or shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
