"""`check` on the shipped example bundles (examples/, made by the capture):
the healthy export passes; the export left in training mode fails and,
since the bundle has eager intermediates, names the first divergent node."""
import json

from conftest import ROOT, run


def test_healthy_example_passes(onnxparity):
    r = run([onnxparity, "check", ROOT / "examples" / "healthy", "--top-k", "auto", "--format", "json"])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "pass" and doc["first_divergent"] is None
    assert doc["summary"]["topk"]["flipped"] == 0


def test_training_example_fails_and_names_the_batchnorm(onnxparity):
    r = run([onnxparity, "check", ROOT / "examples" / "training", "--format", "json"])
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "fail"
    fd = doc["first_divergent"]
    assert fd["op_type"] == "BatchNormalization" and fd["module"] == "features.1"
    text = run([onnxparity, "check", ROOT / "examples" / "training"]).stdout
    assert "first divergent node: " + fd["node"] in text
    r = run([onnxparity, "check", ROOT / "examples" / "training", "--format", "json", "--no-bisect"])
    assert r.returncode == 1 and json.loads(r.stdout)["first_divergent"] is None


def test_training_dropout_hidden_by_ort_still_fails(onnxparity, tmp_path):
    """A Dropout exported in training mode inside the graph (not producing a
    graph output): ONNX Runtime removes it at
    ORT_ENABLE_ALL, so the numbers agree there; the lint finding still fails
    the check (cause training-mode, medium confidence), and at
    --opt-level disable the numbers disagree too (high confidence)."""
    import sys
    import pytest
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "python"))
    import onnxparity as capture_pkg

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(16, 16)
            self.drop = torch.nn.Dropout(0.5)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.drop(self.fc(x)))

    torch.manual_seed(0)
    net = Net().train()
    g = torch.Generator().manual_seed(0)
    capture_pkg.capture(net, [torch.randn(4, 16, generator=g), torch.randn(2, 16, generator=g)],
                        tmp_path / "b", allow_training=True, opset=13)
    r = run([onnxparity, "check", tmp_path / "b", "--format", "json"])
    doc = json.loads(r.stdout)
    outs = [o for f in doc["fixtures"] for o in f["outputs"]]
    assert all(o["pass"] for o in outs), "ORT at ORT_ENABLE_ALL removes the Dropout"
    assert r.returncode == 1 and doc["verdict"] == "fail"
    top = doc["causes"][0]
    assert top["id"] == "training-mode" and top["confidence"] == "medium"
    assert "Dropout" in top["node"] and any("ONP101" in e for e in top["evidence"])
    assert "eval()" in top["fix"]
    r = run([onnxparity, "check", tmp_path / "b", "--format", "json", "--opt-level", "disable"])
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["causes"][0]["confidence"] == "high"
    assert not all(o["pass"] for f in doc["fixtures"] for o in f["outputs"])
    text = run([onnxparity, "check", tmp_path / "b"]).stdout
    assert text.startswith("cause    training-mode")
    assert run([onnxparity, "check", tmp_path / "b", "--no-lint"]).returncode == 0


def test_check_sarif_and_quiet_progress(onnxparity, tmp_path):
    """--sarif writes the lint findings as SARIF 2.1.0; progress goes to
    stderr only on a terminal or with --verbose (never in CI logs)."""
    sarif = tmp_path / "c.sarif"
    r = run([onnxparity, "check", ROOT / "examples" / "training", "--sarif", sarif])
    assert r.returncode == 1 and r.stderr == ""
    doc = json.loads(sarif.read_text())
    assert doc["version"] == "2.1.0"
    ids = {x["ruleId"] for x in doc["runs"][0]["results"]}
    assert {"ONP101", "ONP104"} <= ids
    r = run([onnxparity, "check", ROOT / "examples" / "healthy", "--verbose"])
    assert r.returncode == 0 and "check: fixture 3/3" in r.stderr
    r = run([onnxparity, "check", ROOT / "examples" / "healthy", "--verbose", "--quiet"])
    assert r.returncode == 0 and "fixture" not in r.stderr
    r = run([onnxparity, "check", ROOT / "examples" / "healthy", "--sarif", tmp_path / "no" / "x.sarif"])
    assert r.returncode == 3 and not (tmp_path / "no").exists()


def test_several_outputs_at_once(onnxparity, tmp_path):
    """check writes JSON on stdout, the HTML page, JUnit and SARIF in one run;
    bisect and diagnose take --html too."""
    t = ROOT / "examples" / "training"
    r = run([onnxparity, "check", t, "--format", "json", "--html", tmp_path / "c.html",
             "--junit", tmp_path / "c.xml", "--sarif", tmp_path / "c.sarif"])
    assert r.returncode == 1 and json.loads(r.stdout)["verdict"] == "fail"
    page = (tmp_path / "c.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "training-mode" in page
    assert (tmp_path / "c.xml").read_text().startswith("<?xml")
    assert json.loads((tmp_path / "c.sarif").read_text())["version"] == "2.1.0"
    for cmd in ("bisect", "diagnose"):
        out = tmp_path / f"{cmd}.html"
        r = run([onnxparity, cmd, t, "--html", out])
        assert r.returncode == 1 and r.stdout, (cmd, r.stderr)  # text still on stdout
        assert "<svg" in out.read_text()
    r = run([onnxparity, "check", t, "--html", tmp_path / "missing" / "x.html"])
    assert r.returncode == 3 and not (tmp_path / "missing").exists()


def test_results_byte_identical_across_runs_and_threads(onnxparity, tmp_path):
    """The same bundle gives the same JSON bytes run after run, and with 1 or
    2 intra-op threads (apart from the thread count recorded)."""
    t = ROOT / "examples" / "training"
    docs = []
    for threads in ("1", "2", "2"):
        r = run([onnxparity, "check", t, "--format", "json", "--threads", threads])
        assert r.returncode == 1
        d = json.loads(r.stdout)
        d["environment"].pop("intra_threads")
        docs.append(json.dumps(d, sort_keys=True))
    assert docs[0] == docs[1] == docs[2]
    a = run([onnxparity, "check", t, "--format", "json"]).stdout
    b = run([onnxparity, "check", t, "--format", "json"]).stdout
    assert a == b
