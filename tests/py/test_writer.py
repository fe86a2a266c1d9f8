"""Must-show: the splicing writer's models load in ONNX Runtime and pass
onnx.checker.check_model.

- `expose --all` on every libonnx-testdata model: onnx.load + check_model
  pass whenever the model carries a shape for every exposed value (shape
  inference is ONNX's business; our writer copies value_info and infers
  element types); ONNX Runtime runs every exposed model whose original runs,
  and the original outputs are unchanged by the extra ones.
- `extract` cuts a subgraph that checks, runs, and reproduces the original
  output from the intermediate value it starts at.
"""
import pathlib

import numpy as np
import onnx
from onnx import numpy_helper

from conftest import run


def inputs_of(case):
    return sorted((case / "test_data_set_0").glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))


def shapes_known(model):
    g = model.graph
    known = {v.name for v in list(g.value_info) + list(g.output) + list(g.input)
             if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")}
    return all(o in known for n in g.node for o in n.output if o)


def test_expose_all_checks_and_runs(onnxparity, testdata, tmp_path):
    cases = sorted(p.parent for p in testdata.glob("*/*/model.onnx") if (p.parent / "test_data_set_0").is_dir())
    checked = ran = 0
    problems = []
    for case in cases:
        out = tmp_path / "exposed.onnx"
        r = run([onnxparity, "expose", case / "model.onnx", out, "--all"])
        if r.returncode:
            problems.append(f"{case.name}: expose failed: {r.stderr.strip()}")
            continue
        original = onnx.load(str(case / "model.onnx"))
        exposed = onnx.load(str(out))
        n_values = len({o for n in original.graph.node for o in n.output if o} | {o.name for o in original.graph.output})
        if len(exposed.graph.output) != n_values:
            problems.append(f"{case.name}: {len(exposed.graph.output)} outputs, expected {n_values}")
        if shapes_known(original):
            try:
                onnx.checker.check_model(exposed)
                checked += 1
            except Exception as e:  # noqa: BLE001 - report every checker complaint
                problems.append(f"{case.name}: check_model: {str(e).splitlines()[0]}")
        if not case.parent.name.startswith("pytorch"):
            continue
        base = run([onnxparity, "run", case / "model.onnx", *inputs_of(case), "--save", tmp_path / "a", "--save-format", "pb"])
        if base.returncode:
            continue
        r = run([onnxparity, "run", out, *inputs_of(case), "--save", tmp_path / "b", "--save-format", "pb"])
        if r.returncode:
            problems.append(f"{case.name}: ORT cannot run the exposed model: {r.stderr.strip()}")
            continue
        ran += 1
        for k in range(len(original.graph.output)):
            r = run([onnxparity, "compare", tmp_path / "a" / f"output_{k}.pb", tmp_path / "b" / f"output_{k}.pb",
                     "--rtol", "0", "--atol", "0"])
            if r.returncode:
                problems.append(f"{case.name}: output {k} changed after expose")
    print(f"\nexpose --all: {len(cases)} models, {checked} passed check_model, {ran} run by ORT")
    assert not problems, "\n".join(problems[:40])
    assert checked > 500 and ran > 100


def test_extract_reproduces_the_tail(onnxparity, testdata, tmp_path):
    case = testdata / "pytorch-operator" / "test_operator_basic"
    m = onnx.load(str(case / "model.onnx"))
    nodes = m.graph.node
    mid = nodes[1].output[0]           # after Add, Mul
    final = m.graph.output[0].name
    exposed = tmp_path / "exposed.onnx"
    assert run([onnxparity, "expose", case / "model.onnx", exposed, "--values", mid]).returncode == 0
    r = run([onnxparity, "run", exposed, *inputs_of(case), "--save", tmp_path / "full", "--save-format", "pb"])
    assert r.returncode == 0, r.stderr
    sub = tmp_path / "sub.onnx"
    r = run([onnxparity, "extract", case / "model.onnx", sub, "--inputs", mid, "--outputs", final])
    assert r.returncode == 0, r.stderr
    sm = onnx.load(str(sub))
    assert [i.name for i in sm.graph.input] == [mid] and [o.name for o in sm.graph.output] == [final]
    assert len(sm.graph.node) == len(nodes) - 2
    # every kept node is byte-identical to the original
    orig = {n.SerializeToString() for n in nodes}
    assert all(n.SerializeToString() in orig for n in sm.graph.node)
    r = run([onnxparity, "run", sub, tmp_path / "full" / "output_1.pb", "--save", tmp_path / "tail", "--save-format", "pb"])
    assert r.returncode == 0, r.stderr
    r = run([onnxparity, "compare", tmp_path / "full" / "output_0.pb", tmp_path / "tail" / "output_0.pb", "--rtol", "0", "--atol", "0"])
    assert r.returncode == 0, r.stdout


def test_extract_refuses_a_missing_input(onnxparity, testdata, tmp_path):
    case = testdata / "pytorch-operator" / "test_operator_basic"
    m = onnx.load(str(case / "model.onnx"))
    r = run([onnxparity, "extract", case / "model.onnx", tmp_path / "x.onnx", "--inputs", m.graph.input[0].name,
             "--outputs", m.graph.output[0].name])
    assert r.returncode == 2 and "not among the cut inputs" in r.stderr
    assert not (tmp_path / "x.onnx").exists()
