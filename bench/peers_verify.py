"""bench/peers_verify.py BIN WORK [MODEL[:planted]...] — torch.onnx.verification beside bisect.

What a torch 2.x user runs to find where an export goes wrong:
``torch.onnx.verification.verify_onnx_program(onnx_program, args,
compare_intermediates=True)`` (torch 2.9.1): an fx Interpreter over the
ExportedProgram, and for every fx node whose name is a value of the ONNX
graph, ONNX Runtime computes that value (``ONNXProgram.compute_values``) and
the two are compared.  It needs the ExportedProgram, so dynamo exports only.
Against it: ``onnxparity bisect BUNDLE --fixture 0`` on the bundle of the
same export.

Per model (MODEL: resnet18, encoder; default both; MODEL:planted times the
planted export alone) (torchvision resnet18 at 224x224, fixtures of batch 2 and 4 (batch 1 is refused by the ExportedProgram's own guard x.size()[0] != 1 under a dynamic batch); a
2-layer nn.TransformerEncoder, d_model 32), healthy and with one value
planted (scaled by 1.05 right where its node makes it; the Mul takes over the
value's name, so both tools see the planted value under its own name):
each tool in its own process, wall time and peak RSS from GNU time.  The
verification process loads the saved ExportedProgram (torch.export.save) and
the bundle's model.onnx, then verifies fixture 0: its time is the whole
process (importing torch included) and, apart, the verify call alone.
"names" is the first value in execution order that the tool calls bad:
bisect's first_divergent; for verification (which returns numbers, not a
verdict), the first value with max_abs_diff over 1e-3, and apart the first
over the one threshold it applies itself (it logs a warning above
max_abs_diff 0.01 or max_rel_diff 0.1, whose relative half fires on float
noise near zero), its module read from the ONNX node's name scopes (none
where the optimizer fused the node); right when it is the planted value or
a value of the planted module.

Run with the torch 2.x environment's python (.venv-torch2).  Prints a
markdown section on stdout.
"""
import ast
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve()
PLANT = {"resnet18": "layer3.0.bn2", "encoder": "layers.1.linear1"}


# --------------------------------------------------------------------------- child: make

def make(name, bundle):
    """Capture ``name`` with the dynamo exporter into ``bundle`` and save the
    ExportedProgram of that very export beside it (bundle.pt2)."""
    import warnings
    warnings.filterwarnings("ignore")
    import torch

    import onnxparity
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18().eval()
        fixtures = [torch.randn(b, 3, 224, 224, generator=g) for b in (2, 4)]
    else:
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        fixtures = [torch.randn(b, 6, 32, generator=g) for b in (2, 4)]
    programs = []
    real = torch.onnx.export

    @functools.wraps(real)  # the capture reads export's signature (dynamo=)
    def keep(*a, **kw):
        p = real(*a, **kw)
        programs.append(p)
        return p

    torch.onnx.export = keep
    try:
        onnxparity.capture(model, fixtures, bundle, exporter="dynamo")
    finally:
        torch.onnx.export = real
    torch.export.save(programs[-1].exported_program, str(bundle) + ".pt2")


# --------------------------------------------------------------------------- child: verify

def verify(bundle, pt2):
    """Verify fixture 0 of ``bundle`` against the saved ExportedProgram; one
    JSON line: the call's time, the values compared, the first bad one."""
    import warnings
    warnings.filterwarnings("ignore")
    import onnx
    import onnx_ir
    import torch
    from onnx import numpy_helper
    from torch.onnx.verification import verify_onnx_program
    torch.set_num_threads(2)
    ep = torch.export.load(pt2)
    program = torch.onnx.ONNXProgram(onnx_ir.load(str(bundle / "model.onnx")), ep)
    d = bundle / "test_data_set_0"
    args = tuple(torch.from_numpy(numpy_helper.to_array(onnx.load_tensor(str(f))).copy())
                 for f in sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])))
    t0 = time.perf_counter()
    infos = verify_onnx_program(program, args=args, compare_intermediates=True)
    t = time.perf_counter() - t0
    warned = next((i for i in infos if i.max_abs_diff > 0.01 or i.max_rel_diff > 0.1), None)
    bad = next((i for i in infos if i.max_abs_diff > 1e-3), None)
    print(json.dumps({"verify_s": t, "values": len(infos), "first_bad": bad.name if bad else None,
                      "first_warned": warned.name if warned else None,
                      "warned_abs": warned.max_abs_diff if warned else None,
                      "warned_rel": warned.max_rel_diff if warned else None}))


# --------------------------------------------------------------------------- parent

def timed(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if not m:
        sys.exit(f"peers_verify: no peak RSS for {cmd[:4]}:\n{r.stderr[-3000:]}")
    return r, wall, int(m.group(1))


def plant(src, dst, module):
    """A copy of bundle ``src`` (and its .pt2) whose value made in ``module``
    is scaled by 1.05 where its node makes it; returns the value's name."""
    import onnx
    from onnx import helper
    shutil.copytree(src, dst)
    shutil.copy(str(src) + ".pt2", str(dst) + ".pt2")
    index = json.loads((src / "test_data_set_0/intermediates/index.json").read_text())
    value = next(e["value"] for e in index["entries"] if e["module"] == module)
    m = onnx.load(str(dst / "model.onnx"))
    j, node = next((j, n) for j, n in enumerate(m.graph.node) if value in n.output)
    node.output[list(node.output).index(value)] = value + "__pre"
    m.graph.initializer.append(helper.make_tensor(value + "__k", onnx.TensorProto.FLOAT, [], [1.05]))
    m.graph.node.insert(j + 1, helper.make_node("Mul", [value + "__pre", value + "__k"], [value], name="planted"))
    onnx.save(m, str(dst / "model.onnx"))
    return value


def module_of_value(bundle, value):
    """The module whose node makes ``value`` in the bundle's model.onnx, from
    the node's name scopes (a chain of dotted module paths, then the op's
    own name); through the planted Mul to the node it follows."""
    import onnx
    nodes = onnx.load(str(bundle / "model.onnx"), load_external_data=False).graph.node
    made = {o: n for n in nodes for o in n.output}
    node = made.get(value)
    if node is not None and node.name == "planted":
        node = made.get(node.input[0])
    if node is None:
        return None
    meta = {p.key: p.value for p in node.metadata_props}
    path = []
    for s in ast.literal_eval(meta.get("pkg.torch.onnx.name_scopes", "[]"))[1:]:
        if path and not s.startswith(path[-1] + "."):
            break
        path.append(s)
    return path[-1] if path else None


def main():
    binary, work = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(HERE.parents[1] / "python"))
    # MODEL or MODEL:planted (the planted export alone); make bench: encoder:planted
    picks = [a.split(":") for a in sys.argv[3:]] or [[n] for n in PLANT]
    rows = []
    for pick in picks:
        name, module = pick[0], PLANT[pick[0]]
        only_planted = pick[1:] == ["planted"]
        healthy = work / name
        r = subprocess.run([sys.executable, str(HERE), "--make", name, str(healthy)], capture_output=True,
                           text=True, env=env)
        if r.returncode != 0:
            sys.exit(f"peers_verify: capture of {name} failed:\n{r.stderr[-3000:]}")
        planted = work / f"{name}-planted"
        value = plant(healthy, planted, module)
        cases = ((f"{name}, healthy", healthy, None), (f"{name}, {module} planted", planted, module))
        for label, b, want in cases[1:] if only_planted else cases:
            rb, tb, mb = timed([str(binary), "bisect", str(b), "--fixture", "0", "--format", "json"])
            if rb.returncode not in (0, 1):
                sys.exit(f"peers_verify: bisect exited {rb.returncode}:\n{rb.stderr[-3000:]}")
            fd = json.loads(rb.stdout).get("first_divergent")
            rv, tv, mv = timed([sys.executable, str(HERE), "--verify", str(b), str(b) + ".pt2"], env)
            if rv.returncode != 0:
                sys.exit(f"peers_verify: verification exited {rv.returncode}:\n{rv.stderr[-3000:]}")
            v = json.loads(rv.stdout.strip().splitlines()[-1])
            v_mod = module_of_value(b, v["first_bad"]) if v["first_bad"] else None
            rows.append(dict(label=label, want=want, value=value if want else None, tb=tb, mb=mb,
                             b_names=(fd or {}).get("module"), b_value=(fd or {}).get("output"),
                             tv=tv, tcall=v["verify_s"], mv=mv, n=v["values"], v_value=v["first_bad"],
                             v_names=v_mod, w_value=v["first_warned"], w_abs=v["warned_abs"],
                             w_rel=v["warned_rel"],
                             w_names=module_of_value(b, v["first_warned"]) if v["first_warned"] else None))
    print("## Peers: torch.onnx.verification against bisect")
    print()
    print("`verify_onnx_program(..., compare_intermediates=True)` (torch "
          f"{__import__('torch').__version__}) against `onnxparity bisect --fixture 0` on the same dynamo "
          "export and fixture (bench/peers_verify.py); each in its own process, wall time and peak RSS "
          "from GNU time. \"names\": the first value each calls bad, and its module.")
    print()
    print("| model | bisect | peak RSS | names | verification (process; verify call) | peak RSS | values "
          "compared | names (abs > 1e-3) | its first warning | time vs bisect | RSS vs bisect |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        def said(mod, val):
            return f"`{val}` ({mod})" if val else "nothing"
        print(f"| {r['label']} | {r['tb']:.2f} s | {r['mb'] / 1024:.0f} MiB | {said(r['b_names'], r['b_value'])} "
              f"| {r['tv']:.2f} s; {r['tcall']:.2f} s | {r['mv'] / 1024:.0f} MiB | {r['n']} | "
              f"{said(r['v_names'], r['v_value'])} | {said(r['w_names'], r['w_value'])}"
              + (f" (abs {r['w_abs']:.1e}, rel {r['w_rel']:.2f})" if r["w_value"] else "")
              + f" | {r['tv'] / r['tb']:.1f}× ({r['tcall'] / r['tb']:.1f}×) "
              f"| {r['mv'] / r['mb']:.1f}× |")
    print()
    right_b = sum(1 for r in rows if r["want"] and (r["b_value"] == r["value"] or r["b_names"] == r["want"]))
    # right: the planted value itself (where the optimizer fused its node, as
    # resnet18's Conv into BatchNorm, the ONNX node has no scopes; the value
    # is still the one planted, its module in the ExportedProgram's
    # nn_module_stack), or a value of the planted module
    right_v = sum(1 for r in rows if r["want"] and (r["v_value"] == r["value"] or r["v_names"] == r["want"]))
    right_w = sum(1 for r in rows if r["want"] and (r["w_value"] == r["value"] or r["w_names"] == r["want"]))
    clean_b = sum(1 for r in rows if not r["want"] and r["b_value"] is None)
    clean_v = sum(1 for r in rows if not r["want"] and r["v_value"] is None)
    clean_w = sum(1 for r in rows if not r["want"] and r["w_value"] is None)
    n_p = sum(1 for r in rows if r["want"])
    healthy = (f"; healthy exports with nothing called bad: bisect {clean_b}/{len(rows) - n_p}, "
               f"verification {clean_v}/{len(rows) - n_p} ({clean_w} by its warning threshold)"
               if len(rows) > n_p else " (the planted export alone here; docs/benchmarks-full.md has the "
               "healthy ones and resnet18)")
    print(f"Planted module named: bisect {right_b}/{n_p}, verification {right_v}/{n_p} ({right_w} by its own "
          f"warning threshold){healthy}.")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--make":
        make(sys.argv[2], pathlib.Path(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "--verify":
        verify(pathlib.Path(sys.argv[2]), sys.argv[3])
    else:
        main()
