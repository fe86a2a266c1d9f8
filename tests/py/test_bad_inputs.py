"""The hostile-input suite (issue 7, docs/reliability.md "Hostile inputs").

tests/bad_inputs/make_cases.py writes every case once per session; each
case is one test here.  A case passes when the command

  - exits with the documented code (docs/cli.md) and no signal,
  - prints exactly one line on stderr, matching the case's regex (which
    names the file and the field, byte offset or member), and no sanitizer
    report (the suite also runs against the ASan + UBSan build),
  - finishes within TIMEOUT seconds,
  - leaves none of its output files behind (nor a temporary file beside
    them), except the JUnit file, which holds one errored case saying why
    (issue 17),

or, for the cases whose hostile names must come out escaped, succeeds and
writes documents that parse (strict UTF-8 JSON, XML, HTML) without the
hostile text raw in them.  Cases marked known_bug (code owned elsewhere)
are expected failures, except that a crash or a sanitizer report always
fails.
"""
import hashlib
import html.parser
import json
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT

TIMEOUT = 60
GEN = ROOT / "tests" / "bad_inputs" / "make_cases.py"
SANITIZER = re.compile(r"ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|SUMMARY: \w+Sanitizer")


def _generate(out):
    subprocess.run([sys.executable, str(GEN), str(out)], check=True, capture_output=True)
    return json.loads((pathlib.Path(out) / "cases.json").read_text())


@pytest.fixture(scope="session")
def cases(tmp_path_factory):
    """Every case's files, generated once per session."""
    return {c["id"]: c for c in _generate(tmp_path_factory.mktemp("bad_inputs"))}


def _ids():
    """The case ids, for parametrize (collection comes before any fixture):
    the generator runs into a scratch folder that is removed at once."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return [c["id"] for c in _generate(d)]


IDS = _ids()


def test_at_least_45_cases():
    assert len(IDS) >= 45, len(IDS)


class _Strict(html.parser.HTMLParser):
    """Collects start tags; the page must hold no script or event handler."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.handlers = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [k for k, _ in attrs if k.startswith("on")]


def _check_valid(path, kind, stdout):
    data = stdout if path == "-" else pathlib.Path(path).read_bytes()
    text = data.decode("utf-8")  # strict: invalid UTF-8 must have been replaced
    if kind == "json":
        json.loads(text)
    elif kind == "xml":
        ET.fromstring(data)
        assert "</script>" not in text
    elif kind == "html":
        p = _Strict()
        p.feed(text)
        p.close()
        assert "script" not in p.tags, "a name broke out of the text into a <script> tag"
        assert not p.handlers, p.handlers
        assert "</script>" not in text and "<script>" not in text
    for ch in "\x01\x1b":
        assert ch not in text, f"control character {ch!r} copied into {path}"


@pytest.mark.parametrize("cid", IDS)
def test_bad_input_case(onnxparity, cases, cid):
    c = cases[cid]
    if c["needs_ort"] and not (ROOT / "third_party" / "onnxruntime" / "lib").is_dir() \
            and not os.environ.get("ONNXPARITY_ORT_LIB"):
        pytest.skip("ONNX Runtime is not installed (make setup)")
    if c.get("known_bug"):
        try:
            _run_case(onnxparity, cid, c)
        except AssertionError as err:
            pytest.xfail(f"known bug: {c['known_bug']} ({str(err).splitlines()[0]})")
        pytest.fail(f"{cid} passes now: remove its known_bug ({c['known_bug']})")
    _run_case(onnxparity, cid, c)


def _run_case(onnxparity, cid, c):
    argv = [onnxparity if a == "onnxparity" else a for a in c["argv"]]
    timeout = c.get("timeout") or TIMEOUT
    try:
        r = subprocess.run(argv, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{cid}: no answer within {timeout} s (hang)") from None
    err = r.stderr.decode("utf-8", "replace")
    # a crash or a sanitizer report is never an expected failure
    if r.returncode < 0:
        pytest.fail(f"{cid}: killed by signal {-r.returncode}\n{err}")
    if SANITIZER.search(err):
        pytest.fail(f"{cid}: sanitizer report\n{err}")
    assert r.returncode == c["exit"], f"{cid}: exit {r.returncode}, documented {c['exit']}\n{err}"
    for a in c["absent"]:
        p = pathlib.Path(a)
        assert not os.path.lexists(p), f"{cid}: partial output {p} left behind"
        left = [q.name for q in p.parent.glob(p.name + "*")] if p.parent.is_dir() else []
        left += [q.name for q in p.parent.glob("." + p.name + "*")] if p.parent.is_dir() else []
        assert not left, f"{cid}: temporary files left behind: {left}"
    for j in c.get("junit_error", []):  # written even though the run failed, saying why
        cases = list(ET.parse(j).getroot().iter("testcase"))
        assert len(cases) == 1 and cases[0].find("error") is not None, f"{cid}: {j}: not one errored case"
        assert cases[0].find("error").get("message"), f"{cid}: {j}: the error says nothing"
        left = [q.name for q in pathlib.Path(j).parent.glob("." + pathlib.Path(j).name + "*")]
        assert not left, f"{cid}: temporary files left behind: {left}"
    for f, digest in c.get("unchanged", []):
        assert hashlib.sha256(pathlib.Path(f).read_bytes()).hexdigest() == digest, \
            f"{cid}: {f} was changed (an output replaced an input)"
        left = [q.name for q in pathlib.Path(f).parent.glob("*.tmp.*")]
        assert not left, f"{cid}: temporary files left behind: {left}"
    if c["stderr"] is not None:
        lines = err.splitlines()
        assert len(lines) == 1, f"{cid}: the error must be one line:\n{err}"
        assert re.search(c["stderr"], lines[0]), f"{cid}: {lines[0]!r} does not match {c['stderr']!r}"
        assert lines[0].startswith("onnxparity")
    for v in c["valid"]:
        _check_valid(v["path"], v["kind"], r.stdout)
