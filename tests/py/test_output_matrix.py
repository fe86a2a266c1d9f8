"""One output convention on every command (issue 16, docs/cli.md "Output
formats: one convention"): `gate --html`, `merge --sarif`, `sweep --html`,
`diagnose --sarif`; the matrix in docs/cli.md held against the help pages;
refused combinations and unwritable outputs.

Every SARIF file and JSON document the commands write goes through its real
consumer (conftest.run: sarif-multitool, the published schemas)."""
import html.parser
import json
import re
import shutil

import pytest

from conftest import ROOT, run

HEALTHY = ROOT / "examples" / "healthy"
TRAINING = ROOT / "examples" / "training"


class Tables(html.parser.HTMLParser):
    """The rows (lists of cell texts) of each <table id=...>, and the
    verdict box's class and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.verdict = {}, None
        self._table = self._row = self._cell = None
        self._in_verdict = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self._table = self.tables.setdefault(a["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "div" and a.get("id") == "verdict":
            self.verdict = [a.get("class"), ""]
            self._in_verdict = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "div":
            self._in_verdict = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._in_verdict:
            self.verdict[1] += data


def page_of(path):
    t = Tables()
    t.feed(path.read_text(encoding="utf-8"))
    return t


@pytest.fixture(scope="module")
def criteria(onnxparity, tmp_path_factory):
    crit = tmp_path_factory.mktemp("crit") / "criteria.json"
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record"])
    assert r.returncode == 0, r.stderr
    return crit


@pytest.fixture(scope="module")
def regressed(tmp_path_factory):
    """The healthy bundle with one expected value moved by 3e-6: inside the
    default tolerance, beyond the recorded max_abs limit (test_gate.py)."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    bundle = tmp_path_factory.mktemp("regressed") / "bundle"
    shutil.copytree(HEALTHY, bundle)
    p = bundle / "test_data_set_1" / "output_0.pb"
    t = onnx.TensorProto()
    t.ParseFromString(p.read_bytes())
    a = numpy_helper.to_array(t).copy()
    a.flat[3] += 3e-6
    p.write_bytes(numpy_helper.from_array(a, t.name).SerializeToString())
    return bundle


# --- gate --html --------------------------------------------------------------

def test_gate_html_shows_the_regressed_criterion_and_the_verdict(onnxparity, criteria, regressed,
                                                                  tmp_path):
    page = tmp_path / "gate.html"
    r = run([onnxparity, "gate", regressed, "--criteria", criteria, "--html", page])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: FAIL" in r.stdout  # the text is still printed
    t = page_of(page)
    assert t.verdict == ["verdict fail", "FAIL"]
    head, *rows = t.tables["criteria"]
    assert head == ["output", "check", "measured (worst)", "limit", "margin", "result"]
    by = {(o, c): (m, lim, res) for o, c, m, lim, _, res in rows}
    margin = {(o, c): mg for o, c, _, _, mg, _ in rows}
    m, lim, res = by["logits", "max_abs"]
    assert res == "regressed" and lim == "\u2264 2.38e-07" and float(m) > 2.9e-6, rows
    assert by["\u2014", "fixtures"] == ("3", "\u2265 3", "pass")
    assert by["logits", "shapes"][2] == by["logits", "top1"][2] == "pass"
    assert [r[:4] + r[5:] for r in rows if r[5] == "regressed"] == [["logits", "max_abs", m, lim, "regressed"]]
    # the margin to each limit: below 1 where it regressed (2.38e-7 over > 2.9e-6), 1 at the floor
    assert margin["logits", "max_abs"].startswith("\u00d7") and float(margin["logits", "max_abs"][1:]) < 0.1
    assert margin["\u2014", "fixtures"] == "\u00d71"
    # the same fixture table and error histograms as check's page
    text = page.read_text(encoding="utf-8")
    assert "Fixtures \u00d7 outputs" in text and "Error histograms per output" in text and "<svg" in text
    regs = t.tables["regressions"][1:]
    assert any(g[:3] == ["test_data_set_1", "logits", "max_abs"] for g in regs), regs
    assert not list(tmp_path.glob("*.tmp.*"))


def test_gate_html_page_is_the_json_document_rendered(onnxparity, criteria, regressed, tmp_path):
    """--format json --html in one run: the document has "checks" (the
    table's rows), and report renders the same document the same way."""
    page = tmp_path / "gate.html"
    r = run([onnxparity, "gate", regressed, "--criteria", criteria, "--format", "json",
             "--html", page])
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    checks = {(c["output"], c["check"]): c for c in doc["checks"]}
    assert checks["logits", "max_abs"]["pass"] is False
    assert checks["logits", "max_abs"]["bound"] == "max"
    assert checks[None, "fixtures"] == {"output": None, "check": "fixtures", "measured": 3,
                                        "limit": 3, "bound": "min", "pass": True, "margin": 1}
    assert checks["logits", "max_abs"]["margin"] < 1  # regressed: below its limit's ratio
    assert [f["index"] for f in doc["fixtures"]] == [0, 1, 2]  # the run, as check has it
    # every regression's (output, check) is a failing check, and the reverse
    failing = {k for k, c in checks.items() if not c["pass"]}
    assert failing == {(g["output"], g["check"]) for g in doc["regressions"]}
    saved = tmp_path / "gate.json"
    saved.write_text(r.stdout)
    again = tmp_path / "again.html"
    assert run([onnxparity, "report", saved, "--html", again]).returncode == 0
    assert page_of(again).tables["criteria"] == page_of(page).tables["criteria"]


def test_gate_html_drift_and_a_passing_gate(onnxparity, criteria, tmp_path):
    page = tmp_path / "pass.html"
    r = run([onnxparity, "gate", TRAINING, "--criteria", criteria, "--html", page])
    assert r.returncode == 1
    t = page_of(page)
    drift = t.tables["drift"][1:]
    assert [d[0] for d in drift] == ["model_sha256"] and drift[0][3] == "note", drift
    r = run([onnxparity, "gate", HEALTHY, "--criteria", criteria, "--html", page])
    assert r.returncode == 0, r.stderr
    t = page_of(page)
    assert t.verdict == ["verdict pass", "PASS"]
    assert "regressions" not in t.tables
    assert all(row[5] == "pass" for row in t.tables["criteria"][1:])


def test_gate_record_refuses_html(onnxparity, tmp_path):
    crit, page = tmp_path / "c.json", tmp_path / "g.html"
    r = run([onnxparity, "gate", HEALTHY, "--criteria", crit, "--record", "--html", page])
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "onnxparity gate: --html applies to gating only, not to --record"]
    assert not page.exists() and not crit.exists()


@pytest.mark.parametrize("cmd", ["gate", "sweep"])
def test_unwritable_html_is_exit_3_and_leaves_no_file(onnxparity, criteria, tmp_path, cmd):
    page = tmp_path / "no" / "dir" / "g.html"
    args = {"gate": ["gate", HEALTHY, "--criteria", criteria],
            "sweep": ["sweep", HEALTHY, "--once", "--no-search"]}[cmd]
    r = run([onnxparity, *args, "--html", page])
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(page) in lines[0], r.stderr
    assert not (tmp_path / "no").exists()


def test_html_onto_a_folder_is_refused(onnxparity, criteria, tmp_path):
    r = run([onnxparity, "gate", HEALTHY, "--criteria", criteria, "--html", tmp_path])
    assert r.returncode == 2 and str(tmp_path) in r.stderr
    assert list(tmp_path.iterdir()) == []


# --- merge --sarif ------------------------------------------------------------

@pytest.fixture(scope="module")
def shards(onnxparity, tmp_path_factory):
    d = tmp_path_factory.mktemp("shards")
    out = []
    for i in range(3):
        r = run([onnxparity, "check", TRAINING, "--shard", f"{i}/3", "--format", "json",
                 "--no-bisect"], cwd=ROOT)
        assert r.returncode == 1, r.stderr
        p = d / f"s{i}.json"
        p.write_text(r.stdout)
        out.append(p)
    return out


def results(sarif_path):
    return json.loads(sarif_path.read_text())["runs"][0]["results"]


def test_merge_sarif_has_each_finding_once(onnxparity, shards, tmp_path):
    sarif = tmp_path / "merged.sarif"
    r = run([onnxparity, "merge", shards[2], shards[0], shards[1], "--sarif", sarif,
             "--format", "json"], cwd=ROOT)
    assert r.returncode == 1, r.stderr
    one_shard = json.loads(shards[0].read_text())["lint"]["findings"]
    assert len(one_shard) >= 5  # the training bundle has findings of several rules
    got = results(sarif)
    assert len(got) == len(one_shard)
    keys = []
    for res, f in zip(got, one_shard):
        assert res["ruleId"] == f["id"]
        ll = res["locations"][0].get("logicalLocations", [{}])[0]
        if f["location"]["kind"] == "node":
            assert ll["name"] == f["node"] and ll["kind"] == "function"
            assert res["properties"]["node_index"] == f["location"]["index"]
        keys.append((res["ruleId"], ll.get("fullyQualifiedName"), res["message"]["text"]))
    assert len(set(keys)) == len(keys)
    assert {"ONP101", "ONP104"} <= {k[0] for k in keys}
    merged = json.loads(r.stdout)["lint"]
    assert merged["findings"] == one_shard and merged["errors"] == json.loads(
        shards[0].read_text())["lint"]["errors"]


def test_merge_sarif_is_check_sarif_of_the_whole_run(onnxparity, shards, tmp_path):
    whole, merged = tmp_path / "check.sarif", tmp_path / "merged.sarif"
    assert run([onnxparity, "check", TRAINING, "--no-bisect", "--sarif", whole],
               cwd=ROOT).returncode == 1
    assert run([onnxparity, "merge", *shards, "--sarif", merged], cwd=ROOT).returncode == 1
    assert json.loads(merged.read_text()) == json.loads(whole.read_text())


def test_merge_sarif_from_documents_without_locations(onnxparity, shards, tmp_path):
    """Documents written before findings carried their location still give
    valid SARIF: the model as a whole is the place."""
    old = []
    for k, p in enumerate(shards):
        d = json.loads(p.read_text())
        for f in d["lint"]["findings"]:
            del f["location"]
        q = tmp_path / f"old{k}.json"
        q.write_text(json.dumps(d))
        old.append(q)
    sarif = tmp_path / "old.sarif"
    assert run([onnxparity, "merge", *old, "--sarif", sarif], cwd=ROOT).returncode == 1
    assert [x["ruleId"] for x in results(sarif)] == [
        f["id"] for f in json.loads(shards[0].read_text())["lint"]["findings"]]


def test_merge_sarif_refusals(onnxparity, shards, tmp_path):
    d = json.loads(shards[0].read_text())
    d["lint"]["findings"][0]["id"] = "ONP999"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    sarif = tmp_path / "m.sarif"
    r = run([onnxparity, "merge", bad, shards[1], shards[2], "--sarif", sarif], cwd=ROOT)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "ONP999" in lines[0] and "not a rule" in lines[0], r.stderr
    assert not sarif.exists()
    gone = tmp_path / "no" / "m.sarif"
    r = run([onnxparity, "merge", *shards, "--sarif", gone], cwd=ROOT)
    assert r.returncode == 3 and str(gone) in r.stderr
    assert not (tmp_path / "no").exists()


# --- sweep --html, diagnose --sarif --------------------------------------------

def test_sweep_html(onnxparity, tmp_path):
    page = tmp_path / "sweep.html"
    r = run([onnxparity, "sweep", TRAINING, "--once", "--no-search", "--html", page])
    assert r.returncode == 1, r.stderr
    text = page.read_text(encoding="utf-8")
    assert "<h2>sweep: " in text and "Sweep over optimization levels" in text
    assert "<svg" in text and page_of(page).verdict == ["verdict fail", "FAIL"]


def test_diagnose_sarif_is_check_sarif(onnxparity, tmp_path):
    d, c = tmp_path / "diagnose.sarif", tmp_path / "check.sarif"
    r = run([onnxparity, "diagnose", TRAINING, "--no-sweep", "--no-bisect", "--sarif", d],
            cwd=ROOT)
    assert r.returncode == 1, r.stderr
    assert run([onnxparity, "check", TRAINING, "--no-bisect", "--sarif", c],
               cwd=ROOT).returncode == 1
    assert json.loads(d.read_text()) == json.loads(c.read_text())


# --- the matrix of docs/cli.md against the help pages -------------------------

def matrix():
    text = (ROOT / "docs" / "cli.md").read_text()
    body = text.split("## Output formats: one convention", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in body.splitlines() if ln.startswith("| `")]
    out = {}
    for ln in rows:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        for cmd in re.findall(r"`([a-z]+)`", cells[0]):
            out[cmd] = dict(zip(["--format", "--html", "--junit", "--sarif"], cells[1:]))
    return out


def test_the_matrix_matches_the_help_pages(onnxparity):
    m = matrix()
    assert set(m) == {"check", "gate", "merge", "diff", "bisect", "sweep", "diagnose", "report",
                      "lint", "inspect", "compare", "run", "convert", "expose", "extract"}
    wrong = []
    for cmd, outs in m.items():
        page = run([onnxparity, cmd, "--help"]).stdout
        flags = set(re.findall(r"^  (--[a-z]+)", page, re.M))
        for flag, cell in outs.items():
            if cell.startswith("no") != (flag not in flags):
                wrong.append(f"{cmd} {flag}: docs say '{cell}', help {'has' if flag in flags else 'lacks'} it")
    assert not wrong, "\n".join(wrong)
