"""The ONNX Runtime the user deploys as a second target of check (issue 29):
a bundle captured in the torch 2.x environment records that environment's
onnxruntime (1.23.2, parity.json "onnxruntime"); check, running the tool's
own ONNX Runtime, judges the same fixtures under the recorded library too.
A LayerNorm on inputs offset by 1000: ORT 1.23.2 loses it (errors of 3,
the whole scale) where the tool's ORT passes: check fails, reports both
targets, and names runtime-version with both versions and the first value
where 1.23.2 separates from eager — the node a check run on 1.23.2 alone
names.  Without the offset both pass and the report lists both versions.
Skips where no onnxruntime package records a library (Debian's python).

gate over two targets (Must-show 3): criteria recorded on the healthy
bundle under the tool's ORT and the capturing environment's; a planted
change (an offset of 10 before the LayerNorm: eager's outputs do not move,
LayerNorm is shift-invariant) stays within the criteria under the tool's
1.29 and regresses under 1.23.2 — each established by a one-target gate of
its own — and the two-target gate fails naming that target, in its text,
JSON, JUnit and SARIF.
"""
import xml.etree.ElementTree as ET
import json

import pytest

torch = pytest.importorskip("torch")

import onnxparity  # noqa: E402
from onnxparity import ortlib  # noqa: E402

from conftest import run  # noqa: E402


@pytest.fixture(scope="session")
def binary(onnxparity):  # conftest's fixture: the binary's path (skips when it is not built)
    return onnxparity


@pytest.fixture(scope="module")
def envlib():
    try:
        return ortlib.find()
    except LookupError as e:
        pytest.skip(str(e))


class LinearNorm(torch.nn.Module):
    def __init__(self, offset):
        super().__init__()
        self.fc = torch.nn.Linear(64, 64)
        self.ln = torch.nn.LayerNorm(64)
        self.offset = offset

    def forward(self, x):
        return self.ln(self.fc(x) + self.offset)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory, envlib):
    d = tmp_path_factory.mktemp("targets")
    for offset in (0.0, 10.0, 1000.0):
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(1)
        onnxparity.capture(LinearNorm(offset).eval(), [torch.randn(4, 64, generator=g) for _ in range(2)],
                           d / f"ln{int(offset)}")
    return d


def check_json(binary, bundle, *args):
    r = run([binary, "check", bundle, "--format", "json", *args])
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def test_the_versions_differ(binary, bundles, envlib):
    rc, doc = check_json(binary, bundles / "ln0", "--no-env-target")
    assert doc["environment"]["ort_version"] != envlib[1], "the test needs two ORT versions"
    rec = json.loads((bundles / "ln0" / "parity.json").read_text())["onnxruntime"]
    assert rec["version"] == envlib[1] and rec["library"] == str(envlib[0].resolve())


def test_disagreement_is_runtime_version(binary, bundles, envlib):
    bundle = bundles / "ln1000"
    # each version alone, independently of the two-target check
    rc_own, own = check_json(binary, bundle, "--no-env-target")
    rc_env, env = check_json(binary, bundle, "--no-env-target", "--ort-lib", envlib[0])
    assert rc_own == 0 and own["verdict"] == "pass"
    assert rc_env == 1 and env["summary"]["fixtures_failed"] == 2
    sep = env["first_divergent"]
    assert sep["op_type"] == "LayerNormalization"
    # both at once: the default
    rc, doc = check_json(binary, bundle)
    assert rc == 1 and doc["verdict"] == "fail"
    under, capenv = doc["targets"]
    assert under["role"] == "under-test" and under["verdict"] == "pass"
    assert under["ort_version"] == own["environment"]["ort_version"]
    assert capenv["role"] == "capture-environment" and capenv["checked"]
    assert capenv["ort_version"] == envlib[1] and capenv["ort_library"] == str(envlib[0].resolve())
    assert capenv["verdict"] == "fail" and capenv["fixtures_failed"] == 2
    top = doc["causes"][0]
    assert top["id"] == "runtime-version" and top["confidence"] == "high", doc["causes"]
    assert top["node"] == sep["node"]
    ev = " ".join(top["evidence"])
    assert envlib[1] in ev and under["ort_version"] in ev and "LayerNormalization" in ev
    assert under["ort_version"] in top["fix"]
    # the text report names the second target and its verdict
    r = run([binary, "check", bundle])
    assert r.returncode == 1
    line = [x for x in r.stdout.splitlines() if x.startswith("target ")]
    assert line and envlib[1] in line[0] and " fail" in line[0]


def test_agreement_reports_both_versions(binary, bundles, envlib):
    rc, doc = check_json(binary, bundles / "ln0")
    assert rc == 0 and doc["verdict"] == "pass"
    versions = {t["ort_version"]: t for t in doc["targets"]}
    assert len(versions) == 2 and envlib[1] in versions
    assert all(t["checked"] and t["verdict"] == "pass" for t in doc["targets"])
    assert not any(c["id"] == "runtime-version" for c in doc["causes"])


def test_one_target_when_asked_or_the_same_library(binary, bundles, envlib):
    rc, doc = check_json(binary, bundles / "ln1000", "--no-env-target")
    assert rc == 0 and doc["targets"][1]["checked"] is False
    assert doc["targets"][1]["not_checked"] == "--no-env-target"
    rc, doc = check_json(binary, bundles / "ln1000", "--ort-lib", envlib[0])
    assert rc == 1 and doc["targets"][1]["not_checked"] == "it is the library under test"
    assert not any(c["id"] == "runtime-version" for c in doc["causes"])


def test_a_record_is_followed_only_to_the_library_it_hashed(binary, bundles, envlib, tmp_path):
    """parity.json comes with the bundle: a record pointing into the bundle,
    at a relative path, or at a file whose sha256 is not the recorded one is
    not loaded (loading a library runs its code)."""
    import shutil

    for name, edit, why in [
        ("inside", lambda r, d: r.update(library=str(d / "libonnxruntime.so.1")), "inside the bundle"),
        ("relative", lambda r, d: r.update(library="libonnxruntime.so.1"), "not an absolute path"),
        ("nohash", lambda r, d: r.pop("library_sha256"), "records no sha256"),
        ("changed", lambda r, d: r.update(library_sha256="0" * 64), "changed since the capture"),
    ]:
        d = tmp_path / name
        shutil.copytree(bundles / "ln1000", d)
        shutil.copy(envlib[0], d / "libonnxruntime.so.1")
        p = json.loads((d / "parity.json").read_text())
        edit(p["onnxruntime"], d)
        (d / "parity.json").write_text(json.dumps(p))
        rc, doc = check_json(binary, d)
        env = doc["targets"][1]
        assert rc == 0 and env["checked"] is False and why in env["not_checked"], (name, env)


# --- gate over two targets ---------------------------------------------------------


def gate(binary, bundle, criteria, *args):
    return run([binary, "gate", bundle, "--criteria", criteria, *args])


@pytest.fixture(scope="module")
def two_targets(binary, bundles, tmp_path_factory):
    """The criteria of the healthy bundle under both targets, recorded both
    ways round (the target named first and last)."""
    d = tmp_path_factory.mktemp("gate_targets")
    out = {}
    for name, order in (("env_last", ["tool=bundled", "deployed=env"]),
                        ("env_first", ["deployed=env", "tool=bundled"])):
        c = d / f"{name}.json"
        r = gate(binary, bundles / "ln0", c, "--record", *[x for t in order for x in ("--target", t)])
        assert r.returncode == 0, r.stderr
        out[name] = c
    return out


def test_each_target_alone(binary, bundles, envlib, tmp_path):
    """The planted offset, judged by a one-target gate per library: the
    tool's ORT stays within its criteria, the environment's regresses."""
    for lib, want in ((None, 0), (envlib[0], 1)):
        extra = ["--ort-lib", str(lib)] if lib else []
        c = tmp_path / f"{want}.json"
        assert gate(binary, bundles / "ln0", c, "--record", *extra).returncode == 0
        r = gate(binary, bundles / "ln10", c, "--no-bisect", *extra)
        assert r.returncode == want, (lib, r.stdout, r.stderr)


def test_criteria_record_both_targets(two_targets, envlib):
    doc = json.loads(two_targets["env_last"].read_text())
    assert [t["name"] for t in doc["targets"]] == ["tool", "deployed"]
    tool, dep = doc["targets"]
    assert tool["ort_library"] is None and dep["ort_library"] == "env"
    assert dep["environment"]["ort_version"] == envlib[1]
    assert tool["environment"]["ort_version"] != envlib[1]
    assert "outputs" in tool and "outputs" in dep and "outputs" not in doc


@pytest.mark.parametrize("order", ["env_last", "env_first"])
def test_gate_fails_naming_the_target_that_regressed(binary, bundles, envlib, two_targets, order,
                                                      tmp_path):
    junit, sarif = tmp_path / "g.xml", tmp_path / "g.sarif"
    r = gate(binary, bundles / "ln10", two_targets[order], "--format", "json", "--no-bisect",
             "--junit", junit, "--sarif", sarif)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "fail"
    by = {t["name"]: t for t in doc["targets"]}
    assert by["tool"]["verdict"] == "pass" and by["tool"]["regressions"] == 0
    assert by["deployed"]["verdict"] == "fail" and by["deployed"]["ort_version"] == envlib[1]
    assert by["deployed"]["ort_library"] == str(envlib[0].resolve())
    assert doc["regressions"] and {x["target"] for x in doc["regressions"]} == {"deployed"}
    assert any(x["check"] in ("max_abs", "noise", "quiet_change") for x in doc["regressions"])
    # JUnit: the failing cases are the deployed target's, by classname
    root = ET.parse(junit).getroot()
    cases = root.iter("testcase")
    failing = [c.get("classname") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failing and all(c.startswith("deployed/") for c in failing), failing
    assert any(c.get("classname") == "tool/test_data_set_0" for c in cases)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert envlib[1] in props["target.deployed"] and envlib[1] not in props["target.tool"]
    # SARIF: one gate-regression result per regression, naming its target
    results = [x for x in json.loads(sarif.read_text())["runs"][0]["results"]
               if x["ruleId"] == "gate-regression"]
    assert len(results) == len(doc["regressions"])
    assert {x["properties"]["target"] for x in results} == {"deployed"}
    assert all(x["message"]["text"].startswith("target deployed: ") for x in results)
    # the text names the target in each regression and in the verdict
    r = gate(binary, bundles / "ln10", two_targets[order], "--no-bisect")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert all(x.startswith("regressed: [deployed] ") for x in lines if x.startswith("regressed:"))
    assert lines[-1].startswith("verdict: FAIL") and lines[-1].endswith("in target deployed")


def test_gate_passes_where_both_targets_hold(binary, bundles, two_targets):
    r = gate(binary, bundles / "ln0", two_targets["env_last"], "--format", "json")
    assert r.returncode == 0, r.stdout
    doc = json.loads(r.stdout)
    assert [t["verdict"] for t in doc["targets"]] == ["pass", "pass"] and not doc["regressions"]


def test_targets_bad_input(binary, bundles, two_targets, tmp_path):
    """A malformed targets section: exit 2, one line naming the file and the
    field; --target when gating or alone: exit 2."""
    doc = json.loads(two_targets["env_last"].read_text())
    doc["targets"][1]["opt_level"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = gate(binary, bundles / "ln10", bad)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and f"{bad}: targets[1].opt_level:" in r.stderr, r.stderr
    r = gate(binary, bundles / "ln10", two_targets["env_last"], "--target", "a=env")
    assert r.returncode == 2 and "--record only" in r.stderr
    out = tmp_path / "one.json"
    r = gate(binary, bundles / "ln0", out, "--record", "--target", "a=env")
    assert r.returncode == 2 and "two or more" in r.stderr and not out.exists()
    # the env target where parity.json records no library: exit 4 naming the target
    import shutil

    d = tmp_path / "norecord"
    shutil.copytree(bundles / "ln0", d)
    p = json.loads((d / "parity.json").read_text())
    del p["onnxruntime"]
    (d / "parity.json").write_text(json.dumps(p))
    r = gate(binary, d, two_targets["env_last"])
    assert r.returncode == 4 and "target deployed: ort_library env:" in r.stderr, r.stderr
