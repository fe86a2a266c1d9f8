"""`onnxparity sweep` across its three axes on real torch exports made here
with the capture package (docs/diagnose.md, sweep): optimization levels with
the graphs ORT optimized diffed (`graph_diff`), execution providers
(`--providers`: one that cannot run becomes an unavailable configuration,
never a failure) and ORT libraries (`--ort-lib` repeated: two loaded side by
side in one process).

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_sweep.py
Set ONNXPARITY_ORT_LIB2 to a second ONNX Runtime version (e.g. 1.30's
libonnxruntime.so.1) to sweep two versions too.
"""
import json
import os
import pathlib
import shutil

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")


from onnxparity import capture  # noqa: E402
from conftest import run  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning",
                                        "ignore::UserWarning")

LEVELS = ["disable", "basic", "extended", "layout", "all"]


class ConvBnRelu(torch.nn.Module):
    """Conv + BatchNorm + ReLU, then a head: ORT fuses Conv+Relu into
    com.microsoft FusedConv from `extended` up (the exporter has already
    folded the eval-mode BatchNorm into the Conv)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.relu(self.bn(self.conv(x))).mean((2, 3)))


def trained(model):
    """Non-trivial BatchNorm statistics, then eval()."""
    torch.manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(4, 3, 16, 16) * 2 + 0.5)
    return model.eval()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("cbr") / "b"
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    capture(trained(ConvBnRelu()), [torch.randn(2, 3, 16, 16, generator=g) for _ in range(2)], d)
    return d


@pytest.fixture(scope="module")
def bitwise(bundle, tmp_path_factory, onnxparity):
    """The bundle with its expected outputs replaced by ORT's own at
    ORT_DISABLE_ALL: compared bitwise, any level that changes a bit fails."""
    b = tmp_path_factory.mktemp("bitwise") / "b"
    shutil.copytree(bundle, b)
    (b / "parity.json").unlink()
    for d in sorted(b.glob("test_data_set_*")):
        shutil.rmtree(d / "intermediates", ignore_errors=True)
        r = run([onnxparity, "run", b / "model.onnx", "--input", f"x={d / 'input_0.pb'}",
                 "--opt-level", "disable", "--save", d / "ort"])
        assert r.returncode == 0, r.stderr
        r = run([onnxparity, "convert", d / "ort" / "output.npy", d / "output_0.pb"])
        assert r.returncode == 0, r.stderr
        shutil.rmtree(d / "ort")
    return b


def sweep(onnxparity, target, *extra, tmpdir=None):
    env = dict(os.environ)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    r = run([onnxparity, "sweep", target, "--format", "json", *extra], env=env)
    assert r.returncode in (0, 1, 4), r.stderr
    return r.returncode, json.loads(r.stdout)


def fused(diff):
    """The added nodes of a graph diff that replaced something."""
    return [a for a in diff["added"] if a["replaces"]]


# --------------------------------------------------------------------------- graphs

def test_graph_diff_names_fusedconv(onnxparity, bundle, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    rc, doc = sweep(onnxparity, bundle, "--diff-graphs", tmpdir=tmpdir)
    # the numbers agree at every level: the fusion is there all the same
    assert rc == 0 and doc["verdict"] == "pass", doc["sweep"]["levels"]
    levels = doc["sweep"]["levels"]
    assert [lv["level"] for lv in levels] == LEVELS
    assert levels[0]["graph_diff"] is None  # nothing below disable
    diffs = {lv["level"]: lv["graph_diff"] for lv in levels[1:]}
    for name, d in diffs.items():
        assert d is not None, name
        assert d["to"] == name and d["from"] == LEVELS[LEVELS.index(name) - 1]
        assert d.keys() >= {"nodes_from", "nodes_to", "removed", "added"}
    d = diffs["extended"]
    fc = [a for a in d["added"] if a["op_type"] == "FusedConv"]
    assert len(fc) == 1, d
    assert fc[0]["domain"] == "com.microsoft"
    assert sorted(x["op_type"] for x in fc[0]["replaces"]) == ["Conv", "Relu"]
    assert {x["name"] for x in fc[0]["replaces"]} == {"/conv/Conv", "/relu/Relu"}
    for r in d["removed"]:
        assert r["replaced_by"] == fc[0]["name"] and not r["folded"]
    assert d["nodes_to"] == d["nodes_from"] - 1
    assert d["groups"] == 1 and fc[0]["group"] == 0
    # at layout the NCHWc rewrite: added nodes wired by new values form one
    # group, which replaced the FusedConv
    lay = diffs["layout"]
    nchwc = [a for a in lay["added"] if a["domain"] == "com.microsoft.nchwc"]
    if nchwc:
        assert len({a["group"] for a in nchwc}) == 1
        assert all([x["op_type"] for x in a["replaces"]] == ["FusedConv"] for a in nchwc)
    # temporary models removed, nothing kept
    assert "files" not in d
    assert not [p for p in tmpdir.rglob("*") if p.name.startswith("onnxparity-sweep")
                or p.suffix == ".onnx"]
    txt = run([onnxparity, "sweep", bundle, "--diff-graphs"])
    assert txt.returncode == 0
    assert "graph diff basic -> extended" in txt.stdout
    assert "FusedConv (com.microsoft) /conv/Conv replaces Conv /conv/Conv, Relu /relu/Relu" \
        in txt.stdout, txt.stdout


def test_no_diff_where_parity_holds_by_default(onnxparity, bundle):
    rc, doc = sweep(onnxparity, bundle)
    assert rc == 0
    assert all(lv["graph_diff"] is None for lv in doc["sweep"]["levels"])
    assert doc["sweep"]["optimizer_search"]["graph_diff"] is None


def test_once_skips_the_determinism_run_only(onnxparity, bundle):
    rc2, twice = sweep(onnxparity, bundle, "--no-search")
    rc1, once = sweep(onnxparity, bundle, "--no-search", "--once")
    assert rc1 == rc2 == 0
    a, b = twice["sweep"]["levels"], once["sweep"]["levels"]
    assert [lv["deterministic"] for lv in a] == [True] * len(a)
    assert [lv["deterministic"] for lv in b] == [None] * len(b)
    # the numbers are those of the first run of each fixture: the same
    assert [(lv["level"], lv["pass"], lv["outputs"]) for lv in a] == \
        [(lv["level"], lv["pass"], lv["outputs"]) for lv in b]


def test_save_optimized_keeps_the_models(onnxparity, bundle, tmp_path):
    onnx = pytest.importorskip("onnx")
    out = tmp_path / "opt"
    rc, doc = sweep(onnxparity, bundle, "--diff-graphs", "--save-optimized", out)
    assert rc == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"CPUExecutionProvider-{lv}.onnx" for lv in LEVELS), names
    d = doc["sweep"]["levels"][2]["graph_diff"]
    assert pathlib.Path(d["files"]["to"]) == out / "CPUExecutionProvider-extended.onnx"
    m = onnx.load(str(out / "CPUExecutionProvider-extended.onnx"))
    assert "FusedConv" in [n.op_type for n in m.graph.node]
    m = onnx.load(str(out / "CPUExecutionProvider-disable.onnx"))
    assert [n.op_type for n in m.graph.node][:2] == ["Conv", "Relu"]


def test_breaking_level_is_diffed_and_the_culprit_fusion_shown(onnxparity, bitwise):
    rc, doc = sweep(onnxparity, bitwise, "--rtol", "0", "--atol", "0")
    sw = doc["sweep"]
    levels = {lv["level"]: lv for lv in sw["levels"]}
    assert levels["disable"]["pass"]
    if sw["first_failing_level"] is None:
        pytest.skip("every level is bitwise identical to ORT_DISABLE_ALL on this CPU")
    assert rc == 1
    ff = sw["first_failing_level"]
    d = levels[ff]["graph_diff"]
    assert d is not None and d["to"] == ff and d["from"] == LEVELS[LEVELS.index(ff) - 1]
    assert d["added"] or d["removed"], "a level that changes the numbers changed the graph"
    # only the breaking level is diffed without --diff-graphs
    assert [lv["level"] for lv in sw["levels"] if lv["graph_diff"]] == [ff]
    search = sw["optimizer_search"]
    if not levels["all"]["pass"]:
        assert search["searched"]
    if search["culprit"]:
        cd = search["graph_diff"]
        assert cd is not None and cd["to"] == "all"
        assert cd["from"] == "all without " + search["culprit"]
        assert fused(cd), cd  # the nodes the culprit fused, and what they replaced
        txt = run([onnxparity, "sweep", bitwise, "--rtol", "0", "--atol", "0"])
        assert "graph diff all without " + search["culprit"] + " -> all" in txt.stdout


def test_diff_graphs_off_with_no_search(onnxparity, bitwise):
    rc, doc = sweep(onnxparity, bitwise, "--rtol", "0", "--atol", "0", "--no-search")
    assert not doc["sweep"]["optimizer_search"]["searched"]
    assert doc["sweep"]["optimizer_search"]["graph_diff"] is None


# --------------------------------------------------------------------------- providers

def check_cpu_config(c):
    assert c["available"] and c["provider"] == "CPUExecutionProvider" and c["pass"]
    assert [lv["level"] for lv in c["levels"]] == LEVELS
    assert all(lv["ran"] and lv["pass"] for lv in c["levels"])


@pytest.mark.parametrize("args", [["--providers", "cpu,cuda"],
                                  ["--providers", "cpu", "--providers", "cuda"]])
def test_unavailable_provider_is_a_marked_cell(onnxparity, bundle, args):
    rc, doc = sweep(onnxparity, bundle, *args)
    sw = doc["sweep"]
    cfg = sw["configurations"]
    assert [c["requested"] for c in cfg] == ["cpu", "cuda"]
    check_cpu_config(cfg[0])
    cuda = cfg[1]
    if cuda["available"]:
        pytest.skip("CUDA runs here: the unavailable path cannot be shown")
    # unavailable cells do not fail the sweep: exit and verdict from cpu
    assert rc == 0 and doc["verdict"] == "pass"
    assert "cuda" in cuda["unavailable"].lower() or "CUDA" in cuda["unavailable"]
    assert not cuda["pass"] and all(not lv["ran"] for lv in cuda["levels"])
    assert cuda["ort_library"] == cfg[0]["ort_library"]
    assert sw["provider_axis"].startswith("swept: 2 providers, 1 of 2")
    assert not sw["execution_provider"]["disagree"]
    # the legacy fields describe the first configuration
    assert sw["levels"] == cfg[0]["levels"]
    txt = run([onnxparity, "sweep", bundle, *args])
    assert txt.returncode == 0
    assert "configuration 1: cuda" in txt.stdout and "UNAVAILABLE" in txt.stdout


def test_provider_alone_is_swept_beside_cpu(onnxparity, bundle):
    rc, doc = sweep(onnxparity, bundle, "--provider", "cuda")
    cfg = doc["sweep"]["configurations"]
    assert [c["requested"] for c in cfg] == ["cuda", "cpu"]
    check_cpu_config(cfg[1])
    if not cfg[0]["available"]:
        assert rc == 0 and cfg[0]["unavailable"]


def test_only_unavailable_providers_is_an_error(onnxparity, bundle):
    rc, doc = sweep(onnxparity, bundle, "--providers", "cuda")
    if doc["sweep"]["configurations"][0]["available"]:
        pytest.skip("CUDA runs here")
    assert rc == 4 and doc["verdict"] == "error"
    r = run([onnxparity, "sweep", bundle, "--providers", "cuda"])
    assert r.returncode == 4 and "cannot load" in r.stderr


def test_provider_usage(onnxparity, bundle):
    r = run([onnxparity, "sweep", bundle, "--provider", "cpu", "--providers", "cpu,cuda"])
    assert r.returncode == 2 and "--providers" in r.stderr


# --------------------------------------------------------------------------- libraries

def default_library(onnxparity, bundle):
    _, doc = sweep(onnxparity, bundle, "--no-search")
    return pathlib.Path(doc["environment"]["ort_library"])


def test_two_copies_of_one_library(onnxparity, bundle, tmp_path):
    lib = default_library(onnxparity, bundle)
    copy = tmp_path / "copy" / "libonnxruntime.so.1"
    copy.parent.mkdir()
    shutil.copy2(lib, copy)
    assert os.stat(copy).st_ino != os.stat(lib).st_ino  # a real second load
    rc, doc = sweep(onnxparity, bundle, "--ort-lib", lib, "--ort-lib", copy, "--diff-graphs")
    assert rc == 0 and doc["verdict"] == "pass"
    cfg = doc["sweep"]["configurations"]
    assert len(cfg) == 2 and [c["library"] for c in cfg] == [0, 1]
    assert cfg[0]["ort_library"] == str(lib) and cfg[1]["ort_library"] == str(copy)
    assert cfg[0]["ort_version"] == cfg[1]["ort_version"]
    for a, b in zip(cfg[0]["levels"], cfg[1]["levels"]):
        assert a["outputs"] == b["outputs"] and a["pass"] == b["pass"]
        da, db = a["graph_diff"], b["graph_diff"]
        assert (da is None) == (db is None)
        if da:
            assert [x["op_type"] for x in da["added"]] == [x["op_type"] for x in db["added"]]
    assert not doc["sweep"]["libraries"]["disagree"]
    txt = run([onnxparity, "sweep", bundle, "--ort-lib", lib, "--ort-lib", copy])
    assert txt.returncode == 0
    assert f"configuration 1: CPUExecutionProvider, ONNX Runtime {cfg[1]['ort_version']} ({copy})" \
        in txt.stdout


def test_second_version(onnxparity, bundle, tmp_path):
    lib2 = os.environ.get("ONNXPARITY_ORT_LIB2")
    if not lib2 or not os.path.exists(lib2):
        pytest.skip("ONNXPARITY_ORT_LIB2 is not set to a second ONNX Runtime library "
                    "(e.g. onnxruntime-node 1.30's libonnxruntime.so.1)")
    lib = default_library(onnxparity, bundle)
    rc, doc = sweep(onnxparity, bundle, "--ort-lib", lib, "--ort-lib", lib2,
                    "--providers", "cpu,cuda")
    cfg = doc["sweep"]["configurations"]
    assert [(c["library"], c["requested"]) for c in cfg] == [(0, "cpu"), (0, "cuda"),
                                                              (1, "cpu"), (1, "cuda")]
    assert cfg[2]["ort_library"] == str(pathlib.Path(lib2).resolve()) or \
        os.path.samefile(cfg[2]["ort_library"], lib2)
    check_cpu_config(cfg[0])
    check_cpu_config(cfg[2])
    assert rc == 0
    for c in (cfg[1], cfg[3]):
        if not c["available"]:
            assert c["unavailable"]
    for a, b in zip(cfg[0]["levels"], cfg[2]["levels"]):
        assert a["pass"] == b["pass"]


def test_missing_library(onnxparity, bundle, tmp_path):
    r = run([onnxparity, "sweep", bundle, "--ort-lib", tmp_path / "nope.so"])
    assert r.returncode == 3 and "nope.so" in r.stderr


# --------------------------------------------------------------------------- the diff alone

def gdiff(tools, a, b):
    """Run tests/tools/gdiff; {"N": (from, to), "R": {name: row}, "A": {name: row}}."""
    r = run([tools / "gdiff", a, b])
    out = {"N": None, "R": {}, "A": {}, "E": None}
    for line in r.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "N":
            out["N"] = (int(f[1]), int(f[2]))
        elif f[0] == "R":
            out["R"][f[1]] = {"op": f[2], "domain": f[3], "by": f[4], "folded": f[5] == "1"}
        elif f[0] == "A":
            out["A"][f[1]] = {"op": f[2], "domain": f[3],
                              "replaces": [] if f[4] == "-" else f[4].split(",")}
        elif f[0] == "E":
            out["E"] = f[1]
    return r.returncode, out


def model(path, nodes, inits=(), opsets=(("", 13),)):
    """A float model from (op, inputs, outputs, name, domain) tuples: graph
    input x, output y, initializers by name (zeros [1])."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    ns = [helper.make_node(op, ins, outs, name=name, domain=dom) for op, ins, outs, name, dom in nodes]
    ini = [numpy_helper.from_array(np.zeros([1], np.float32), n) for n in inits]
    g = helper.make_graph(ns, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], ini)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    onnx.save(m, str(path))
    return path


MS = (("", 13), ("com.microsoft", 1), ("com.microsoft.nchwc", 1))


def test_gdiff_fusion_and_two_neighbours(tools, tmp_path):
    a = model(tmp_path / "a.onnx", [("Conv", ["x", "W1"], ["c1"], "conv1", ""),
                                    ("Relu", ["c1"], ["r1"], "relu1", ""),
                                    ("Conv", ["r1", "W2"], ["c2"], "conv2", ""),
                                    ("Relu", ["c2"], ["y"], "relu2", "")], ["W1", "W2"])
    b = model(tmp_path / "b.onnx", [("FusedConv", ["x", "W1"], ["r1"], "fc1", "com.microsoft"),
                                    ("FusedConv", ["r1", "W2"], ["y"], "fc2", "com.microsoft")],
              ["W1", "W2"], MS)
    rc, d = gdiff(tools, a, b)
    assert rc == 0 and d["N"] == (4, 2)
    assert d["A"]["fc1"] == {"op": "FusedConv", "domain": "com.microsoft",
                             "replaces": ["conv1", "relu1"]}
    assert d["A"]["fc2"]["replaces"] == ["conv2", "relu2"]  # stops at fc2's input r1
    assert {k: v["by"] for k, v in d["R"].items()} == {"conv1": "fc1", "relu1": "fc1",
                                                       "conv2": "fc2", "relu2": "fc2"}


def test_gdiff_group_folding_and_identity(tools, tmp_path):
    a = model(tmp_path / "a.onnx", [("Constant", [], ["k"], "const", ""),
                                    ("Conv", ["x", "W"], ["c"], "conv", ""),
                                    ("Add", ["c", "k"], ["y"], "add", "")], ["W"])
    # an NCHWc-style chain replaces the Conv; the Constant became an initializer
    b = model(tmp_path / "b.onnx", [("ReorderInput", ["x"], ["xn"], "ri", "com.microsoft.nchwc"),
                                    ("Conv", ["xn", "W"], ["cn"], "nconv", "com.microsoft.nchwc"),
                                    ("ReorderOutput", ["cn"], ["c"], "ro", "com.microsoft.nchwc"),
                                    ("Add", ["c", "k"], ["y"], "add", "")], ["W", "k"], MS)
    rc, d = gdiff(tools, a, b)
    assert rc == 0 and d["N"] == (3, 4)
    assert set(d["A"]) == {"ri", "nconv", "ro"}  # the Add is unchanged
    for n in ("ri", "nconv", "ro"):
        assert d["A"][n]["replaces"] == ["conv"]
    assert d["R"]["conv"]["by"] == "ri" and not d["R"]["conv"]["folded"]
    assert d["R"]["const"] == {"op": "Constant", "domain": "-", "by": "-", "folded": True}
    # unchanged: nothing either way
    rc, d = gdiff(tools, a, a)
    assert rc == 0 and d["N"] == (3, 3) and not d["A"] and not d["R"]


def test_gdiff_bad_file(tools, tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"\xff\xff\xff")
    rc, d = gdiff(tools, tmp_path / "bad.onnx", tmp_path / "bad.onnx")
    assert rc == 1 and d["E"]
    rc, d = gdiff(tools, tmp_path / "missing.onnx", tmp_path / "bad.onnx")
    assert rc == 1 and "missing.onnx" in d["E"]
