"""The eager truth, exactly (issue #18): the capture never changes the
caller's fixtures or model, records inputs and outputs that belong together,
and names a forward that writes its inputs or its own state — in parity.json
and, through the binary, as the cause state-mutation.

Every capture here asks for the legacy (TorchScript) exporter: what the C
tool concludes depends on how the exporter treats a mutation (the legacy one
freezes it and warns "Removing mutation"), so the expectations are that
exporter's, under torch 1.13 and 2.x alike.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_capture_truth.py
"""
import copy
import hashlib
import json
import pathlib
import subprocess

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import numpy_helper  # noqa: E402

import consumers  # noqa: E402
import onnxparity  # noqa: E402
from onnxparity import testing  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::UserWarning")


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


def tensor_hash(h, t):
    t = t.detach().contiguous()
    h.update(f"{t.dtype}|{tuple(t.shape)}|".encode())
    h.update(t.numpy().tobytes())


def model_hash(model):
    """Every parameter, buffer and plain attribute (by repr, tensors by bytes)."""
    h = hashlib.sha256()
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        h.update(name.encode())
        tensor_hash(h, t)
    for path, m in model.named_modules():
        for k, v in sorted(vars(m).items()):
            if k.startswith("_") or isinstance(v, torch.nn.Module):
                continue
            h.update(f"{path}.{k}=".encode())
            if isinstance(v, torch.Tensor):
                tensor_hash(h, v)
            else:
                h.update(repr(v).encode())
    return h.hexdigest()


def fixtures_hash(fixtures):
    h = hashlib.sha256()
    for fx in fixtures:
        for t in (fx if isinstance(fx, tuple) else (fx,)):
            tensor_hash(h, t)
    return h.hexdigest()


def batches(*sizes, seed=0, width=4):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, width, generator=g) for b in sizes]


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def run_json(binary, *args):
    p = subprocess.run([binary, *map(str, args), "--format", "json"], capture_output=True, text=True,
                       timeout=600)
    doc = json.loads(p.stdout)
    consumers.validate_doc(doc, f"{args[0]} --format json")  # its published schema
    return p.returncode, doc


# ---------------------------------------------------------------- models that write

class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)


class InputMul(Linear):
    def forward(self, x):
        x.mul_(2)
        return self.fc(x)


class InputAdd(Linear):
    def forward(self, x):
        x.add_(1.5)
        return self.fc(x)


class InputIndexPut(Linear):
    def forward(self, x):
        x.index_put_((torch.arange(x.shape[0]), torch.zeros(x.shape[0], dtype=torch.long)),
                     torch.tensor(3.0))
        return self.fc(x)


class InputSlice(Linear):
    def forward(self, x):
        x[:, 1] = 0.25
        return self.fc(x)


class InputCopy(Linear):
    def forward(self, x):
        x[:, :2].copy_(x[:, 2:] * 3 - 1)  # copy_ into a view of the input
        return self.fc(x)


class InputCopyWhole(Linear):
    def forward(self, x):
        x.copy_(x * 3 - 1)  # torch 1.13's exporter has no aten::copy for this one
        return self.fc(x)


class BufferCounter(Linear):
    """A step counter: the buffer is incremented on every call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return self.fc(x) + self.calls


class ParameterUpdate(Linear):
    def forward(self, x):
        with torch.no_grad():
            self.fc.bias.add_(0.5)
        return self.fc(x)


class DictCache(Linear):
    """A cache-like dict: the previous output of the same shape is added in."""

    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        y = self.fc(x)
        past = self.cache.get("past")
        if past is not None and past.shape == y.shape:
            y = y + past
        self.cache["past"] = y.detach()
        return y


INPUT_WRITERS = [InputMul, InputAdd, InputIndexPut, InputSlice, InputCopy]
STATE_WRITERS = {BufferCounter: ("calls", "buffer"), ParameterUpdate: ("fc.bias", "parameter"),
                 DictCache: ("cache", "attribute")}


def capture(model_cls, tmp_path, sizes=(2, 2, 3), **kw):
    torch.manual_seed(0)
    model = model_cls().eval()
    fresh = copy.deepcopy(model)  # the model as given, for the test's own truth
    fixtures = batches(*sizes)
    kept = [t.clone() for t in fixtures]
    before_model, before_fx = model_hash(model), fixtures_hash(fixtures)
    kw.setdefault("exporter", "legacy")
    doc = onnxparity.capture(model, fixtures, tmp_path / "b", **kw)
    assert model_hash(model) == before_model, "the model changed"
    assert fixtures_hash(fixtures) == before_fx, "the caller's fixtures changed"
    return doc, fresh, kept


def expected_output(fresh, x):
    """One forward of a fresh copy of the model as given, on a copy of x."""
    m = copy.deepcopy(fresh)
    with torch.no_grad():
        return m(x.clone())


def assert_belong_together(bundle, fresh, kept):
    for k, x in enumerate(kept):
        d = pathlib.Path(bundle) / f"test_data_set_{k}"
        np.testing.assert_array_equal(load(d / "input_0.pb"), x.numpy())
        np.testing.assert_array_equal(load(d / "output_0.pb"), expected_output(fresh, x).numpy())


# ---------------------------------------------------------------- inputs as given

@pytest.mark.parametrize("model_cls", INPUT_WRITERS, ids=lambda c: c.__name__)
def test_forward_writing_its_input(tmp_path, binary, model_cls):
    doc, fresh, kept = capture(model_cls, tmp_path)
    b = tmp_path / "b"
    assert_belong_together(b, fresh, kept)
    st = doc["state"]
    assert st["inputs_written"] == [{"name": "x", "path": "args[0]", "fixtures": [0, 1, 2]}]
    assert st["changed_by_forward"] == [] and st["state_drift"] is False
    assert [f["inputs_written"] for f in doc["fixtures"]] == [["x"]] * 3
    assert doc["deterministic"] is True and doc["determinism"]["verdict"] == "deterministic"
    # the export is right: check passes, and names the write as a warning
    rc, chk = run_json(binary, "check", b)
    assert rc == 0 and chk["verdict"] == "pass", chk["summary"]
    found = [f for f in chk["lint"]["findings"] if f["id"] == "ONP702"]
    assert len(found) == 1 and found[0]["cause"] == "state-mutation" and "'x'" in found[0]["message"]
    testing.assert_export_parity(b, binary=binary)


def test_export_that_fails_leaves_fixtures_as_given(tmp_path):
    torch.manual_seed(0)
    model, fixtures = InputCopyWhole().eval(), batches(2, 3)
    before_model, before_fx = model_hash(model), fixtures_hash(fixtures)
    with pytest.raises(onnxparity.ExportError, match="copy"):
        onnxparity.capture(model, fixtures, tmp_path / "b", exporter="legacy")
    assert model_hash(model) == before_model and fixtures_hash(fixtures) == before_fx
    assert not (tmp_path / "b").exists()


# ---------------------------------------------------------------- the model as given

@pytest.mark.parametrize("model_cls", list(STATE_WRITERS), ids=lambda c: c.__name__)
def test_forward_changing_its_state(tmp_path, binary, model_cls):
    name, kind = STATE_WRITERS[model_cls]
    doc, fresh, kept = capture(model_cls, tmp_path)
    b = tmp_path / "b"
    assert_belong_together(b, fresh, kept)
    st = doc["state"]
    assert st["restored"] is True and st["inputs_written"] == []
    [changed] = st["changed_by_forward"]
    assert changed["name"] == name and changed["kind"] == kind and changed["fixtures"] == [0, 1, 2]
    assert all(f["state_changed"] == [name] for f in doc["fixtures"])
    # a rerun from the restored state is the same: state drift, not nondeterminism
    assert doc["deterministic"] is True
    assert doc["determinism"]["verdict"] == "state-drift"
    assert doc["determinism"]["state_drift_fixtures"] == [0, 1, 2] and st["state_drift"] is True
    assert all(f["state_drift"] is True for f in doc["fixtures"])
    # the rerun covers the first fixture of each shape group (batches 2, 2, 3)
    assert [f["deterministic"] for f in doc["fixtures"]] == [True, None, True]
    if kind != "attribute":  # the exporter warns of what it froze
        assert {"name": name, "op": "aten::add_", "kind": kind} in \
            [{k: v for k, v in f.items() if k != "warning"} for f in st["frozen_by_export"]]

    rc, chk = run_json(binary, "check", b)
    assert chk["verdict"] == "fail" and rc == 1
    assert "ONP602" not in [f["id"] for f in chk["lint"]["findings"]]
    [f701] = [f for f in chk["lint"]["findings"] if f["id"] == "ONP701"]
    assert f701["severity"] == "error" and f"'{name}'" in f701["message"]
    assert chk["causes"][0]["id"] == "state-mutation"

    rc, diag = run_json(binary, "diagnose", b, "--no-sweep")
    assert rc == 1
    top = diag["causes"][0]
    assert top["id"] == "state-mutation", diag["causes"]
    assert any(f"'{name}'" in e and "state drift" in e for e in top["evidence"])
    assert "explicit input and output" in top["fix"]
    assert "reference" not in [c["id"] for c in diag["causes"]]


def test_buffer_graph_freezes_the_traced_value(tmp_path, binary):
    """The numbers: the eager truth is one forward from the buffer as given
    (+1); the graph holds the buffer at the value the export's own trace
    left (1), so it adds 2: the export is wrong, and that is the finding."""
    doc, fresh, kept = capture(BufferCounter, tmp_path, sizes=(2, 3))
    assert doc["state"]["changed_by_export"] == [{"name": "calls", "kind": "buffer", "how": "values"}]
    rc, chk = run_json(binary, "check", tmp_path / "b")
    worst = max(o["max_abs"] for fx in chk["fixtures"] for o in fx["outputs"])
    assert worst == pytest.approx(1.0, abs=1e-5)


def test_cache_is_empty_for_every_fixture(tmp_path, binary):
    """Without the restore, fixture 1 (same shape as 0) would add fixture 0's
    output: the recorded outputs would not belong to their inputs."""
    doc, fresh, kept = capture(DictCache, tmp_path, sizes=(2, 2))
    rc, chk = run_json(binary, "check", tmp_path / "b")
    assert chk["summary"]["outputs_failed"] == 0  # only the lint error fails it
    assert [f["id"] for f in chk["lint"]["findings"] if f["severity"] == "error"] == ["ONP701"]


def test_attribute_change_without_drift_is_a_warning(tmp_path, binary):
    class LastShape(Linear):
        def forward(self, x):
            self.last_shape = tuple(x.shape)  # bookkeeping that never feeds the output
            return self.fc(x)

    doc, fresh, kept = capture(LastShape, tmp_path)
    [changed] = doc["state"]["changed_by_forward"]
    assert changed == {"name": "last_shape", "kind": "attribute", "how": "added", "fixtures": [0, 1, 2]}
    assert doc["determinism"]["verdict"] == "deterministic"
    assert all(f["state_drift"] is False for f in doc["fixtures"])
    rc, chk = run_json(binary, "check", tmp_path / "b")
    assert rc == 0 and chk["verdict"] == "pass"
    assert [f["id"] for f in chk["lint"]["findings"] if f["id"].startswith("ONP7")] == ["ONP703"]


def test_plain_model_records_nothing(tmp_path, binary):
    doc, fresh, kept = capture(lambda: torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()),
                               tmp_path)
    st = doc["state"]
    assert st["inputs_written"] == [] and st["changed_by_forward"] == [] and st["frozen_by_export"] == []
    assert st["snapshot"] == {"parameters": 2, "buffers": 0, "attributes": st["snapshot"]["attributes"],
                              "not_copied": []}
    assert all(f["state_drift"] is None and f["inputs_written"] == [] for f in doc["fixtures"])
    rc, chk = run_json(binary, "check", tmp_path / "b")
    assert rc == 0 and not [f for f in chk["lint"]["findings"] if f["id"].startswith("ONP7")]


def test_nondeterministic_forward_is_not_state_drift(tmp_path, binary):
    class Noisy(Linear):
        def forward(self, x):
            return self.fc(x) + torch.rand(x.shape[0], 3)

    doc, fresh, kept = capture(Noisy, tmp_path)
    assert doc["deterministic"] is False
    assert doc["determinism"]["verdict"] == "nondeterministic"
    assert doc["determinism"]["state_drift_fixtures"] == []
    rc, chk = run_json(binary, "check", tmp_path / "b")
    ids = [f["id"] for f in chk["lint"]["findings"]]
    assert "ONP602" in ids and not [i for i in ids if i.startswith("ONP7")]


def test_training_mode_export_leaves_running_stats(tmp_path):
    class WithBN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 6)
            self.bn = torch.nn.BatchNorm1d(6)

        def forward(self, x):
            return self.bn(self.fc(x))

    torch.manual_seed(0)
    model = WithBN().train()
    before = model_hash(model)
    doc = onnxparity.capture(model, batches(4, 5), tmp_path / "b", allow_training=True, exporter="legacy")
    assert model_hash(model) == before and model.training and model.bn.training
    # the export's trace in training mode updates the statistics; the eval forward does not
    changed = {c["name"] for c in doc["state"]["changed_by_export"]}
    assert changed >= {"bn.running_mean", "bn.num_batches_tracked"}
    assert doc["state"]["changed_by_forward"] == []


def test_model_restored_when_the_capture_fails(tmp_path):
    class FailsOnSecond(BufferCounter):
        def forward(self, x):
            out = super().forward(x)
            if x.shape[0] == 3:
                raise ValueError("no batch of 3")
            return out

    torch.manual_seed(0)
    model = FailsOnSecond().eval()
    before = model_hash(model)
    with pytest.raises(onnxparity.ForwardError, match="no batch of 3"):
        onnxparity.capture(model, batches(2, 3), tmp_path / "b", exporter="legacy")
    assert model_hash(model) == before and not (tmp_path / "b").exists()


# ---------------------------------------------------------------- one truth per fixture

def test_one_eager_forward_per_fixture(tmp_path):
    """The truth (outputs and intermediates from the same forward) on every
    fixture, the determinism rerun on the first fixture of each shape group;
    the float64 pass runs on its own copy (the first two of each group)."""
    counts = []

    class Counted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 8)
            self.b = torch.nn.Linear(8, 2)

        def forward(self, x):
            if not torch.is_grad_enabled():
                counts.append(x.dtype)
            return self.b(torch.relu(self.a(x)))

    for option, stored in (("all", [0, 1, 2, 3, 4, 5]), (None, [0, 1, 2, 4, 5])):
        counts.clear()
        torch.manual_seed(0)
        kw = {} if option is None else {"intermediates": option}
        doc = onnxparity.capture(Counted().eval(), batches(2, 3, 3, 3, 2, 5), tmp_path / "b",
                                 exporter="legacy", **kw)
        assert doc["determinism"]["rerun_fixtures"] == [0, 1, 5]
        assert counts.count(torch.float32) == 6 + 3
        assert [f["deterministic"] for f in doc["fixtures"]] == [True, True, None, None, None, True]
        assert doc["deterministic"] is True
        assert doc["noise"]["fixtures_covered"] == [0, 1, 2, 4, 5]
        assert counts.count(torch.float64) == 5
        # the default stores the intermediates where the float64 reference runs
        assert doc["intermediates"]["fixtures_stored"] == stored
        assert [k for k, f in enumerate(doc["fixtures"]) if f["intermediates"] > 0] == stored


def test_intermediates_beyond_the_memory_bound_are_the_same(tmp_path, monkeypatch):
    """With no memory for module outputs, every fixture but the traced one
    records its intermediates in a second forward from the same state and
    seed: the files are byte for byte those of the one-forward capture."""
    calls = []

    def run(out):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).eval()
        model[0].register_forward_hook(
            lambda m, i, o: calls.append(1) if i[0].dtype == torch.float32 and not torch.is_grad_enabled()
            else None)
        calls.clear()
        doc = onnxparity.capture(model, batches(2, 3, 5), out, exporter="legacy", reference64="all")
        return doc, len(calls)

    (one, n_one) = run(tmp_path / "one")
    monkeypatch.setattr(onnxparity._eager, "KEEP_BYTES", 0)
    (two, n_two) = run(tmp_path / "two")
    assert (n_one, n_two) == (2 * 3, 2 * 3 + 2)  # the truth and the rerun; + fixtures 1 and 2 again
    assert one["fixtures"] == two["fixtures"] and one["noise"]["fixtures"] == two["noise"]["fixtures"]
    for k in range(3):
        for f in sorted((tmp_path / f"one/test_data_set_{k}/intermediates").iterdir()):
            assert (tmp_path / f"two/test_data_set_{k}/intermediates" / f.name).read_bytes() == \
                f.read_bytes(), f.name


# ---------------------------------------------------------------- submodules and the helper

def test_export_submodules_keeps_model_and_fixtures(tmp_path, binary):
    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)

        def forward(self, x):
            x.mul_(2)
            return self.fc(x)

    class Parent(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = BufferCounter()
            self.head = Head()

        def forward(self, x):
            return self.head(torch.relu(self.body(x)))

    torch.manual_seed(0)
    model = Parent().eval()
    fixtures = batches(2, 3)
    before_model, before_fx = model_hash(model), fixtures_hash(fixtures)
    doc = onnxparity.export_submodules(model, fixtures, tmp_path / "parts", ["body", "head"],
                                       exporter="legacy")
    assert model_hash(model) == before_model and fixtures_hash(fixtures) == before_fx
    assert doc["parent_state"]["changed_by_forward"][0]["name"] == "body.calls"
    head = json.loads((tmp_path / "parts/head/parity.json").read_text())
    assert head["state"]["inputs_written"][0]["fixtures"] == [0, 1]
    body = json.loads((tmp_path / "parts/body/parity.json").read_text())
    assert body["state"]["changed_by_forward"][0]["name"] == "calls"
    # the head's recorded inputs are what it received in a forward from the state as given
    fresh = Parent().eval()
    fresh.load_state_dict(model.state_dict())
    for k, x in enumerate(fixtures):
        seen = torch.relu(copy.deepcopy(fresh.body)(x.clone())).detach()
        np.testing.assert_array_equal(load(tmp_path / f"parts/head/test_data_set_{k}/input_0.pb"),
                                      seen.numpy())
    testing.assert_export_parity(tmp_path / "parts/head", binary=binary)


def test_helper_names_the_state_in_its_message(tmp_path, binary):
    capture(BufferCounter, tmp_path)
    with pytest.raises(AssertionError) as e:
        testing.assert_export_parity(tmp_path / "b", binary=binary)
    msg = str(e.value)
    assert "state-mutation" in msg
    assert "changes the model's state (calls)" in msg and "state drift" in msg


def test_command_line_says_what_the_forward_writes(tmp_path):
    import os
    import sys
    (tmp_path / "stateful.py").write_text(
        "import torch\n"
        "class Counter(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 3)\n"
        "        self.register_buffer('calls', torch.zeros(()))\n"
        "    def forward(self, x):\n"
        "        self.calls.add_(1)\n"
        "        return self.fc(x) + self.calls\n"
        "def make():\n"
        "    return Counter().eval()\n")
    np.savez(tmp_path / "fx.npz", **{"fixture_0/input_0": np.ones((2, 4), np.float32),
                                     "fixture_1/input_0": np.ones((3, 4), np.float32)})
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "python"), str(tmp_path)]),
               PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, "-m", "onnxparity", "capture", "stateful:make", "--fixtures",
                        tmp_path / "fx.npz", "--out", tmp_path / "b", "--reference64", "off",
                        "--exporter", "legacy"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "the forward writes buffer calls (state drift)" in p.stdout
    assert "float64 reference none (reference64 is off)" in p.stdout


# ---------------------------------------------------------------- the snapshot itself

def changes_of_one_forward(m):
    """A snapshot of ``m``, one forward on a [2, 4] input, and the snapshot's
    changes as {(name, kind, how)}."""
    from onnxparity import _state
    snap = _state.Snapshot(m)
    with torch.no_grad():
        m(torch.randn(2, 4))
    return snap, {(c["name"], c["kind"], c["how"]) for c in snap.changes()}


def test_snapshot_names_and_undoes_every_kind_of_change():
    class Busy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)
            self.register_buffer("steps", torch.zeros(()))
            self.history = [1, 2]
            self.scale = 0.5

        def forward(self, x):
            self.steps = self.steps + 1                   # a buffer rebound to a new tensor
            self.fc.weight.data.mul_(2)                   # .data: no version bump, still seen
            self.register_buffer("extra", torch.ones(1))  # a buffer added
            self.history.append(3)                        # a list changed in place
            self.note = "seen"                            # an attribute added
            del self.scale                                # an attribute removed
            return self.fc(x)

    torch.manual_seed(0)
    m = Busy().eval()
    steps, weight = m.steps, m.fc.weight
    before = model_hash(m)
    snap, got = changes_of_one_forward(m)
    assert got == {("steps", "buffer", "rebound"), ("fc.weight", "parameter", "values"),
                   ("extra", "buffer", "added"), ("history", "attribute", "values"),
                   ("note", "attribute", "added"), ("scale", "attribute", "removed")}
    snap.restore()
    assert snap.changes() == []
    assert model_hash(m) == before and m.steps is steps and m.fc.weight is weight
    assert "extra" not in dict(m.named_buffers()) and not hasattr(m, "note") and m.scale == 0.5
    assert m.history == [1, 2]


def test_snapshot_leaves_torch_internals_alone():
    from onnxparity import _state
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1), torch.nn.BatchNorm1d(4)).eval()
    snap = _state.Snapshot(m)
    counts = snap.counts()
    assert counts["parameters"] == 4 and counts["buffers"] == 3
    handle = m[0].register_forward_hook(lambda *a: None)  # hooks are bookkeeping, not state
    with torch.no_grad():
        m(torch.randn(3, 4))
    assert snap.changes() == []
    handle.remove()


# ---------------------------------------------------------------- the snapshot's fast mode

def test_fast_mode_sees_in_place_writes_and_misses_writes_past_the_version_counter():
    """What fast mode reads (the version counter, the storage) and what it
    cannot: a write through ``.data`` leaves the counter alone, so only the
    full comparison sees it; the capture relies on that comparison."""
    from onnxparity import _state
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).eval()
    snap = _state.Snapshot(m)
    snap.fast = True
    with torch.no_grad():
        m[0].bias.add_(1)                     # in place: the version moves
        m[1].running_mean.data = torch.ones(3)  # rebinding .data: the storage moves
    got = {(c["name"], c["how"]) for c in snap.changes()}
    assert got == {("0.bias", "values"), ("1.running_mean", "values")}
    snap.restore()
    assert snap.changes() == [] and snap.changes(full=True) == []
    w = m[0].weight
    v = w._version
    w.data.mul_(2)
    assert w._version == v, "torch now counts .data writes: fast mode could read them"
    assert snap.changes() == []                                    # the shortcut misses it
    assert [c["name"] for c in snap.changes(full=True)] == ["0.weight"]  # the check behind it does not
    snap.restore()
    assert [c["name"] for c in snap.changes(full=True)] == ["0.weight"]  # fast restore skips it too
    snap.restore(full=True)
    assert snap.changes(full=True) == []


class SneakyOnThree(torch.nn.Module):
    """Writes its weight through .data on a batch of 3 only: past the version
    counter, and on a fixture after the first."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        if x.shape[0] == 3:
            self.fc.weight.data.mul_(2)
        return self.fc(x)


class CounterOnThree(torch.nn.Module):
    """Increments a buffer in place on a batch of 3 only: a visible write on
    a fixture after the first."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("seen", torch.zeros(()))

    def forward(self, x):
        if x.shape[0] == 3:
            self.seen.add_(1)
        return self.fc(x) + self.seen


@pytest.mark.parametrize("model_cls,name", [(SneakyOnThree, "fc.weight"), (CounterOnThree, "seen")],
                         ids=["past-the-counter", "in-place"])
def test_a_later_fixture_changing_the_state_is_named_on_that_fixture(tmp_path, model_cls, name):
    """The fixture that changes the state is the one named, whether fast mode
    could see the write or not; every other fixture's truth is the forward
    from the model as given (a fresh copy of it, independently)."""
    torch.manual_seed(0)
    model = model_cls().eval()
    fresh = copy.deepcopy(model)
    before = model_hash(model)
    fixtures = batches(2, 2, 3, 2, 2)
    doc = onnxparity.capture(model, fixtures, tmp_path / "b", exporter="legacy", reference64=0)
    assert [f["state_changed"] for f in doc["fixtures"]] == [[], [], [name], [], []]
    assert model_hash(model) == before
    for k, x in enumerate(fixtures):
        if k == 2:
            continue
        with torch.no_grad():
            want = copy.deepcopy(fresh)(x.clone()).numpy()
        got = load(tmp_path / f"b/test_data_set_{k}/output_0.pb")
        assert np.array_equal(got, want), k


def test_snapshot_shortcuts_miss_nothing_they_skip():
    """The state check's shortcuts (a module whose names are the snapshot's
    skips the scan for added names; an attribute that still is its saved
    immutable value skips the comparison) still see: a bias set from None
    to a parameter, a buffer registered where None was, an attribute that
    held a non-data object now holding data, a tuple attribute rebound to an
    equal-looking new tuple of other values, and an int attribute changed;
    and restore undoes each."""

    class Config:
        pass

    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3, bias=False)
            self.register_buffer("slot", None)
            self.cfg = Config()
            self.shape = (2, 3)
            self.count = 7

        def forward(self, x):
            self.fc.bias = torch.nn.Parameter(torch.zeros(3))
            self.slot = torch.ones(1)
            self.cfg = [1, 2]
            self.shape = (2, 4)
            self.count = 8
            return self.fc(x)

    m = Odd().eval()
    snap, got = changes_of_one_forward(m)
    assert got == {("fc.bias", "parameter", "added"), ("slot", "buffer", "added"),
                   ("cfg", "attribute", "added"), ("shape", "attribute", "values"),
                   ("count", "attribute", "values")}
    snap.restore()
    assert snap.changes() == []
    assert m.fc.bias is None and m.slot is None and m.shape == (2, 3) and m.count == 7
