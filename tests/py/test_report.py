"""`onnxparity report DOC.json... --html FILE` (docs/report.md): one
self-contained HTML page from the JSON documents of check, bisect and
diagnose on the example bundles; names escaped, bytes reproducible, and
(issue 6, must-show 1) headless Chromium shows the plots.

Run: PYTHONPATH=python ONNXPARITY_BIN=$PWD/build/onnxparity \
     /usr/bin/python3 -m pytest -q tests/py/test_report.py
"""
import html.parser
import json
import os
import re
import struct
import subprocess
import zlib

import pytest

from conftest import ROOT, run

CHROMIUM = "/usr/bin/chromium"
HOSTILE = "</script><b>&\"'"
HOSTILE_ESCAPED = "&lt;/script&gt;&lt;b&gt;&amp;&quot;&#39;"


@pytest.fixture(scope="module")
def docs(onnxparity, tmp_path_factory):
    """JSON documents written by the tool itself on the example bundles."""
    d = tmp_path_factory.mktemp("docs")
    out = {}
    for key, cmd, bundle, schema in [
        ("bisect", "bisect", "training", "onnxparity.bisect/1"),
        ("diagnose", "diagnose", "training", "onnxparity.diagnose/1"),
        ("check", "check", "training", "onnxparity.check/1"),
        ("healthy", "check", "healthy", "onnxparity.check/1"),
    ]:
        r = run([onnxparity, cmd, ROOT / "examples" / bundle, "--format", "json"], cwd=ROOT)
        assert r.returncode in (0, 1), r.stderr
        assert json.loads(r.stdout)["schema"] == schema
        p = d / f"{key}.json"
        p.write_text(r.stdout)
        out[key] = p
    return out


def render(onnxparity, paths, dest):
    r = run([onnxparity, "report", *paths, "--html", dest])
    assert r.returncode == 0, r.stderr
    return dest.read_text(encoding="utf-8")


class TagChecker(html.parser.HTMLParser):
    """Every element opened is closed in order (void elements aside)."""
    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.counts = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()


def check_well_formed(page):
    assert page.startswith("<!DOCTYPE html>")
    t = TagChecker()
    t.feed(page)
    t.close()
    assert not t.errors, t.errors[:5]
    assert t.stack == [], t.stack
    return t.counts


def test_page_from_every_document(onnxparity, docs, tmp_path):
    page = render(onnxparity, [docs["bisect"], docs["diagnose"], docs["check"], docs["healthy"]],
                  tmp_path / "r.html")
    counts = check_well_formed(page)
    # self-contained: nothing fetched, no script at all
    assert not re.search(r"<(script|link|img|iframe)\b", page)
    assert not re.search(r"\b(src|href)=\"(?!#)", page)
    assert re.sub(r'xmlns="http://www\.w3\.org/2000/svg"', "", page).count("http") == 0
    assert 'class="verdict fail"' in page and ">FAIL<" in page
    # the three kinds of plot
    svgs = re.findall(r'<svg class="plot (\w+)"(.*?)</svg>', page, re.S)
    kinds = [k for k, _ in svgs]
    assert kinds.count("curve") == 1 and kinds.count("heat") == 1
    assert kinds.count("hist") >= 3  # bisect's value + check's outputs (training, healthy)
    curve = next(body for k, body in svgs if k == "curve")
    bis = json.loads(docs["bisect"].read_text())
    assert curve.count("<circle") == len(bis["curve"])
    assert len(re.findall(r'<polyline [^>]*points="[-0-9., ]+"', curve)) == 1
    assert re.search(r'<line class="mark"', curve)  # the first divergent node marked
    assert "first divergent: " + bis["first_divergent"]["output"] in curve
    # bisect's own checks: the node alone on eager inputs, and the reproduction
    loc = bis["first_divergent"]["local"]
    assert loc["verdict"] == "local"
    assert (f"local (the node owns the error: max_abs" in page
            and f"mismatches {loc['mismatches']})" in page)
    assert bis["instrumented_reproduces"] is True
    assert "The instrumented model reproduces the mismatch" in page
    assert re.search(r">1e-?\d+</text>", curve)  # decade ticks
    heat = next(body for k, body in svgs if k == "heat")
    dg = json.loads(docs["diagnose"].read_text())
    levels = dg["sweep"]["levels"]
    assert heat.count('class="cell"') == len(levels) * len(levels[0]["outputs"])
    assert "FAIL" in heat
    hist = next(body for k, body in svgs if k == "hist")
    assert hist.count('class="bar"') == 12
    assert counts["svg"] == len(svgs)
    # causes with confidence, node, evidence and fix
    top = dg["causes"][0]
    assert top["id"] in page and top["fix"].replace("'", "&#39;") in page
    assert ">high</span>" in page
    # the fixture x output table
    assert page.count("<th>max_abs</th>") >= 2


def test_identical_bytes(onnxparity, docs, tmp_path):
    paths = [docs["diagnose"], docs["bisect"], docs["check"]]
    a = render(onnxparity, paths, tmp_path / "a.html")
    b = render(onnxparity, paths, tmp_path / "b.html")
    assert a == b
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html", "b.html"]  # no temporaries


def test_hostile_names_escaped(onnxparity, docs, tmp_path):
    name = HOSTILE + "\x01\x1b[31m"
    bis = json.loads(docs["bisect"].read_text())
    k = bis["first_divergent"]["index"]
    bis["model"] = name
    bis["first_divergent"]["node"] = name
    bis["first_divergent"]["output"] = name
    bis["curve"][k]["value"] = name
    bis["curve"][0]["max_abs"] = "nan"
    bis["curve"][-1]["max_abs"] = "inf"
    bis["unknown_member"] = {"ignored": [1, 2]}
    chk = json.loads(docs["check"].read_text())
    chk["fixtures"][0]["outputs"][0]["name"] = name
    chk["causes"][0]["evidence"].append(name)
    dg = json.loads(docs["diagnose"].read_text())
    dg["sweep"]["levels"][0]["level"] = name
    dg["sweep"]["levels"][0]["outputs"][0]["name"] = name
    paths = []
    for key, d in [("bisect", bis), ("check", chk), ("diagnose", dg)]:
        p = tmp_path / f"{key}.json"
        p.write_text(json.dumps(d))
        paths.append(p)
    page = render(onnxparity, paths, tmp_path / "r.html")
    check_well_formed(page)
    assert HOSTILE not in page and "</script>" not in page and "<b>" not in page
    assert "\x01" not in page and "\x1b" not in page
    assert page.count(HOSTILE_ESCAPED + "[31m") >= 8
    assert "first divergent: " + HOSTILE_ESCAPED in page
    assert "max_abs NaN" in page and "max_abs Inf" in page


@pytest.mark.parametrize("content,why,code", [
    ("not json at all", "JSON", 3),  # bytes that are not JSON: 3, as merge and diff answer
    ('{"schema": "onnxparity.criteria/1", "fixtures": 3}', "schema", 2),
    ('{"verdict": "pass"}', "schema", 2),
    ("[1, 2]", "schema", 2),
])
def test_refused(onnxparity, docs, tmp_path, content, why, code):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "r.html"
    r = run([onnxparity, "report", docs["check"], bad, "--html", out])
    assert r.returncode == code
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and why in lines[0], r.stderr
    assert not out.exists()


def test_usage(onnxparity, docs, tmp_path):
    assert run([onnxparity, "report", docs["check"]]).returncode == 2  # no --html
    assert run([onnxparity, "report", "--html", tmp_path / "x.html"]).returncode == 2
    assert run([onnxparity, "report", tmp_path / "missing.json", "--html",
                tmp_path / "x.html"]).returncode == 3


# ---- must-show 1: headless Chromium shows the plots ---------------------------

def read_png(data):
    """Decode a non-interlaced 8-bit RGB/RGBA PNG: (width, height, rows of pixels)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def test_chromium_shows_the_plots(onnxparity, docs, tmp_path):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium fonts-dejavu-core)")
    page = tmp_path / "report.html"
    render(onnxparity, [docs["bisect"], docs["diagnose"], docs["check"]], page)
    png = tmp_path / "shot.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
           "--window-size=1200,2000", page.as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert png.exists() and png.stat().st_size > 0, r.stderr[-2000:]
    w, h, rows = read_png(png.read_bytes())
    assert (w, h) == (1200, 2000)
    pixels = [p for row in rows for p in row]
    assert len(set(pixels)) > 200  # text, verdict, plots: many colours
    nonwhite = sum(1 for p in pixels if min(p) < 235)
    assert nonwhite > 0.03 * len(pixels)

    def near(p, c, tol=40):
        return all(abs(a - b) <= tol for a, b in zip(p, c))

    # the curve's line (#1565c0), its failing points and the divergence mark
    # (#c62828 / #d32f2f), the histogram's bars (the red end of the ramp)
    blue = [(x, y) for y, row in enumerate(rows) for x, p in enumerate(row)
            if near(p, (0x15, 0x65, 0xC0))]
    assert len(blue) > 300, len(blue)
    ys = [y for _, y in blue]
    xs = [x for x, _ in blue]
    assert max(xs) - min(xs) > 400 and max(ys) - min(ys) > 50  # a drawn curve, not a dot
    top, bottom = min(ys) - 60, max(ys) + 60
    red = sum(1 for y in range(max(top, 0), min(bottom, h)) for p in rows[y]
              if near(p, (0xC6, 0x28, 0x28), 30))
    assert red > 50, red
    plot = [p for y in range(max(top, 0), min(bottom, h)) for p in rows[y]]
    assert len(set(plot)) > 30
