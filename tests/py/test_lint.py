"""`onnxparity lint` on real exports: the shipped examples (torch 1.13,
TrainingMode.TRAINING vs eval), models exported here with Debian's torch
(static batch, x.view(8, -1), a data-dependent `if`, integer floor division,
training mode at opsets 12 and 15), bundles with a hand-written parity.json,
every model of Debian's ONNX test data; and the interfaces scripts use: the
JSON document, SARIF 2.1.0, --list-rules, exit codes, escaping."""
import json
import pathlib
import warnings

import pytest

from conftest import ROOT, run

CAUSES = {"training-mode", "baked-shape", "traced-control-flow", "op-semantics", "graph-optimization",
          "execution-provider", "nondeterminism", "reference", "state-mutation", "reduced-precision",
          "unknown"}


def lint(binary, target, *extra):
    """Run lint with --format json; (exit code, document or None, stderr)."""
    p = run([binary, "lint", target, "--format", "json", *extra])
    doc = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, doc, p.stderr


def rules_of(doc):
    return [f["rule"] for f in doc["findings"]]


def on(doc, rule):
    return [f for f in doc["findings"] if f["rule"] == rule]


# ---------------------------------------------------------------- the shipped examples

def test_training_example_names_dropout_and_batchnorm(onnxparity):
    rc, doc, err = lint(onnxparity, ROOT / "examples" / "training" / "model.onnx")
    assert rc == 1, err
    assert doc["schema"] == "onnxparity.lint/1" and doc["opset"] == 13 and doc["manifest"] is None
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert errors and all(f["cause"] == "training-mode" for f in errors)
    drop = on(doc, "ONP101")
    assert [f["location"]["name"] for f in drop] == ["/head/head.1/Dropout"]
    assert drop[0]["location"]["op_type"] == "Dropout" and drop[0]["location"]["kind"] == "node"
    assert "ORT_ENABLE_ALL" in drop[0]["message"] and "eval()" in drop[0]["fix"]
    bn = on(doc, "ONP104")
    assert [f["location"]["name"] for f in bn] == ["/features/features.1/BatchNormalization",
                                                   "/features/features.5/BatchNormalization"]
    assert doc["summary"]["error"] == len(errors) == 3 and doc["summary"]["verdict"] == "fail"


def test_training_bundle_adds_the_manifest(onnxparity):
    bundle = ROOT / "examples" / "training"
    if not (bundle / "parity.json").exists():
        pytest.skip("examples/training has no parity.json (scripts/make_examples.py writes it)")
    rc, doc, err = lint(onnxparity, bundle)
    assert rc == 1, err
    assert doc["manifest"].endswith("parity.json")
    mods = on(doc, "ONP106")
    assert len(mods) == 1 and mods[0]["severity"] == "error"
    assert "head.1 (Dropout)" in mods[0]["message"]


def test_healthy_example_has_no_error(onnxparity):
    for target in (ROOT / "examples" / "healthy" / "model.onnx", ROOT / "examples" / "healthy"):
        rc, doc, err = lint(onnxparity, target)
        assert rc == 0, err
        assert doc["summary"]["error"] == 0 and doc["summary"]["verdict"] == "pass"
        assert all(f["severity"] != "error" for f in doc["findings"])


# ---------------------------------------------------------------- real exports

torch = None


def _torch():
    global torch
    torch = pytest.importorskip("torch")
    return torch


def export(model, args, path, **kw):
    """torch.onnx.export with every warning recorded; returns the records
    in parity.json's shape (python/onnxparity/_export.py: warning_record)."""
    import linecache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.onnx.export(model, args, str(path), **kw)
    return [{"category": w.category.__name__, "category_module": w.category.__module__,
             "message": str(w.message), "file": w.filename, "line": w.lineno,
             "where": f"{w.filename}:{w.lineno}",
             "code": linecache.getline(w.filename, w.lineno).strip()} for w in caught]


def _models():
    nn = _torch().nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.drop = nn.Dropout(0.3)
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            h = torch.relu(self.bn(self.conv(x))).mean((2, 3))
            return self.fc(self.drop(h))

    class View8(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)

        def forward(self, x):
            return self.conv(x).view(8, -1)

    class Branch(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # LINT-BRANCH
                return x * 2
            return x - 1

    class FloorDiv(nn.Module):
        def forward(self, x):
            return (x * 10).long() // 3

    return Net, View8, Branch, FloorDiv


def test_static_batch_export_warns_on_the_input(onnxparity, tmp_path):
    Net = _models()[0]
    export(Net().eval(), (torch.randn(2, 3, 8, 8),), tmp_path / "m.onnx", input_names=["x"],
           opset_version=13)
    rc, doc, err = lint(onnxparity, tmp_path / "m.onnx")
    assert rc == 0, err
    f = on(doc, "ONP201")
    assert len(f) == 1 and f[0]["location"] == {"kind": "input", "name": "x", "index": 0}
    assert f[0]["cause"] == "baked-shape" and f[0]["severity"] == "warning"
    assert "dynamic_axes" in f[0]["message"] and "dynamic_shapes" in f[0]["fix"]
    # the same model with a dynamic batch: nothing at all
    export(Net().eval(), (torch.randn(2, 3, 8, 8),), tmp_path / "d.onnx", input_names=["x"],
           dynamic_axes={"x": {0: "batch"}}, opset_version=13)
    rc, doc, err = lint(onnxparity, tmp_path / "d.onnx")
    assert rc == 0 and doc["findings"] == [], doc


def test_view_8_is_baked_into_the_reshape(onnxparity, tmp_path):
    View8 = _models()[1]
    export(View8().eval(), (torch.randn(8, 3, 4, 4),), tmp_path / "s.onnx", input_names=["x"],
           opset_version=13)
    rc, doc, err = lint(onnxparity, tmp_path / "s.onnx")
    assert rc == 0, err
    assert rules_of(doc) == ["ONP201", "ONP202"], doc
    f = on(doc, "ONP202")[0]
    assert f["location"]["op_type"] == "Reshape" and f["location"]["kind"] == "node"
    assert "[8, -1]" in f["message"] and "input 'x' dim 0" in f["message"]
    # exported with a dynamic batch, the literal 8 still fixes dim 0
    export(View8().eval(), (torch.randn(8, 3, 4, 4),), tmp_path / "d.onnx", input_names=["x"],
           dynamic_axes={"x": {0: "batch"}}, opset_version=13)
    rc, doc, err = lint(onnxparity, tmp_path / "d.onnx")
    assert rc == 0, err
    assert rules_of(doc) == ["ONP203"], doc
    f = on(doc, "ONP203")[0]
    assert f["location"]["op_type"] == "Reshape" and "fixed at 8" in f["message"]


def test_branch_shows_only_through_the_manifest(onnxparity, tmp_path):
    Branch = _models()[2]
    bundle = tmp_path / "b"
    bundle.mkdir()
    records = export(Branch().eval(), (torch.ones(2, 3),), bundle / "model.onnx", input_names=["x"],
                     dynamic_axes={"x": {0: "batch"}}, opset_version=13)
    # the graph holds one branch and nothing suspicious
    rc, doc, err = lint(onnxparity, bundle / "model.onnx")
    assert rc == 0 and doc["findings"] == [], doc
    tracer = [r for r in records if r["category"] == "TracerWarning"]
    assert tracer, records
    (bundle / "parity.json").write_text(json.dumps({
        "schema": "onnxparity.capture/1", "warnings": records,
        "training": {"any": False, "modules_in_training": []}, "deterministic": True}))
    rc, doc, err = lint(onnxparity, bundle)
    assert rc == 0, err
    src = pathlib.Path(__file__).read_text().splitlines()
    line = next(i for i, s in enumerate(src, 1) if "# LINT-BRANCH" in s and "if x.sum()" in s)
    f = on(doc, "ONP301")
    assert len(f) == 1 and f[0]["cause"] == "traced-control-flow", doc
    assert f[0]["location"] == {"kind": "source", "file": __file__, "line": line}
    assert f"{__file__}:{line}" in f[0]["message"] and "x.sum() > 0" in f[0]["message"]
    # SARIF points at the Python line
    p = run([onnxparity, "lint", bundle, "--format", "sarif"])
    res = json.loads(p.stdout)["runs"][0]["results"]
    phys = [r for r in res if r["ruleId"] == "ONP301"][0]["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"].endswith("test_lint.py")
    assert phys["region"]["startLine"] == line


def test_integer_floor_division_exports_as_truncating_div(onnxparity, tmp_path):
    FloorDiv = _models()[3]
    export(FloorDiv().eval(), (torch.randn(2, 5),), tmp_path / "m.onnx", input_names=["x"],
           dynamic_axes={"x": {0: "batch"}}, opset_version=13)
    rc, doc, err = lint(onnxparity, tmp_path / "m.onnx")
    assert rc == 0, err
    f = on(doc, "ONP406")
    assert len(f) == 1 and f[0]["location"]["op_type"] == "Div" and "int64" in f[0]["message"]


@pytest.mark.parametrize("opset", [12, 15])
def test_training_mode_exports(onnxparity, tmp_path, opset):
    Net = _models()[0]
    model = Net().train()
    export(model, (torch.randn(2, 3, 8, 8),), tmp_path / "m.onnx", input_names=["x"],
           dynamic_axes={"x": {0: "batch"}}, opset_version=opset,
           training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    rc, doc, err = lint(onnxparity, tmp_path / "m.onnx")
    assert rc == 1, err
    assert [f["location"]["op_type"] for f in on(doc, "ONP104")] == ["BatchNormalization"]
    assert [f["location"]["op_type"] for f in on(doc, "ONP101")] == ["Dropout"]
    assert "30%" in on(doc, "ONP101")[0]["message"]
    if opset >= 14:
        assert "training_mode=1" in on(doc, "ONP104")[0]["message"]


# ---------------------------------------------------------------- interfaces

def test_sarif_is_valid_2_1_0(onnxparity):
    p = run([onnxparity, "lint", ROOT / "examples" / "training" / "model.onnx", "--format", "sarif"])
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    run0 = doc["runs"][0]
    driver = run0["tool"]["driver"]
    assert driver["name"] == "onnxparity" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["help"]["text"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert r["properties"]["cause"] in CAUSES
    results = run0["results"]
    assert results
    for res in results:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note") and res["message"]["text"]
        loc = res["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith("examples/training/model.onnx")
        ll = loc["logicalLocations"][0]
        assert ll["kind"] == "function" and ll["name"].startswith("/")
    assert {r["level"] for r in results} == {"error"}
    assert run0["artifacts"][0]["location"]["uri"].endswith("model.onnx")


def test_list_rules(onnxparity):
    p = run([onnxparity, "lint", "--list-rules"])
    assert p.returncode == 0 and p.stderr == ""
    p2 = run([onnxparity, "lint", "--list-rules", "--format", "json"])
    doc = json.loads(p2.stdout)
    assert doc["schema"] == "onnxparity.lint-rules/1"
    rules = doc["rules"]
    assert len(rules) >= 30
    for r in rules:
        assert r["id"] in p.stdout and r["name"] in p.stdout
        assert r["severity"] in ("error", "warning", "info") and r["cause"] in CAUSES
        assert r["summary"] and r["fix"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)
    by_id = {r["id"]: r for r in rules}
    assert by_id["ONP101"]["name"] == "dropout-training" and by_id["ONP101"]["severity"] == "error"
    assert by_id["ONP104"]["cause"] == "training-mode"
    p3 = run([onnxparity, "lint", "--list-rules", "--format", "sarif"])
    sarif = json.loads(p3.stdout)
    assert [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]] == [r["id"] for r in rules]
    assert sarif["runs"][0]["results"] == []
    # documented, every one
    doc_md = (ROOT / "docs" / "lint.md").read_text()
    for r in rules:
        assert r["id"] in doc_md and r["name"] in doc_md, r["id"]


def test_text_output(onnxparity):
    p = run([onnxparity, "lint", ROOT / "examples" / "training" / "model.onnx"])
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0].endswith("model.onnx (opset 13)")
    assert any(l.startswith("error   ONP101 dropout-training [training-mode] node 11 "
                            "'/head/head.1/Dropout' (Dropout)") for l in lines)
    assert lines[-1] == "3 findings: 3 errors, 0 warnings, 0 info"
    p = run([onnxparity, "lint", ROOT / "examples" / "healthy" / "model.onnx"])
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == "no findings"


def test_output_is_deterministic_and_ordered(onnxparity, tmp_path):
    View8 = _models()[1]
    export(View8().eval(), (torch.randn(8, 3, 4, 4),), tmp_path / "s.onnx", input_names=["x"],
           opset_version=13)
    outs = [run([onnxparity, "lint", tmp_path / "s.onnx", "--format", f]).stdout
            for f in ("json", "json", "sarif", "sarif")]
    assert outs[0] == outs[1] and outs[2] == outs[3]
    doc = json.loads(outs[0])
    kinds = [f["location"]["kind"] for f in doc["findings"]]
    assert kinds == sorted(kinds, key=["model", "input", "node", "output"].index)


def _model_with_names(path, node_name, value_name):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    t = helper.make_node("Constant", [], ["t"], value=helper.make_tensor("v", TensorProto.BOOL, [], [True]))
    d = helper.make_node("Dropout", [value_name, "", "t"], ["y"], name=node_name)
    g = helper.make_graph([t, d], "g", [helper.make_tensor_value_info(value_name, TensorProto.FLOAT, ["N"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path.write_bytes(m.SerializeToString())


def test_names_are_escaped(onnxparity, tmp_path):
    name = 'drop"\\\n\t\u00e9\u4e2d</x>'
    _model_with_names(tmp_path / "m.onnx", name, 'in"put')
    for fmt in ("json", "sarif"):
        p = run([onnxparity, "lint", tmp_path / "m.onnx", "--format", fmt])
        assert p.returncode == 1, p.stderr
        doc = json.loads(p.stdout)
        if fmt == "json":
            f = on(doc, "ONP101")[0]
            assert f["location"]["name"] == name
        else:
            r = doc["runs"][0]["results"][0]
            assert r["locations"][0]["logicalLocations"][0]["name"] == name


def test_paths_with_spaces_are_uris(onnxparity, tmp_path):
    d = tmp_path / "a dir%"
    d.mkdir()
    _model_with_names(d / "model.onnx", "drop", "x")
    p = run([onnxparity, "lint", d, "--format", "sarif"])
    uri = json.loads(p.stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri.startswith("file://") and uri.endswith("/a%20dir%25/model.onnx")


@pytest.mark.parametrize("args, code, words", [
    (["lint"], 2, ["usage"]),
    (["lint", "--format", "xml", "m.onnx"], 2, ["--format", "xml"]),
    (["lint", "--bogus", "m.onnx"], 2, ["--bogus"]),
    (["lint", "a.onnx", "b.onnx"], 2, ["b.onnx"]),
    (["lint", "missing.onnx"], 3, ["missing.onnx"]),
    (["lint", "garbage.onnx"], 3, ["garbage.onnx"]),
    (["lint", "nomodel"], 3, ["nomodel/model.onnx"]),
    (["lint", "badjson"], 3, ["badjson/parity.json", "JSON"]),
    (["lint", "notobject"], 3, ["notobject/parity.json", "object"]),
])
def test_exit_codes(onnxparity, tmp_path, args, code, words):
    (tmp_path / "garbage.onnx").write_bytes(b"\xff\xff\xff\xff")
    (tmp_path / "nomodel").mkdir()
    for d, text in (("badjson", '{"warnings": ['), ("notobject", "[1, 2]")):
        (tmp_path / d).mkdir()
        _model_with_names(tmp_path / d / "model.onnx", "drop", "x")
        (tmp_path / d / "parity.json").write_text(text)
    p = run([onnxparity, *args], cwd=tmp_path)
    assert p.returncode == code, (p.stdout, p.stderr)
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


def test_every_onnx_test_model(onnxparity, testdata):
    """Every model of Debian's ONNX test data lints without failing: exit 0
    or 1 and a JSON document; the training-mode node tests are caught."""
    models = sorted(testdata.glob("*/*/model.onnx"))
    assert len(models) > 1000
    caught = {}
    for m in models:
        rc, doc, err = lint(onnxparity, m)
        assert rc in (0, 1) and doc is not None, (m, err)
        assert (rc == 1) == (doc["summary"]["error"] > 0)
        for f in doc["findings"]:
            caught.setdefault(f["rule"], set()).add(f"{m.parent.parent.name}/{m.parent.name}")
    assert caught["ONP104"] == {"node/test_batchnorm_example_training_mode",
                                "node/test_batchnorm_epsilon_training_mode"}
    assert "node/test_training_dropout" in caught["ONP102"]
    assert "ONP101" not in caught  # every Dropout there is inference or fed its flag
    # the pytorch-converted models (opset 6, BatchNormalization is_test=1) are legacy, not training
    assert any(n.startswith("pytorch-converted/") for n in caught["ONP501"])
