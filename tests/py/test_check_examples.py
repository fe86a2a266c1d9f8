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
