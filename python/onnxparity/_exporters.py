"""compare_exporters(): one model, one fixture set, captured with each of
torch's ONNX exporters (the TorchScript-based "legacy" one and the
torch.export-based "dynamo" one) into sibling bundles, each checked against
the same eager truth; the result says which exporter's graph matches eager
and, for one that does not, the first value where it separates (bisect's
first divergent node, mapped onto the model's modules) and how the two
graphs differ there.  Writes exporters.json and exporters.md beside the
bundles.  Layout, document and rules: docs/exporters.md.

Builds on the public capture (capture.capture) and the in-process check
(api.check) only; it runs no ONNX Runtime of its own."""
import dataclasses
import json
import os
import pathlib
import shutil
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import onnx

from . import _export, api
from .capture import capture
from .errors import ExportError

SCHEMA = "onnxparity.exporters/1"
KNOWN = ("legacy", "dynamo")

# Node attributes that change what an operator computes (not how it is laid
# out): shown beside the op type where the graphs differ.  How to add one:
# its ONNX attribute name here, and a line in docs/exporters.md.
_SEMANTIC_ATTRS = ("training_mode", "mode", "coordinate_transformation_mode", "nearest_mode",
                   "cubic_coeff_a", "exclude_outside", "antialias", "approximate", "ceil_mode",
                   "count_include_pad", "fmod")


@dataclasses.dataclass(frozen=True)
class ExporterRun:
    """One exporter's bundle and its check.  status: "checked" (captured and
    checked), "export-failed" (torch.onnx.export refused; ``error`` says why),
    "unavailable" (the installed torch has no such exporter).  numbers_match:
    every output of every fixture within tolerance or within the float64
    noise envelope, ONNX Runtime losing no fixture (the verdict may still be
    fail on a lint or state finding alone: ``verdict`` and ``causes`` say)."""
    exporter: str
    status: str
    bundle: Optional[str] = None
    error: Optional[str] = None
    verdict: Optional[str] = None
    numbers_match: Optional[bool] = None
    worst: Optional[Dict[str, Any]] = None
    causes: Tuple[str, ...] = ()
    first_divergent: Optional[api.FirstDivergent] = None
    check: Optional[api.CheckResult] = dataclasses.field(default=None, repr=False)


@dataclasses.dataclass(frozen=True)
class Separation:
    """Where ``exporter``'s graph leaves eager while ``matching``'s does not:
    the first divergent value (node, op, module, fixture, how far), that
    module's value in the matching graph, and the graph difference there:
    the ops (with their semantic attributes) computing each value, those
    only in one of the two."""
    exporter: str
    matching: Optional[str]
    node: Optional[str]
    op_type: Optional[str]
    output: Optional[str]
    module: Optional[str]
    fixture: Optional[int]
    max_abs: Optional[float]
    envelope_max: Optional[float]
    matching_value: Optional[str]
    matching_node: Optional[str]
    matching_op: Optional[str]
    only_here: Tuple[str, ...]
    only_matching: Tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class ExporterComparison:
    """compare_exporters()'s answer.  runs: exporter -> ExporterRun, in the
    order asked; matching / separating: the exporters whose numbers match
    eager / do not (failed exports in neither); differ: the exporters gave
    different answers (one matches and another does not, or one failed to
    export what another exported); eager_identical: every bundle holds the
    same eager outputs (the A/B compares like with like); document: what
    exporters.json holds."""
    runs: Dict[str, ExporterRun]
    matching: List[str]
    separating: List[str]
    failed: List[str]
    differ: bool
    eager_identical: Optional[bool]
    separations: List[Separation]
    summary: str
    document: Dict[str, Any] = dataclasses.field(repr=False)


def compare_exporters(model: Any, fixtures: Any, out_dir: Union[str, "os.PathLike[str]"], *,
                      exporters: Optional[Sequence[str]] = None,
                      check_options: Optional[Mapping[str, Any]] = None,
                      **capture_options: Any) -> ExporterComparison:
    """Capture ``model`` over ``fixtures`` once per exporter into
    ``out_dir/<exporter>/`` (a bundle each, as capture() writes it, with the
    same ``capture_options``), check each in process (api.check with
    ``check_options``), and write ``out_dir/exporters.json`` and
    ``out_dir/exporters.md``.  ``exporters``: names from KNOWN (default:
    both; one the installed torch lacks is reported "unavailable").

    An exporter that fails to export is a finding (status "export-failed"),
    not an error; a capture refused for its input (fixtures, options,
    training mode) raises that CaptureError, since every exporter would
    refuse it alike.  Raises ValueError on an unknown or repeated exporter.
    Whatever it raises, what the call created is removed again (out_dir when
    it was not there, else the bundles and documents it added); what was in
    out_dir before stays."""
    names = list(exporters) if exporters is not None else list(KNOWN)
    bad = [e for e in names if e not in KNOWN]
    if bad or not names or len(set(names)) != len(names):
        raise ValueError(f"exporters: {names!r}: give each of {', '.join(KNOWN)} at most once"
                         + (f" ({bad[0]!r} is none of them)" if bad else ""))
    if "exporter" in capture_options:
        raise ValueError("exporter: compare_exporters sets it per bundle; name them in exporters=")
    out = pathlib.Path(out_dir)
    # what this call creates, removed again when it raises: out_dir's first
    # missing folder (out_dir, or a parent mkdir adds), else the bundles and
    # documents that were not in out_dir
    top = out
    while not top.parent.exists() and top.parent != top:
        top = top.parent
    if not out.exists():
        mine = [top]
    else:
        mine = [out / e for e in names] + [out / "exporters.json", out / "exporters.md"]
        mine = [p for p in mine if not p.exists() and not p.is_symlink()]
    out.mkdir(parents=True, exist_ok=True)
    try:
        runs = {e: _run_one(model, fixtures, out / e, e, capture_options, check_options or {}) for e in names}
        return _compare(runs, out)
    except BaseException:
        for p in mine:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists() or p.is_symlink():
                p.unlink()
        raise


# --------------------------------------------------------------------------- one exporter

def _run_one(model, fixtures, bundle, exporter, capture_options, check_options):
    if exporter == "dynamo" and not _export.has_dynamo_exporter():
        return ExporterRun(exporter, "unavailable",
                           error=f"torch {_export.torch_version()} has no dynamo exporter")
    try:
        capture(model, fixtures, bundle, exporter=exporter, **capture_options)
    except ExportError as e:
        why = str(e).splitlines()[0][:400] if str(e) else type(e).__name__
        return ExporterRun(exporter, "export-failed", error=why)
    r = api.check(bundle, **check_options)
    return ExporterRun(exporter, "checked", bundle=os.fspath(bundle), verdict=r.verdict,
                       numbers_match=_numbers_match(r), worst=_worst(r),
                       causes=tuple(c.id for c in r.causes), first_divergent=r.first_divergent, check=r)


def _output_matches(o: api.Output) -> bool:
    if o.judgment is not None and o.judgment.get("verdict") in ("within-tolerance", "within-noise"):
        return True
    return o.passed and o.note is None


def _numbers_match(r: api.CheckResult) -> bool:
    return bool(r.fixtures) and all(f.status != "error" and f.outputs and all(_output_matches(o) for o in f.outputs)
                                    for f in r.fixtures)


def _worst(r: api.CheckResult) -> Optional[Dict[str, Any]]:
    """The output farthest from eager, over every fixture: its name, fixture,
    max |ONNX - eager|, the noise envelope it is judged against, and ONNX's
    and eager's distance to the float64 reference (null without one)."""
    best = None
    for f in r.fixtures:
        for o in f.outputs:
            d = o.metrics.get("max_abs")
            if not isinstance(d, (int, float)):
                continue
            if best is None or d > best["max_abs"]:
                j = o.judgment or {}
                best = {"output": o.name, "fixture": f.index, "max_abs": d,
                        "envelope_max": (j.get("envelope") or {}).get("max_abs"),
                        "judgment": j.get("verdict"),
                        "ort_vs_float64": (j.get("ort_vs_float64") or {}).get("max_abs"),
                        "eager_vs_float64": (j.get("eager_vs_float64") or {}).get("max_abs")}
    return best


# --------------------------------------------------------------------------- the comparison

def _compare(runs: Dict[str, ExporterRun], out: pathlib.Path) -> ExporterComparison:
    checked = [r for r in runs.values() if r.status == "checked"]
    matching = [r.exporter for r in checked if r.numbers_match]
    separating = [r.exporter for r in checked if not r.numbers_match]
    failed = [r.exporter for r in runs.values() if r.status == "export-failed"]
    differ = bool((matching and separating) or (failed and checked))
    seps = [_separation(runs[e], runs[matching[0]] if matching else None) for e in separating]
    eager_same = _eager_identical([pathlib.Path(r.bundle or "") for r in checked]) if len(checked) > 1 else None
    summary = _summary(runs, matching, separating, failed, seps)
    doc = _document(runs, matching, separating, failed, differ, eager_same, seps, summary)
    _write(out / "exporters.json", json.dumps(doc, indent=2) + "\n")
    _write(out / "exporters.md", _markdown(doc))
    return ExporterComparison(runs, matching, separating, failed, differ, eager_same, seps, summary, doc)


def _separation(run: ExporterRun, ok: Optional[ExporterRun]) -> Separation:
    fd = run.first_divergent
    if fd is None:
        return Separation(run.exporter, ok.exporter if ok else None, None, None, None, None, None,
                          None, None, None, None, None, (), ())
    here = onnx.load(os.path.join(run.bundle or "", "model.onnx"), load_external_data=False).graph
    mine = _ancestor_ops(here, fd.output)
    m_value = m_node = m_op = None
    theirs: List[str] = []
    if ok is not None:
        there = onnx.load(os.path.join(ok.bundle or "", "model.onnx"), load_external_data=False).graph
        m_value = _module_value(ok.bundle or "", fd.module)
        if m_value is not None:
            prod = _producer(there, m_value)
            m_node, m_op = (prod.name, _signature(prod)) if prod is not None else (None, None)
            theirs = _ancestor_ops(there, m_value)
    only_here, only_there = _multiset_diff(mine, theirs) if ok is not None and m_value else ((), ())
    return Separation(run.exporter, ok.exporter if ok else None, fd.node, _signature(_producer(here, fd.output))
                      or fd.op_type, fd.output, fd.module, fd.fixture, _num(fd.max_abs), _num(fd.envelope_max),
                      m_value, m_node, m_op, only_here, only_there)


def _num(x):
    return float(x) if isinstance(x, (int, float)) else None


def _module_value(bundle: str, module: Optional[str]) -> Optional[str]:
    """The value the capture mapped ``module``'s output to in ``bundle``."""
    if not module:
        return None
    with open(os.path.join(bundle, "parity.json"), encoding="utf-8") as f:
        mm = json.load(f).get("module_map") or {}
    v = mm.get(module)
    return v if isinstance(v, str) else None


def _producer(graph, value: Optional[str]):
    for n in graph.node:
        if value in n.output:
            return n
    return None


def _signature(node) -> Optional[str]:
    """``Op`` or ``Op[attr=v,...]`` with the semantic attributes it sets."""
    if node is None:
        return None
    parts = []
    for a in node.attribute:
        if a.name in _SEMANTIC_ATTRS:
            v = onnx.helper.get_attribute_value(a)
            v = v.decode() if isinstance(v, bytes) else (round(v, 6) if isinstance(v, float) else v)
            parts.append(f"{a.name}={v}")
    return node.op_type + (f"[{','.join(sorted(parts))}]" if parts else "")


def _ancestor_ops(graph, value: Optional[str]) -> List[str]:
    """The signatures of every node ``value`` depends on (itself included),
    walking back to graph inputs and initializers."""
    prod = {o: n for n in graph.node for o in n.output if o}
    seen, stack, ops = set(), [value], []
    while stack:
        v = stack.pop()
        n = prod.get(v)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.op_type not in ("Constant", "Identity"):
            ops.append(_signature(n) or n.op_type)
        stack.extend(i for i in n.input if i)
    return ops


def _multiset_diff(a: List[str], b: List[str]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    ca: Dict[str, int] = {}
    cb: Dict[str, int] = {}
    for x in a:
        ca[x] = ca.get(x, 0) + 1
    for x in b:
        cb[x] = cb.get(x, 0) + 1

    def left(p, q):
        return tuple(f"{k} x{p[k] - q.get(k, 0)}" if p[k] - q.get(k, 0) > 1 else k
                     for k in sorted(p) if p[k] > q.get(k, 0))
    return left(ca, cb), left(cb, ca)


def _eager_identical(bundles: List[pathlib.Path]) -> bool:
    """Every bundle's test_data_set_K/output_J.pb byte for byte the first's."""
    def outputs(b):
        return {p.relative_to(b).as_posix(): p.read_bytes() for p in sorted(b.glob("test_data_set_*/output_*.pb"))}
    first = outputs(bundles[0])
    return bool(first) and all(outputs(b) == first for b in bundles[1:])


def _summary(runs, matching, separating, failed, seps) -> str:
    lines = []
    if matching:
        lines.append(f"{' and '.join(matching)} {'match' if len(matching) > 1 else 'matches'} eager")
    for s in seps:
        if s.node:
            lines.append(f"{s.exporter} separates at {s.node} ({s.op_type}, module {s.module or '?'}, "
                         f"fixture {s.fixture}: max |d| {_g(s.max_abs)} against an envelope of {_g(s.envelope_max)})")
        else:
            lines.append(f"{s.exporter} does not match eager (no first divergent value: "
                         f"verdict {runs[s.exporter].verdict})")
    for e in failed:
        lines.append(f"{e} failed to export: {runs[e].error}")
    for r in runs.values():
        if r.status == "unavailable":
            lines.append(f"{r.exporter} unavailable: {r.error}")
    if not matching and not separating:
        lines.append("no exporter produced a graph to check")
    return "; ".join(lines)


def _g(x) -> str:
    return "?" if x is None else f"{x:.3g}"


def _document(runs, matching, separating, failed, differ, eager_same, seps, summary) -> Dict[str, Any]:
    import torch  # already loaded by the capture
    return {
        "schema": SCHEMA,
        "torch": torch.__version__,
        "exporters": [{
            "exporter": r.exporter, "status": r.status, "bundle": r.bundle, "error": r.error,
            "verdict": r.verdict, "numbers_match": r.numbers_match, "worst": r.worst, "causes": list(r.causes),
            "first_divergent": dataclasses.asdict(r.first_divergent) if r.first_divergent else None,
        } for r in runs.values()],
        "matching": matching, "separating": separating, "failed": failed, "differ": differ,
        "eager_identical": eager_same,
        "separations": [dict(dataclasses.asdict(s), only_here=list(s.only_here), only_matching=list(s.only_matching))
                        for s in seps],
        "summary": summary,
    }


def _markdown(doc: Dict[str, Any]) -> str:
    def cell(x):
        return "–" if x is None else str(x).replace("|", "\\|")
    rows = ["# Exporter A/B", "", f"torch {doc['torch']}. {doc['summary']}.", "",
            "| exporter | status | verdict | numbers match eager | worst max abs (fixture) | causes | first divergent |",
            "|---|---|---|---|---|---|---|"]
    for r in doc["exporters"]:
        w = r["worst"] or {}
        fd = r["first_divergent"] or {}
        worst = f"{w['max_abs']:.3g} ({w['fixture']})" if w else None
        first = f"{fd['node']} ({fd['op_type']}, module {fd['module']})" if fd else None
        rows.append(f"| {r['exporter']} | {r['status']}{': ' + r['error'] if r['error'] else ''} | "
                    f"{cell(r['verdict'])} | {cell(r['numbers_match'])} | {cell(worst)} | "
                    f"{cell(', '.join(r['causes']) or None)} | {cell(first)} |")
    for s in doc["separations"]:
        if not s["node"] or not s["matching"]:
            continue
        rows += ["", f"## Where {s['exporter']} separates", "",
                 f"- first divergent value: `{s['output']}` from `{s['node']}` ({s['op_type']}), "
                 f"module `{s['module']}`, fixture {s['fixture']}",
                 f"- the same module in {s['matching']}: `{s['matching_value']}` from `{s['matching_node']}` "
                 f"({s['matching_op']})",
                 f"- ops computing it only in {s['exporter']}: {', '.join(s['only_here']) or 'none'}",
                 f"- only in {s['matching']}: {', '.join(s['only_matching']) or 'none'}"]
    return "\n".join(rows) + "\n"


def _write(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
