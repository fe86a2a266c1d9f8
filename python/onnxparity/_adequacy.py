"""The fixture adequacy report (parity.json "adequacy"): do the fixtures say
enough for a parity verdict to mean something?  Measured from the bundle's
files after they are written (one fixture in memory at a time, so the
streamed capture stays bounded), over every fixture:

  * samples (dim 0 of the first input, summed) and shape groups;
  * per floating input: moments, range and the fraction of distinct values,
    with a flag when the values look synthetic (standard normal like
    torch.randn, uniform [0, 1) like torch.rand, or constant samples);
  * per output, whether it is a classifier's logits (_roles.py: dtype,
    shape, name, the graph's use of it), recorded as output_roles;
  * per classifier output (logits, [N, C], C >= 2): the classes the eager
    model predicts and how often, flags when one class dominates or most
    classes are missing, and the samples whose top-1/top-2 margin is small
    enough that float noise could flip them.

Each flag has a level: "warn" makes the verdict "inadequate", "info" does
not.  The thresholds are constants here, written into the report and
documented in docs/formats.md ("adequacy")."""
import math

import numpy as np
import onnx
from onnx import numpy_helper

from . import _roles

SCHEMA = "onnxparity.adequacy/1"

MIN_SAMPLES = 100          # fewer samples than this: warn "few-samples"
NORMAL_TOL = {"mean": 0.05, "std": 0.05, "skew": 0.1, "kurt": 0.25}
UNIFORM_TOL = {"mean": 0.02, "var": 0.01, "kurt": 0.15}
DISTINCT_SYNTHETIC = 0.9   # float noise: nearly every value distinct
MIN_ELEMENTS = 1000        # too few values to tell a distribution
CONSTANT_SHARE = 0.5       # more constant samples than this: warn "constant-input"
DOMINATE_SHARE = 0.5       # one class predicted for more than this share (C >= 3) ...
DOMINATE_SHARE_BINARY = 0.9  # ... or this share (C == 2)
BOUNDARY_NOISE_FACTOR = 4  # margin <= 4 x the float64-measured noise of that output ...
BOUNDARY_REL = 2.0 ** -16  # ... or, without a float64 pass, <= 2^-16 x max |logit| of the row
SAMPLE_VALUES = 65536      # values per fixture looked at for the distinct fraction ...
DISTINCT_FIXTURES = 32     # ... in the first this many fixtures (the sort is the report's main cost)


def _read(path, unread):
    """The tensor at ``path`` as numpy, or None (the reason added to
    ``unread``: a dtype this onnx's numpy_helper cannot convert)."""
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    try:
        return numpy_helper.to_array(t)
    except Exception as e:  # the statistics are a report: a tensor they cannot read is named, not fatal
        unread.append(f"{path.parent.name}/{path.name}: {type(e).__name__}: {e}")
        return None


class _InputStats:
    def __init__(self, name):
        self.name = name
        self.n = 0
        self.s1 = self.s2 = self.s3 = self.s4 = 0.0
        self.lo, self.hi = math.inf, -math.inf
        self.distinct = []   # per fixture: distinct / looked-at values
        self.rows = self.constant_rows = 0
        self.floating = True

    def add(self, a):
        if not np.issubdtype(a.dtype, np.floating):
            self.floating = False
            return
        flat = a.reshape(-1)
        finite = np.isfinite(flat)
        if not finite.all():  # the usual all-finite input needs no masked copy
            flat = flat[finite]
        if flat.size == 0:
            return
        x = flat.astype(np.float64)
        x2 = x * x
        self.n += x.size
        self.s1 += float(x.sum())
        self.s2 += float(x2.sum())
        self.s3 += float(np.dot(x2, x))
        self.s4 += float(np.dot(x2, x2))
        # min, max and the distinct values in the input's own dtype (widening
        # is exact, so they are the same; sorting float32 takes half the time)
        self.lo, self.hi = min(self.lo, float(flat.min())), max(self.hi, float(flat.max()))
        if len(self.distinct) < DISTINCT_FIXTURES:
            look = np.sort(flat[:SAMPLE_VALUES])
            self.distinct.append((1 + int(np.count_nonzero(look[1:] != look[:-1]))) / look.size)
        if a.ndim >= 2 and a.shape[0] > 0:
            r = a.reshape(a.shape[0], -1)
            self.rows += r.shape[0]
            self.constant_rows += int(np.sum(r.max(axis=1) == r.min(axis=1)))

    def doc(self):
        if not self.floating or self.n == 0:
            return {"name": self.name, "floating": self.floating, "elements": self.n}, []
        m = self.s1 / self.n
        var = max(self.s2 / self.n - m * m, 0.0)
        sd = math.sqrt(var)
        if sd > 0:
            m3 = self.s3 / self.n - 3 * m * self.s2 / self.n + 2 * m ** 3
            m4 = (self.s4 / self.n - 4 * m * self.s3 / self.n + 6 * m * m * self.s2 / self.n
                  - 3 * m ** 4)
            skew, kurt = m3 / sd ** 3, m4 / var ** 2 - 3
        else:
            skew = kurt = 0.0
        distinct = float(np.mean(self.distinct)) if self.distinct else 0.0
        d = {"name": self.name, "floating": True, "elements": self.n, "mean": m, "std": sd,
             "min": self.lo, "max": self.hi, "skewness": skew, "excess_kurtosis": kurt,
             "distinct_fraction": distinct, "samples": self.rows, "constant_samples": self.constant_rows}
        flags = []
        enough = self.n >= MIN_ELEMENTS and distinct > DISTINCT_SYNTHETIC
        if enough and abs(m) < NORMAL_TOL["mean"] and abs(sd - 1) < NORMAL_TOL["std"] and \
                abs(skew) < NORMAL_TOL["skew"] and abs(kurt) < NORMAL_TOL["kurt"]:
            flags.append(_flag("synthetic-normal", "warn", f"input {self.name}: mean {m:.3f}, std {sd:.3f}, "
                               f"skewness {skew:.3f}, excess kurtosis {kurt:.3f}, {distinct:.0%} distinct "
                               "values: looks like torch.randn noise, not real data", input=self.name))
        elif enough and self.lo >= 0 and self.hi <= 1 and abs(m - 0.5) < UNIFORM_TOL["mean"] and \
                abs(var - 1 / 12) < UNIFORM_TOL["var"] and abs(kurt + 1.2) < UNIFORM_TOL["kurt"]:
            flags.append(_flag("synthetic-uniform", "warn", f"input {self.name}: values in [0, 1] with mean "
                               f"{m:.3f}, variance {var:.4f}, {distinct:.0%} distinct: looks like "
                               "torch.rand noise, not real data", input=self.name))
        if self.rows and self.constant_rows > CONSTANT_SHARE * self.rows:
            flags.append(_flag("constant-input", "warn", f"input {self.name}: {self.constant_rows} of "
                               f"{self.rows} samples are constant tensors", input=self.name))
        return d, flags


class _OutputStats:
    def __init__(self, name, classes, noise64):
        self.name = name
        self.classes = classes
        self.noise64 = noise64
        self.counts = np.zeros(classes, dtype=np.int64)
        self.rows = self.near = 0
        self.min_margin = math.inf
        self.label_counts = {}
        self.label_agree = 0
        self.labelled = 0

    def add(self, a, labels=None):
        x = a.astype(np.float64)
        top = np.argmax(x, axis=1)
        self.counts += np.bincount(top, minlength=self.classes)
        part = np.sort(x, axis=1)
        margin = part[:, -1] - part[:, -2]
        if self.noise64 is not None:
            bound = np.full(margin.shape, BOUNDARY_NOISE_FACTOR * self.noise64)
        else:
            bound = BOUNDARY_REL * np.max(np.abs(x), axis=1)
        finite = np.isfinite(margin)
        self.near += int(np.sum(finite & (margin <= bound)))
        if np.any(finite):
            self.min_margin = min(self.min_margin, float(np.min(margin[finite])))
        self.rows += x.shape[0]
        if labels is not None and len(labels) == x.shape[0]:
            for y in labels:
                self.label_counts[int(y)] = self.label_counts.get(int(y), 0) + 1
            self.label_agree += int(np.sum(top == np.asarray(labels)))
            self.labelled += len(labels)

    def doc(self):
        predicted = {str(c): int(n) for c, n in enumerate(self.counts) if n}
        d = {"name": self.name, "classes": self.classes, "samples": self.rows,
             "predicted": predicted, "classes_predicted": len(predicted),
             "near_boundary": self.near,
             "boundary": ({"rule": "margin <= factor x float64 noise", "factor": BOUNDARY_NOISE_FACTOR,
                           "noise64_max_abs": self.noise64} if self.noise64 is not None else
                          {"rule": "margin <= rel x max |logit| of the row", "rel": BOUNDARY_REL}),
             "min_margin": self.min_margin if math.isfinite(self.min_margin) else None}
        if self.labelled:
            d["labels"] = {str(k): v for k, v in sorted(self.label_counts.items())}
            d["eager_accuracy"] = self.label_agree / self.labelled
        flags = []
        if self.rows >= 2:
            top, top_n = int(np.argmax(self.counts)), int(np.max(self.counts))
            share = top_n / self.rows
            limit = DOMINATE_SHARE_BINARY if self.classes == 2 else DOMINATE_SHARE
            if share > limit:
                flags.append(_flag("class-dominates", "warn", f"output {self.name}: the eager model predicts "
                                   f"class {top} for {top_n} of {self.rows} samples ({share:.0%})",
                                   output=self.name))
            reachable = min(self.classes, self.rows)
            if len(predicted) < reachable / 2:
                flags.append(_flag("classes-missing", "warn", f"output {self.name}: {len(predicted)} of "
                                   f"{self.classes} classes predicted over {self.rows} samples",
                                   output=self.name))
        if self.near:
            flags.append(_flag("near-boundary", "info", f"output {self.name}: {self.near} of {self.rows} "
                               "samples have a top-1/top-2 margin small enough for float noise to flip",
                               output=self.name))
        return d, flags


def _rows_identical(a):
    """Whether every row along dim 0 of ``a`` (rank >= 1, >= 2 rows) has the
    same bytes as the first (NaNs of one payload alike); False for an empty
    tensor (no values to be alike)."""
    if a.size == 0:
        return False
    b = np.ascontiguousarray(a).reshape(a.shape[0], -1).view(np.uint8)
    return bool((b == b[0]).all())


def _rows_alike(a):
    """Whether every row along dim 0 of ``a`` equals the first up to the
    rounding of batched kernels: bytewise for other dtypes; for a floating
    one within 16 epsilons of the first row's largest magnitude (a CPU GEMM
    computes a batch's rows with kernels of other blocking: an output that
    ignores its input comes out a few ulps apart from row to row on some
    machines).  NaNs must sit where the first row's do."""
    if a.size == 0:
        return False
    if a.dtype.kind != "f":
        return _rows_identical(a)
    r = np.ascontiguousarray(a).reshape(a.shape[0], -1).astype(np.float64)
    first = r[0]
    nan = np.isnan(first)
    if (np.isnan(r) != nan).any():
        return False
    fin = first[~nan]
    scale = float(np.abs(fin[np.isfinite(fin)]).max()) if np.isfinite(fin).any() else 0.0
    tol = 16 * float(np.finfo(a.dtype).eps) * scale
    d = np.abs(r[:, ~nan] - first[~nan])
    return bool(np.nan_to_num(d, nan=np.inf, posinf=np.inf).max(initial=0.0) <= tol) or _rows_identical(a)


class _ConstantOutputs:
    """Per output: over the fixtures whose inputs differ between samples,
    whether every one gave the same output for every sample (an output
    that does not depend on the input: the comparison proves little)."""

    def __init__(self):
        self.seen = {}  # output name -> [fixtures looked at, fixtures with identical rows]

    def add(self, name, a):
        n = self.seen.setdefault(name, [0, 0])
        n[0] += 1
        n[1] += _rows_alike(a)

    def flags(self):
        return [_flag("constant-output", "warn", f"output {name}: every sample gives the same values in "
                      f"all {n} fixture(s) whose samples differ: the output does not depend on the input "
                      "here (random or untrained weights, a collapsed model), so parity on it says little",
                      output=name)
                for name, (n, same) in self.seen.items() if n and same == n]


_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def _flag(fid, level, message, **where):
    return dict({"id": fid, "level": level, "message": message}, **where)


def _noise64(doc):
    """{output name: largest float64-measured |eager32 - eager64|} from the
    capture's float64 pass."""
    out = {}
    for f in (doc.get("noise") or {}).get("fixtures", []):
        for o in f.get("outputs", []):
            out[o["name"]] = max(out.get(o["name"], 0.0), float(o.get("max_abs", 0.0)))
    return out


def _output_roles(root, fixtures, out_names):
    """Which floating outputs are logits (_roles.py), from the first
    fixture's shapes and the bundle's model.onnx."""
    if not fixtures:
        return []
    outs = []
    for j, o in enumerate(fixtures[0].get("outputs", [])):
        if o["dtype"] in _FLOAT_NAMES:
            outs.append((out_names[j] if j < len(out_names) else o["name"], o["dtype"], o["shape"]))
    model = root / "model.onnx"
    return _roles.roles(model if model.is_file() else None, outs)


def report(root, doc, labels=None):
    """The adequacy report of the bundle being written at ``root`` with
    parity.json document ``doc`` (its "fixtures" and "noise" read).
    ``labels``: {fixture index: sequence of true labels}, or None."""
    fixtures = doc.get("fixtures", [])
    in_names = [i["name"] for i in doc.get("inputs", [])]
    out_names = [o["name"] for o in doc.get("outputs", [])]
    noise = _noise64(doc)
    output_roles = _output_roles(root, fixtures, out_names)
    logits = {r["name"] for r in output_roles if r["logits"]}
    ins = [_InputStats(n) for n in in_names]
    outs = {}
    groups = {}
    samples = 0
    unread = []
    constant = _ConstantOutputs()
    for k, f in enumerate(fixtures):
        d = root / f["dir"]
        shapes = tuple(tuple(i["shape"]) for i in f["inputs"])
        g = groups.setdefault(shapes, {"shapes": [list(s) for s in shapes], "fixtures": 0, "samples": 0})
        rows = shapes[0][0] if shapes and shapes[0] else 1
        g["fixtures"] += 1
        g["samples"] += rows
        samples += rows
        varied = False  # some input's samples differ in this fixture
        for j, st in enumerate(ins):
            a = _read(d / f"input_{j}.pb", unread)
            if a is not None:
                st.add(a)
                varied = varied or (a.ndim >= 1 and a.shape[0] >= 2 and not _rows_identical(a))
        for j, o in enumerate(f["outputs"]):
            if o["dtype"] not in _FLOAT_NAMES:
                continue
            name = out_names[j] if j < len(out_names) else o["name"]
            classifier = name in logits and len(o["shape"]) == 2 and o["shape"][1] >= 2
            cs = outs.setdefault(name, _OutputStats(name, o["shape"][1], noise.get(name))) \
                if classifier else None
            cs = cs if cs is not None and cs.classes == o["shape"][1] else None
            look = varied and bool(o["shape"]) and o["shape"][0] >= 2
            if not look and cs is None:
                continue
            a = _read(d / f"output_{j}.pb", unread)
            if a is None:
                continue
            if look:
                constant.add(name, a)
            if cs is not None:
                cs.add(a, None if labels is None else labels.get(k))
    flags = []
    if samples < MIN_SAMPLES:
        flags.append(_flag("few-samples", "warn", f"{samples} samples: a parity verdict wants a few hundred "
                           f"real inputs (at least {MIN_SAMPLES})"))
    if len(groups) == 1:
        flags.append(_flag("one-shape", "info", "every fixture has the same input shapes: the dynamic "
                           "dimensions are exercised at one size only"))
    in_docs = []
    for st in ins:
        d, fl = st.doc()
        in_docs.append(d)
        flags += fl
    out_docs = []
    for st in outs.values():
        d, fl = st.doc()
        out_docs.append(d)
        flags += fl
    flags += constant.flags()
    return {
        "schema": SCHEMA,
        "verdict": "inadequate" if any(f["level"] == "warn" for f in flags) else "adequate",
        "samples": samples,
        "fixtures": len(fixtures),
        "shape_groups": list(groups.values()),
        "inputs": in_docs,
        "classifier_outputs": out_docs,
        "output_roles": output_roles,
        "near_boundary": sum(d["near_boundary"] for d in out_docs),
        "flags": flags,
        "unread": unread[:8] + ([f"... and {len(unread) - 8} more"] if len(unread) > 8 else []),
        "thresholds": {"min_samples": MIN_SAMPLES, "normal": NORMAL_TOL, "uniform": UNIFORM_TOL,
                       "distinct_synthetic": DISTINCT_SYNTHETIC, "distinct_values": SAMPLE_VALUES,
                       "distinct_fixtures": DISTINCT_FIXTURES, "min_elements": MIN_ELEMENTS,
                       "constant_share": CONSTANT_SHARE, "dominate_share": DOMINATE_SHARE,
                       "dominate_share_binary": DOMINATE_SHARE_BINARY,
                       "boundary_noise_factor": BOUNDARY_NOISE_FACTOR, "boundary_rel": BOUNDARY_REL},
    }
