"""The onnxparity library in-process: ``check`` runs a bundle's fixtures
through ONNX Runtime and judges them, in this process, with no subprocess;
``bisect``, ``diagnose`` and ``gate`` do what the tool's commands do.

    import onnxparity
    r = onnxparity.check("bundle/", rtol=1e-4, top_k="auto")
    r.verdict, r.exit_code, r.causes[0].id, r.first_divergent
    r.document            # the dict `onnxparity check --format json` prints

It calls ``libonnxparity.so`` through ctypes (no compiler at install time, no
dependency beyond the standard library; the library's API for bindings is
one call per command, include/onnxparity/api.h).  The options are the tool's
own flags, parsed by the library's one table, so ``threads=4`` here and
``--threads 4`` on the command line mean the same; the result is the tool's
JSON document, byte for byte, read into typed objects.  ONNX Runtime still
runs in the library's worker process: a crash or hang in a kernel fails the
fixture, not this process.

The library is ``$ONNXPARITY_LIB``, else ``build/libonnxparity.so.0`` of the
repository this package sits in, else the copy the pip wheel installed
(``_native/lib/``).  This module imports nothing heavy (no torch, no onnx).
"""
import ctypes
import json
import os
import pathlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]

_HERE = pathlib.Path(__file__).resolve().parent
_CANDIDATES = (_HERE.parents[1] / "build" / "libonnxparity.so.0",
               _HERE / "_native" / "lib" / "libonnxparity.so.0")

# option -> (flag, kind): the tool's flags (docs/cli.md), one row each
OPTIONS: Dict[str, Tuple[str, str]] = {
    "rtol": ("--rtol", "value"), "atol": ("--atol", "value"), "top_k": ("--top-k", "value"),
    "tol": ("--tol", "tol"), "opt_level": ("--opt-level", "value"), "provider": ("--provider", "value"),
    "provider_options": ("--provider-opt", "kv"), "threads": ("--threads", "value"),
    "inter_threads": ("--inter-threads", "value"), "session_config": ("--session-config", "kv"),
    "ort_lib": ("--ort-lib", "value"), "deterministic": ("--deterministic", "switch"),
    "strict_tol": ("--strict-tol", "switch"), "shard": ("--shard", "shard"),
    "timeout": ("--timeout", "value"), "custom_op_libs": ("--custom-op-lib", "list"),
    "noise_estimate": ("--no-noise-estimate", "negated"), "lint": ("--no-lint", "negated"),
    "bisect": ("--no-bisect", "negated"), "isolate": ("--no-isolate", "negated"),
    # bisect's own
    "fixture": ("--fixture", "value"), "reference": ("--reference", "value"),
    "chunk": ("--chunk", "value"), "max_exposed_bytes": ("--max-exposed-bytes", "value"),
    "save_repro": ("--save-repro", "value"),
    # diagnose's own
    "sweep": ("--no-sweep", "negated"),
    # gate's own
    "criteria": ("--criteria", "value"), "record": ("--record", "switch"),
    "margin": ("--margin", "value"), "allow_failing": ("--allow-failing", "switch"),
    "env_drift": ("--env-drift", "value"), "targets": ("--target", "list"),
}


def flags(options: Mapping[str, Any], what: str = "option(s)") -> List[str]:
    """The options as the tool's flags (None: not given).  TypeError names an
    unknown option ("unknown <what> ...")."""
    unknown = sorted(set(options) - set(OPTIONS) - {"extra_args"})
    if unknown:
        raise TypeError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(sorted(OPTIONS))}, "
                        "extra_args")
    args: List[str] = []
    for key, val in options.items():
        if key == "extra_args" or val is None:
            continue
        flag, kind = OPTIONS[key]
        if kind == "value":
            args += [flag, str(val)]
        elif kind == "switch":
            if val:
                args.append(flag)
        elif kind == "negated":
            if not val:
                args.append(flag)
        elif kind == "kv":
            for k, v in dict(val).items():
                args += [flag, f"{k}={v}"]
        elif kind == "list":
            for v in val:
                args += [flag, str(v)]
        elif kind == "shard":
            args += [flag, val if isinstance(val, str) else f"{val[0]}/{val[1]}"]
        elif kind == "tol":
            for name, (r, a) in dict(val).items():
                args += [flag, f"{name}={r},{a}"]
    args += [str(a) for a in options.get("extra_args") or ()]
    return args


# --- errors ------------------------------------------------------------------------

class OnnxParityError(Exception):
    """The library refused the run: ``exit_code`` is the tool's for the same
    error (2 usage or bad input, 3 unreadable or malformed files, 4 ONNX
    Runtime), ``file``, ``field`` and ``offset`` say where (None: unknown)."""

    exit_code = 3

    def __init__(self, message: str, file: Optional[str] = None, field: Optional[str] = None,
                 offset: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.offset = offset

    def __str__(self) -> str:
        """One line, as the tool prints it after "onnxparity: " (onp_error_format)."""
        s = f"{self.file}: " if self.file else ""
        s += self.field or ""
        if self.offset is not None:
            s += f"{' ' if self.field else ''}at byte {self.offset}"
        if self.field or self.offset is not None:
            s += ": "
        return s + self.message


class UsageError(OnnxParityError, ValueError):
    """A bad option, or input refused by policy (the tool's exit 2)."""
    exit_code = 2


class FileError(OnnxParityError, OSError):
    """A file could not be read or written (exit 3)."""
    exit_code = 3


class FormatError(OnnxParityError):
    """Bytes that do not decode as the format they claim (exit 3)."""
    exit_code = 3


class RuntimeFailure(OnnxParityError, RuntimeError):
    """ONNX Runtime could not load the model or open a session (exit 4)."""
    exit_code = 4


class RecordRefused(OnnxParityError):
    """``gate(record=True)`` on a run that is no baseline (fixtures fail, a
    fixture does not run, or the lint has errors): nothing was written
    (the tool's exit 1 with the same one-line reason)."""
    exit_code = 1


# onp_errcode (include/onnxparity/error.h) -> exception class
_ERRORS = {1: UsageError, 2: UsageError, 3: FileError, 4: FormatError, 5: OnnxParityError,
           6: RuntimeFailure}


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("offset", ctypes.c_int64), ("file", ctypes.c_char * 512),
                ("field", ctypes.c_char * 160), ("msg", ctypes.c_char * 768)]


def _raise(e: _Error) -> None:
    def text(b: bytes) -> Optional[str]:
        return b.decode("utf-8", "replace") or None
    cls = _ERRORS.get(e.code, OnnxParityError)
    raise cls(text(e.msg) or "failed", text(e.file), text(e.field), e.offset if e.offset >= 0 else None)


# --- the library ---------------------------------------------------------------------

_lib: Optional[ctypes.CDLL] = None


def library_path() -> str:
    """The libonnxparity.so this module loads (see the module's doc)."""
    env = os.environ.get("ONNXPARITY_LIB")
    if env:
        return env
    for c in _CANDIDATES:
        if c.exists():
            return str(c)
    raise FileNotFoundError("libonnxparity.so.0 not found: set $ONNXPARITY_LIB, build it with `make` "
                            f"({_CANDIDATES[0]}), or install the wheel")


def _load() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        pp = ctypes.POINTER(ctypes.c_char_p)
        lib.onp_api_check.argtypes = [ctypes.c_char_p, ctypes.c_char_p, pp, ctypes.c_size_t, pp,
                                      ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                      ctypes.POINTER(_Error)]
        lib.onp_api_check.restype = ctypes.c_int
        for name in ("onp_api_bisect", "onp_api_diagnose", "onp_api_gate", "onp_api_chain", "onp_api_generate"):
            getattr(lib, name).argtypes = lib.onp_api_check.argtypes
            getattr(lib, name).restype = ctypes.c_int
        lib.onp_api_free.argtypes = [ctypes.c_void_p]
        lib.onp_api_free.restype = None
        lib.onp_api_version.argtypes = []
        lib.onp_api_version.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def library_version() -> str:
    """The loaded library's version."""
    return _load().onp_api_version().decode()


def _strings(items: Sequence[str]) -> "ctypes.Array[ctypes.c_char_p]":
    return (ctypes.c_char_p * max(len(items), 1))(*[os.fsencode(s) for s in items])


# --- results -------------------------------------------------------------------------

@dataclass(frozen=True)
class Cause:
    """One cause of the derivation (docs/diagnose.md): id, confidence, the
    node it points at, its evidence, the fix."""
    id: str
    confidence: str
    node: Optional[str]
    evidence: List[str]
    fix: str
    suggested_atol: Optional[float] = None
    explains: Optional[Dict[str, int]] = None


@dataclass(frozen=True)
class FirstDivergent:
    """The first node where ONNX Runtime leaves eager (bisect)."""
    node: str
    op_type: str
    output: str
    module: str
    reference: str
    max_abs: Any
    envelope_max: Any
    jump: Any
    fixture: int


@dataclass(frozen=True)
class Output:
    """One graph output of one fixture: pass, the metrics record, the noise
    judgment (``judgment["verdict"]``: within-tol, within-noise, beyond-noise,
    ...), top-K agreement where judged."""
    name: str
    passed: bool
    note: Optional[str]
    dtype: Optional[str]
    shape: Optional[List[int]]
    metrics: Dict[str, Any]
    judgment: Optional[Dict[str, Any]]
    topk: Optional[Dict[str, Any]]


@dataclass(frozen=True)
class Fixture:
    index: int
    dir: str
    status: str
    error: Optional[str]
    runtime_failure: Optional[str]
    outputs: List[Output]


@dataclass(frozen=True)
class CheckResult:
    """What ``onnxparity check --format json`` prints, typed: ``document`` is
    that dict itself, every other field is read from it."""
    verdict: str
    exit_code: int
    model: str
    environment: Dict[str, Any]
    options: Dict[str, Any]
    fixtures: List[Fixture]
    summary: Dict[str, Any]
    causes: List[Cause]
    first_divergent: Optional[FirstDivergent]
    latent: List[Dict[str, Any]]
    lint: Dict[str, Any]
    adequacy: Optional[Dict[str, Any]]
    shard: Optional[Dict[str, Any]]
    document: Dict[str, Any] = field(repr=False)
    text: str = field(repr=False, default="")

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


_OUTPUT_KEYS = {"name", "pass", "note", "dtype", "shape", "judgment", "topk"}


def _output(o: Dict[str, Any]) -> Output:
    return Output(name=o["name"], passed=bool(o["pass"]), note=o.get("note"), dtype=o.get("dtype"),
                  shape=o.get("shape"), metrics={k: v for k, v in o.items() if k not in _OUTPUT_KEYS},
                  judgment=o.get("judgment"), topk=o.get("topk"))


def _cause(c: Dict[str, Any]) -> Cause:
    return Cause(id=c["id"], confidence=c["confidence"], node=c.get("node"),
                 evidence=list(c["evidence"]), fix=c["fix"], suggested_atol=c.get("suggested_atol"),
                 explains=c.get("explains"))


def _fixture(f: Dict[str, Any]) -> Fixture:
    return Fixture(index=f["index"], dir=f["dir"], status=f["status"], error=f.get("error"),
                   runtime_failure=f.get("runtime_failure"),
                   outputs=[_output(o) for o in f["outputs"]])


def _result(doc: Dict[str, Any], rc: int, text: str) -> CheckResult:
    fd = doc.get("first_divergent")
    return CheckResult(
        verdict=doc["verdict"], exit_code=rc, model=doc["model"], environment=doc["environment"],
        options=doc["options"],
        fixtures=[_fixture(f) for f in doc["fixtures"]],
        summary=doc["summary"],
        causes=[_cause(c) for c in doc["causes"]],
        first_divergent=FirstDivergent(**fd) if fd else None,
        latent=list(doc.get("latent") or []), lint=doc.get("lint") or {}, adequacy=doc.get("adequacy"),
        shard=doc.get("shard"), document=doc, text=text)


def _call(fn_name: str, bundle: Optional[PathLike], model: Optional[PathLike],
          data: Sequence[PathLike], options: Mapping[str, Any]) -> Tuple[int, str]:
    """One api.h call: (exit code, the document's text); raises the typed
    error, and RecordRefused where the call wrote no document on purpose."""
    if (bundle is None) == (model is None) or (model is not None and not data):
        raise UsageError("give a bundle, or a model and at least one fixture folder (data=[...])")
    args = flags(options)
    lib = _load()
    dirs = [os.fspath(d) for d in data]
    doc = ctypes.c_void_p()
    err = _Error()
    rc = getattr(lib, fn_name)(os.fsencode(bundle) if bundle is not None else None,
                               os.fsencode(model) if model is not None else None,
                               _strings(dirs), len(dirs), _strings(args), len(args),
                               ctypes.byref(doc), ctypes.byref(err))
    if rc < 0:
        _raise(err)
    if not doc.value:
        raise RecordRefused(err.msg.decode("utf-8", "replace") or "not recorded")
    try:
        text = ctypes.string_at(doc.value).decode("utf-8") if doc.value else ""
    finally:
        lib.onp_api_free(doc)
    return rc, text


def check(bundle: Optional[PathLike] = None, *, model: Optional[PathLike] = None,
          data: Sequence[PathLike] = (), **options: Any) -> CheckResult:
    """Check a bundle folder (or ``model`` with the fixture folders ``data``)
    in this process, as ``onnxparity check --format json`` does.

    options: rtol, atol, top_k (int, "auto", "off"), tol ({output: (rtol,
    atol)}), strict_tol, noise_estimate (False: no ORT-side estimate), lint,
    bisect (False: skip), shard ("I/N" or (I, N)), opt_level, provider,
    provider_options ({k: v}), threads, inter_threads, session_config ({k: v}),
    ort_lib, deterministic, timeout, isolate (False: ORT in this process),
    custom_op_libs, extra_args (more flags, as on the command line).

    Returns a CheckResult whatever the verdict (``passed``, ``exit_code``: 0
    pass, 1 fail, 4 ONNX Runtime lost a fixture).  Raises UsageError (bad
    options, nothing to compare), FileError / FormatError (unreadable or
    malformed files), RuntimeFailure (ONNX Runtime refused the model), each
    with the file, field and byte offset the tool's one-line error names."""
    rc, text = _call("onp_api_check", bundle, model, data, options)
    return _result(json.loads(text), rc, text)


@dataclass(frozen=True)
class CurvePoint:
    """One exposed value in graph order: compared with its reference (eager,
    or ORT at opt-level disable), ``passed`` None when it has none."""
    value: str
    node: str
    op_type: str
    module: str
    passed: Optional[bool]
    max_abs: Any
    max_rel: Any
    verdict: Optional[str]
    note: Optional[str]


@dataclass(frozen=True)
class BisectResult:
    """What ``onnxparity bisect --format json`` prints, typed: ``verdict`` is
    "diverges", "inconclusive" or "agrees"; ``first_divergent`` the document's
    member (node, op_type, output, module, inputs, local, metrics, ...)."""
    verdict: str
    exit_code: int
    model: str
    reference: str
    first_divergent: Optional[Dict[str, Any]]
    curve: List[CurvePoint]
    summary: Dict[str, Any]
    document: Dict[str, Any] = field(repr=False)
    text: str = field(repr=False, default="")


def bisect(bundle: Optional[PathLike] = None, *, model: Optional[PathLike] = None,
           data: Sequence[PathLike] = (), **options: Any) -> BisectResult:
    """Bisect in this process, as ``onnxparity bisect --format json`` does:
    the first node where ONNX Runtime leaves its reference.  Options as for
    check (the ONNX Runtime and tolerance ones) and bisect's own: fixture,
    reference ("eager", "disable"), chunk, max_exposed_bytes, save_repro.
    Raises as check does; UsageError also when nothing can be compared (no
    eager intermediates with reference="eager")."""
    rc, text = _call("onp_api_bisect", bundle, model, data, options)
    doc = json.loads(text)
    curve = [CurvePoint(value=c["value"], node=c["node"], op_type=c["op_type"], module=c["module"],
                        passed=c.get("pass"), max_abs=c.get("max_abs"), max_rel=c.get("max_rel"),
                        verdict=c.get("verdict"), note=c.get("note")) for c in doc["curve"]]
    return BisectResult(verdict=doc["verdict"], exit_code=rc, model=doc["model"],
                        reference=doc["reference"], first_divergent=doc.get("first_divergent"),
                        curve=curve, summary=doc["summary"], document=doc, text=text)


@dataclass(frozen=True)
class DiagnoseResult:
    """What ``onnxparity diagnose --format json`` prints, typed: the verdict
    ("pass" healthy, "fail" causes found or parity fails), the ranked causes
    with their evidence and fix, the first divergent node, the probes, the
    sweep over levels (None with sweep=False)."""
    verdict: str
    exit_code: int
    model: str
    causes: List[Cause]
    first_divergent: Optional[Dict[str, Any]]
    probes: Dict[str, Any]
    sweep: Optional[Dict[str, Any]]
    lint: Dict[str, Any]
    environment: Dict[str, Any]
    document: Dict[str, Any] = field(repr=False)
    text: str = field(repr=False, default="")

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


def diagnose(bundle: Optional[PathLike] = None, *, model: Optional[PathLike] = None,
             data: Sequence[PathLike] = (), **options: Any) -> DiagnoseResult:
    """Diagnose in this process, as ``onnxparity diagnose --format json``
    does: lint, the probes, the sweep, the run judged with the noise rule,
    bisect where it fails, the causes ranked.  Options: the ONNX Runtime
    ones, rtol, atol, bisect (False: skip), save_repro, sweep (False: skip
    the level sweep).  Raises as check does."""
    rc, text = _call("onp_api_diagnose", bundle, model, data, options)
    doc = json.loads(text)
    return DiagnoseResult(
        verdict=doc["verdict"], exit_code=rc, model=doc["model"],
        causes=[_cause(c) for c in doc["causes"]],
        first_divergent=doc.get("first_divergent"), probes=doc["probes"], sweep=doc.get("sweep"),
        lint=doc["lint"], environment=doc["environment"], document=doc, text=text)


@dataclass(frozen=True)
class GateCheck:
    """One criterion as judged: the worst value measured against its limit
    (``bound`` "max" or "min"), ``margin`` how far from it (below 1:
    regressed; None when unknown)."""
    output: Optional[str]
    check: str
    measured: Any
    limit: Any
    bound: str
    passed: bool
    margin: Any


@dataclass(frozen=True)
class Regression:
    """A criterion a fixture (or the bundle: fixture None) does not meet;
    ``target`` names the deployment target (criteria with targets), else
    None."""
    fixture: Optional[str]
    output: Optional[str]
    check: str
    value: Any
    limit: Any
    message: str
    target: Optional[str] = None


@dataclass(frozen=True)
class GateResult:
    """What ``onnxparity gate --format json`` prints, typed (gating): the
    verdict ("pass", "fail", "error"), every regression, every criterion
    with its margin, the environment drift under the policy, the causes and
    the first divergent node where something regressed, the fixtures as
    check's document has them."""
    verdict: str
    exit_code: int
    model: str
    criteria: str
    environment: Dict[str, Any]
    environment_drift: List[Dict[str, Any]]
    causes: List[Cause]
    first_divergent: Optional[FirstDivergent]
    regressions: List[Regression]
    checks: List[GateCheck]
    fixtures: List[Fixture]
    summary: Dict[str, Any]
    document: Dict[str, Any] = field(repr=False)
    text: str = field(repr=False, default="")

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


def _gate_result(doc: Dict[str, Any], rc: int, text: str) -> GateResult:
    fd = doc.get("first_divergent")
    return GateResult(
        verdict=doc["verdict"], exit_code=rc, model=doc["model"], criteria=doc["criteria"],
        environment=doc["environment"], environment_drift=list(doc["environment_drift"]),
        causes=[_cause(c) for c in doc["causes"]],
        first_divergent=FirstDivergent(**fd) if fd else None,
        regressions=[Regression(fixture=x["fixture"], output=x["output"], check=x["check"],
                                value=x["value"], limit=x["limit"], message=x["message"],
                                target=x.get("target"))
                     for x in doc["regressions"]],
        checks=[GateCheck(output=k["output"], check=k["check"], measured=k["measured"],
                          limit=k["limit"], bound=k["bound"], passed=bool(k["pass"]),
                          margin=k["margin"]) for k in doc["checks"]],
        fixtures=[_fixture(f) for f in doc["fixtures"]],
        summary=doc["summary"], document=doc, text=text)


def gate(bundle: Optional[PathLike] = None, *, criteria: PathLike, model: Optional[PathLike] = None,
         data: Sequence[PathLike] = (), record: bool = False,
         **options: Any) -> Union[GateResult, Dict[str, Any]]:
    """Gate a bundle (or ``model`` with the fixture folders ``data``) against
    the release criteria file ``criteria`` in this process, as ``onnxparity
    gate --format json`` does (docs/gate.md).  Options: the ONNX Runtime ones,
    env_drift ("warn", "fail"), bisect (False: no first divergent node).

    Returns a GateResult whatever the verdict (``passed``, ``exit_code``: 0
    pass, 1 regressed, 4 ONNX Runtime lost a fixture).

    With ``record=True`` the run is measured and the criteria are written to
    ``criteria`` (atomically; options margin, allow_failing, rtol, atol, and
    targets: two or more "NAME=LIBRARY[@OPT_LEVEL]", docs/gate.md), and
    the criteria document is returned as a dict; a run that is no baseline
    raises RecordRefused with the tool's reason, writing nothing.  Raises
    UsageError, FileError, FormatError, RuntimeFailure as check does (a
    malformed criteria file: UsageError naming the field)."""
    opts = dict(options, criteria=os.fspath(criteria), record=record)
    rc, text = _call("onp_api_gate", bundle, model, data, opts)
    doc = json.loads(text)
    return doc if record else _gate_result(doc, rc, text)


def chain(bundle: Optional[PathLike] = None, *, stages: Sequence[Any], model: Optional[PathLike] = None,
          data: Sequence[PathLike] = (), per_value: bool = False, **options: Any) -> Dict[str, Any]:
    """The deployment chain of a bundle (or ``model`` with the fixture folders
    ``data``) in this process, as ``onnxparity chain --format json`` does
    (docs/chain.md): ``stages`` are (name, model) or (name, model, precision)
    pairs in chain order (precision "fp32", "fp16", "bf16", "int8"; default
    read from the graph), or the dicts onnxparity._transforms.make returns;
    per_value keeps every value's SQNR.  Options: the ONNX Runtime and
    tolerance ones, as check takes them.

    Returns the chain document (a dict; its "verdict", "first_beyond",
    "stages"), and its exit code as the "exit_code" member (0 every stage
    within, 1 one beyond, 4 ONNX Runtime refused or lost a stage).  Raises
    UsageError, FileError, FormatError, RuntimeFailure as check does."""
    extra = list(options.pop("extra_args", ()))
    for st in stages:
        name, path, prec = ((st["name"], st["model"], st.get("precision")) if isinstance(st, Mapping)
                            else (st[0], st[1], st[2] if len(st) > 2 else None))
        extra += ["--stage", f"{name}={os.fspath(path)}"]
        if prec:
            extra += ["--precision", f"{name}={prec}"]
    if per_value:
        extra.append("--per-value")
    rc, text = _call("onp_api_chain", bundle, model, data, dict(options, extra_args=extra))
    doc = json.loads(text)
    doc["exit_code"] = rc
    return doc


def fp16_search(bundle: PathLike, out_dir: PathLike, *, budget: int = 24, shrink: bool = True,
                model: Optional[PathLike] = None, **options: Any) -> Dict[str, Any]:
    """The float16 block-list search (docs/chain.md): a node_block_list for
    onnxruntime's float16 converter that brings the bundle's export (or
    ``model``) within float16's envelope, each list tried converted again
    (the ``fp16-region`` transform, OUT_DIR/tryNNN.onnx) and judged by
    ``chain``; at most ``budget`` conversions.  Returns the answer as a dict:
    "found", "verdict" (the chain's on the list given), "node_block_list",
    "grown_node_block_list", "model", "plain", "steps", "note"; "found" is
    false, and "note" says why, when no list was within the budget.  Needs
    the chain's transform packages (onnx, onnxruntime) and this library;
    ``options`` go to ``chain`` (ort_lib, ...)."""
    from . import _fp16search
    return _fp16search.search(os.fspath(bundle), os.fspath(out_dir), budget=budget, shrink=shrink,
                              src=os.fspath(model) if model is not None else None, **options)
