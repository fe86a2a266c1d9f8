"""Which ONNX value holds which submodule's output.

Forward hooks record the eager call tree of one forward (the fixture the
export traced).  The legacy exporter of torch >= 1.13 names every node after
the module scopes it was traced in: ``/layer1/layer1.0/conv1/Conv``, whose
output is ``/layer1/layer1.0/conv1/Conv_output_0``.  A scope segment is the
module's name from its last non-numeric atom on (``layer1.0.conv1`` ->
``conv1``, ``layer1.0`` -> ``layer1.0``), segments follow the *call* stack
(a ModuleList iterated in its parent's forward adds no segment), and a node's
innermost scope is made unique per call: the second call of ``relu`` in the
same parent leaves nodes under ``.../relu_1/``.  Rebuilding those names from
the eager call tree places every call; its output is the output of the last
(non-Constant) node in its own scope or a descendant's.

The dynamo exporter (torch >= 2.5) names values after the torch.export
graph's nodes (``relu_1``, ``getitem_3``) and writes each node's module path
in its metadata_props: ``pkg.torch.onnx.name_scopes`` (``['', 'layer1',
'layer1.0', 'layer1.0.relu', 'relu_1']``: the module paths, then the graph
node), beside ``pkg.torch.onnx.class_hierarchy``, ``namespace``,
``pkg.torch.onnx.fx_node`` and ``pkg.torch.onnx.stack_trace``.  Two things
it does not write: which *call* of a module a node belongs to (both ReLU calls
of a ResNet block have the scope ``layer1.0.relu``), and anything at all on
the nodes its optimizer rewrote (a Conv with a BatchNorm folded in).  The
exported program's ``nn_module_stack`` has both (``layer1.0.relu@1`` for the
second call), keyed by the graph node whose name the ONNX value carries, so
DynamoScopes takes a node's scope from there when the export handed it over,
and from the metadata otherwise.

Calls that left no node of their own are resolved through the data flow:
* output equal to the input (eval Dropout, Identity): the value of the input;
  when that input comes from a functional call (``F.relu`` in the parent's
  forward), the one value the parent's own nodes made between the calls
  before and after it;
* a BatchNorm whose input is a Conv's output: in EVAL mode the exporter folds
  BatchNorm into the Conv's weights, so the Conv node's output *is* the
  BatchNorm's output: the value belongs to the BatchNorm and the Conv is
  recorded as fused into it (its own pre-BatchNorm output exists nowhere in
  the graph).  The legacy exporter leaves the fused node in the Conv's scope,
  the dynamo exporter's optimizer in the BatchNorm's: either way the pair is
  recorded the same;
* MultiheadAttention's out_proj, which it applies without calling it: the
  recorder derives its output from the attention's (a derived call), mapped
  to the last Gemm with a weight initializer in the attention's own scope;
* anything else was folded away and stays unmapped, with the reason.

A mapping is kept only when it is unambiguous: scopes the graph has but the
eager forward never entered (a fast path, a data-dependent branch), modules
called more often than their scopes appear, several modules claiming one
value with different eager outputs, or a dtype/shape that disagrees with ONNX
shape inference all leave the module unmapped with the reason.
"""
import ast
from collections import defaultdict

import onnx
import torch

from ._tensors import bitwise_equal


class LegacyScopes:
    method = "legacy-scope-names"

    @staticmethod
    def segment(path):
        atoms = path.split(".")
        for i in range(len(atoms) - 1, -1, -1):
            if not atoms[i].isnumeric():
                return ".".join(atoms[i:])
        return path

    def raw(self, parent_raw, path):
        return "" if path == "" else f"{parent_raw}/{self.segment(path)}"

    @staticmethod
    def variant(raw, k):
        return raw if k == 0 else f"{raw}_{k}"

    @staticmethod
    def node_scope(node):
        if "/" not in node.name:
            return None
        return node.name.rsplit("/", 1)[0]

    @staticmethod
    def under(scope, raw):
        return scope.startswith(raw + "/")

    def node_scopes(self, nodes):
        return [self.node_scope(n) for n in nodes]


NAME_SCOPES = "pkg.torch.onnx.name_scopes"


def scope_of_module_stack(stack):
    """The scope of a torch.export node from its ``nn_module_stack``
    ({key: (module path, class)}, outermost first): the innermost module's
    path, with ``@K`` for its call K > 0 as torch writes it in the key
    (``L__self__layer1.0.relu@1``).  None for an empty stack."""
    if not stack:
        return None
    key, val = list(stack.items())[-1]
    path = val[0] if isinstance(val, (tuple, list)) and val else ""
    path = "" if path in ("", "L__self__") else str(path)
    call = 0
    tail = str(key).rsplit("@", 1)
    if len(tail) == 2 and tail[1].isdigit():
        call = int(tail[1])
    return path if call == 0 else f"{path}@{call}"


class DynamoScopes:
    """torch >= 2.5 (dynamo=True).  ``value_scopes`` ({ONNX value name: scope},
    from the exported program's nn_module_stack, see scope_of_module_stack)
    places a node by its first output; a node without an entry is placed by
    its ``pkg.torch.onnx.name_scopes`` metadata (['', 'layer1', 'layer1.0',
    ..., graph node]: the path is the second last), taking the call number of
    the next node of the same path that has one."""
    method = "dynamo-module-stack"

    def __init__(self, value_scopes=None):
        self.value_scopes = dict(value_scopes or {})

    def raw(self, parent_raw, path):
        return path

    @staticmethod
    def variant(raw, k):
        return raw if k == 0 else f"{raw}@{k}"

    @staticmethod
    def base(scope):
        head, _, k = scope.rpartition("@")
        return head if head and k.isdigit() else scope

    @staticmethod
    def metadata_path(node):
        """The module path in the node's name_scopes metadata, or None (no
        metadata, or a node the exporter made outside any module)."""
        for p in getattr(node, "metadata_props", ()):  # onnx >= 1.16
            if p.key == NAME_SCOPES:
                try:
                    scopes = ast.literal_eval(p.value)
                except (ValueError, SyntaxError):
                    return None
                if isinstance(scopes, (list, tuple)) and len(scopes) >= 2 and scopes[0] == "":
                    return str(scopes[-2])
                return None
        return None

    def node_scope(self, node):
        out = node.output[0] if len(node.output) else None
        if out in self.value_scopes:
            return self.value_scopes[out]
        return self.metadata_path(node)

    def node_scopes(self, nodes):
        got = [self.value_scopes.get(n.output[0]) if len(n.output) else None for n in nodes]
        meta = [self.metadata_path(n) for n in nodes]
        ahead = {}  # metadata path -> the scope with call number of the next node that has one
        for i in range(len(nodes) - 1, -1, -1):
            if got[i] is not None:
                ahead[self.base(got[i])] = got[i]
            elif meta[i] is not None:
                got[i] = ahead.get(meta[i], meta[i])
        return got

    @classmethod
    def under(cls, scope, raw):
        return raw == "" or cls.base(scope).startswith(cls.base(raw) + ".")


class Call:
    __slots__ = ("index", "path", "module", "parent", "children", "start", "end", "raw", "call_no",
                 "output", "out_kind", "out_id", "in_id", "equal_to_input", "derived",
                 "in_version", "out_version")

    def __init__(self):
        self.derived = None  # why a call no hook saw was recorded (see Recorder._derive_out_proj)
        self.children = []
        self.output = None
        self.out_kind = None
        self.out_id = None
        self.in_id = None
        self.in_version = self.out_version = None  # tensor._version: an in-place op between shows
        self.end = None
        self.equal_to_input = False


def _first_tensor(xs):
    for x in xs:
        if isinstance(x, torch.Tensor):
            return x
    return None


def _single_tensor(out):
    """The one tensor a module returned, and a word for what it returned."""
    if isinstance(out, torch.Tensor):
        return out, "tensor"
    if isinstance(out, (tuple, list)):
        ts = [x for x in out if isinstance(x, torch.Tensor)]
        others = [x for x in out if x is not None and not isinstance(x, torch.Tensor)]
        if len(ts) == 1 and not others:
            return ts[0], "tensor"
        return None, f"{type(out).__name__} of {len(out)}"
    return None, type(out).__name__


def _compiling():
    """Whether torch.compile's tracer is running the hook: torch.cond (and
    torch's other control-flow operators) trace their branches with it even
    in eager mode, and a hook's side effects (appending to the call list)
    stop that trace (UncapturedHigherOrderOpError).  The hooks then record
    nothing: the calls inside a branch stay unmapped."""
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(f is not None and f())


class Recorder:
    """Forward hooks on every submodule for one forward: the call tree, each
    call's output cloned (all calls, or the indices in ``keep``), and with
    ``dataflow`` the identity of each call's first input and of its output.

    ``sink(call, tensor)``, when given, is called for the kept calls instead
    of storing a clone (``call.output`` stays None): ``tensor`` is the live
    output, valid only during the call (a later in-place op may change it),
    so a sink that needs it afterwards copies it.  The float64 pass reduces
    each output to its statistics there, without a float64 copy."""

    def __init__(self, model, style, dataflow=False, keep=None, sink=None):
        self.model = model
        self.style = style
        self.dataflow = dataflow
        self.keep = keep
        self.sink = sink
        self.names = {}
        for name, m in model.named_modules():
            self.names.setdefault(id(m), name)
        self.calls, self.stack, self.refs, self.handles = [], [], [], []
        self.seq = 0
        self.counts = defaultdict(int)

    def __enter__(self):
        for m in self.model.modules():
            try:
                pre = m.register_forward_pre_hook(self._pre)
            except (RuntimeError, AttributeError, TypeError):  # a ScriptModule refuses hooks
                continue
            self.handles.append(pre)
            try:
                self.handles.append(m.register_forward_hook(self._post))
            except (RuntimeError, AttributeError, TypeError):
                pre.remove()
                self.handles.pop()
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []
        self.refs = []
        return False

    def _pre(self, module, inputs):
        if _compiling():
            return None
        path = self.names.get(id(module))
        if path is None:
            return None
        c = Call()
        c.index = len(self.calls)
        c.path = path
        c.module = module
        parent = self.stack[-1] if self.stack else None
        c.parent = parent.index if parent is not None else None
        if parent is not None:
            parent.children.append(c.index)
        c.raw = self.style.raw(parent.raw if parent is not None else "", path)
        c.call_no = self.counts[path]
        self.counts[path] += 1
        c.start = self.seq
        self.seq += 1
        t = _first_tensor(inputs)
        if t is not None:
            c.in_id = id(t)
            c.in_version = getattr(t, "_version", None)
            if self.dataflow:
                self.refs.append(t)
        self.calls.append(c)
        self.stack.append(c)
        return None

    def _post(self, module, inputs, output):
        if _compiling() or id(module) not in self.names or not self.stack or self.stack[-1].module is not module:
            return None
        c = self.stack.pop()
        if isinstance(module, torch.nn.MultiheadAttention):
            self._derive_out_proj(c, module, output)
        c.end = self.seq
        self.seq += 1
        t, c.out_kind = _single_tensor(output)
        if t is not None:
            c.out_id = id(t)
            c.out_version = getattr(t, "_version", None)
            if self.keep is None or c.index in self.keep:
                self._store(c, t)
            if self.dataflow:
                self.refs.append(t)
                i = _first_tensor(inputs)
                c.equal_to_input = i is not None and (
                    i is t or (i.shape == t.shape and i.dtype == t.dtype and torch.equal(i, t)))
        return None


    def _derive_out_proj(self, c, mha, output):
        """MultiheadAttention applies out_proj's weights itself
        (F.multi_head_attention_forward), so no hook sees out_proj.  Its output
        is the attention output before MultiheadAttention's final view (and
        transpose, batch_first): recorded as a call of out_proj inside the
        MultiheadAttention call, marked ``derived``."""
        proj = getattr(mha, "out_proj", None)
        path = self.names.get(id(proj)) if proj is not None else None
        if path is None or any(self.calls[i].path == path for i in c.children):
            return
        t = output[0] if isinstance(output, (tuple, list)) and output else output
        if not isinstance(t, torch.Tensor) or t.dim() != 3:
            return
        d = Call()
        d.index, d.path, d.module, d.parent = len(self.calls), path, proj, c.index
        c.children.append(d.index)
        d.raw = self.style.raw(c.raw, path)
        d.call_no = self.counts[path]
        self.counts[path] += 1
        d.start, d.end = self.seq, self.seq + 1
        self.seq += 2
        d.out_kind = "tensor"
        d.derived = "MultiheadAttention's attention output before its final view"
        if self.keep is None or d.index in self.keep:
            seq_first = t.transpose(0, 1) if mha.batch_first else t
            self._store(d, seq_first.reshape(-1, t.shape[-1]))
        self.calls.append(d)

    def _store(self, c, t):
        if self.sink is not None:
            self.sink(c, t.detach())
        else:
            c.output = t.detach().clone()


_ONNX_DTYPES = {
    torch.float32: onnx.TensorProto.FLOAT, torch.float64: onnx.TensorProto.DOUBLE,
    torch.float16: onnx.TensorProto.FLOAT16, torch.bfloat16: onnx.TensorProto.BFLOAT16,
    torch.int64: onnx.TensorProto.INT64, torch.int32: onnx.TensorProto.INT32,
    torch.int16: onnx.TensorProto.INT16, torch.int8: onnx.TensorProto.INT8,
    torch.uint8: onnx.TensorProto.UINT8, torch.bool: onnx.TensorProto.BOOL,
}


# initializers above this size go to shape inference without their values
_TYPE_ONLY_BYTES = 4096


def _without_weights(model_proto):
    """A shallow model for shape inference: the graph's nodes, inputs,
    outputs and value_info, small initializers as they are, and the larger
    ones as dims and type only.  Inference reads a constant's values only
    where they decide a shape (Reshape's shape, Slice's starts: small
    integer tensors); handing it the weights costs a copy of the whole model
    through the C++ boundary (0.19 s for resnet18, against 0.01 s)."""
    m = onnx.ModelProto()
    m.ir_version = model_proto.ir_version
    m.opset_import.extend(model_proto.opset_import)
    m.functions.extend(model_proto.functions)  # local functions (dynamo) define node types
    src, g = model_proto.graph, m.graph
    g.node.extend(src.node)
    g.input.extend(src.input)
    g.output.extend(src.output)
    g.value_info.extend(src.value_info)
    g.sparse_initializer.extend(src.sparse_initializer)
    for init in src.initializer:
        if init.ByteSize() <= _TYPE_ONLY_BYTES:
            g.initializer.append(init)
        else:
            t = g.initializer.add()
            t.name, t.data_type = init.name, init.data_type
            t.dims.extend(init.dims)
    return m


def value_types(model_proto):
    """{value name: (elem_type, [dim or None])} from ONNX shape inference
    (the legacy exporter writes no value_info for intermediates), run on the
    graph without its weights (_without_weights)."""
    try:
        g = onnx.shape_inference.infer_shapes(_without_weights(model_proto)).graph
    except Exception:  # shape inference is a check, not a requirement
        g = model_proto.graph
    types = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            continue
        dims = None
        if tt.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        types[vi.name] = (tt.elem_type, dims)
    return types


def _type_problem(t, typ):
    elem, dims = typ
    want = _ONNX_DTYPES.get(t.dtype)
    if elem and want is not None and elem != want:
        return (f"dtype differs: ONNX {onnx.TensorProto.DataType.Name(elem).lower()}, "
                f"eager {str(t.dtype).replace('torch.', '')}")
    if dims is not None:
        if len(dims) != t.dim():
            return f"rank differs: ONNX {len(dims)}, eager {t.dim()}"
        for d, (a, b) in enumerate(zip(dims, t.shape)):
            if a is not None and a != b:
                return f"dim {d} differs: ONNX {a}, eager {b}"
    return None


def _is_bn(m):
    return isinstance(m, torch.nn.modules.batchnorm._BatchNorm)


def _is_conv(m):
    return isinstance(m, torch.nn.modules.conv._ConvNd)


class Mapping:
    """Result of build(): per call its value (or the reason it has none)."""

    def __init__(self, calls, method):
        self.calls = calls
        self.method = method
        self.value = {}       # call index -> ONNX value name
        self.kind = {}        # call index -> scope | identity | fused | fused-into
        self.source = {}      # call index -> call whose eager output the value holds
        self.reason = {}      # call index -> why unmapped
        self.primary = {}     # value -> call index whose eager output is saved for it
        self.paths_differ = False  # the graph has scopes the eager forward never entered

    def entries(self, leaf_paths):
        out = []
        for c in self.calls[1:]:
            e = {"module": c.path, "call": c.call_no, "type": type(c.module).__name__,
                 "leaf": c.path in leaf_paths, "value": self.value.get(c.index),
                 "kind": self.kind.get(c.index)}
            if c.index in self.value:
                src = self.source[c.index]
                if src != c.index:
                    e["holds_output_of"] = self.calls[src].path
            else:
                e["reason"] = self.reason.get(c.index, "unmapped")
            out.append(e)
        return out


def _own_nodes(nodes, scopes):
    """The scopes the graph's nodes carry (``present``), and per scope the
    index of its first and last node that makes a value (Constants aside)."""
    present = set()
    own_last = {}
    own_first = {}
    for i, (n, s) in enumerate(zip(nodes, scopes)):
        if s is None:
            continue
        present.add(s)
        if n.op_type != "Constant" and n.output:
            own_last[s] = i
            own_first.setdefault(s, i)
    return present, own_first, own_last


def _place_calls(m, calls, style, present):
    """Place every call on a scope of the graph: the k-th call of a scope path
    owns variant k.  Returns (variant, problem): call index -> its scope, and
    call index -> why it cannot be placed (the calls repeated ambiguously, or
    the graph holds scopes inside it that the eager forward never entered;
    those set m.paths_differ)."""
    by_raw = defaultdict(list)
    for c in calls[1:]:
        by_raw[c.raw].append(c)
    variant = {}
    problem = {}
    known = {""}
    for raw, cs in by_raw.items():
        ks = [k for k in range(len(cs) + 1) if style.variant(raw, k) in present]
        known.update(style.variant(raw, k) for k in ks)
        if not ks:
            continue
        if ks == list(range(len(cs))):
            for k, c in enumerate(cs):
                variant[c.index] = style.variant(raw, k)
        elif len(cs) in ks:
            m.paths_differ = True
            for c in cs:
                problem[c.index] = (f"the graph has more scopes {raw!r} than the eager forward made "
                                    f"calls ({len(cs)}): the export traced a different path")
        else:
            for c in cs:
                problem[c.index] = (f"called {len(cs)} times but {len(ks)} of the calls left nodes; "
                                    "which ones is ambiguous")
    foreign = sorted(present - known)
    for c in calls[1:]:
        if c.index in problem:
            continue
        bad = [s for s in foreign if style.under(s, c.raw)]
        if bad:
            m.paths_differ = True
            more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
            problem[c.index] = ("the export traced scopes inside it that the eager forward never entered ("
                                + ", ".join(bad[:3]) + more + "): eager and export took different paths "
                                "(a fast path or a data-dependent branch)")
    return variant, problem


def _subtree_spans(calls, variant, own_first, own_last, problem):
    """The first and last node of each call's subtree (its own scope's and
    its descendants'): (first, last), call index -> node index or None.  A
    placement problem inside a call spreads up to it (added to ``problem``)."""
    last, first = {}, {}
    for c in reversed(calls):
        best = own_last.get(variant.get(c.index), None) if c.index in variant else None
        early = own_first.get(variant.get(c.index), None) if c.index in variant else None
        for ch in c.children:
            if ch in problem and c.index not in problem and c.index != 0:
                problem[c.index] = f"submodule {calls[ch].path!r} inside it could not be placed"
            lc = last.get(ch)
            if lc is not None and (best is None or lc > best):
                best = lc
            fc = first.get(ch)
            if fc is not None and (early is None or fc < early):
                early = fc
        last[c.index] = best
        first[c.index] = early
    return first, last


def _resolve_calls(m, calls, nodes, ctx, inits, problem, last, input_ids):
    """Give each call its value in m (value, kind, source) or its reason,
    walking the calls in time order: a call that left nodes takes its
    subtree's last output; one that left none is resolved through the data
    flow (the value of its input, a projection, a BatchNorm folded into the
    Conv before it).  Producers: id(tensor) -> (value, call index), seeded
    with the graph inputs (``input_ids``)."""
    producers = {k: (v, None) for k, v in input_ids.items()}
    events = []
    for c in calls[1:]:
        events.append((c.start, c))
        if c.end is not None:
            events.append((c.end, c))
    events.sort(key=lambda e: e[0])
    for seq, c in events:
        i = c.index
        if seq == c.end:
            if i in m.value and c.out_id is not None:
                producers[c.out_id] = (m.value[i], i)
            continue
        if c.end is None:
            m.reason[i] = "the forward did not return from it"
        elif i in problem:
            m.reason[i] = problem[i]
        elif c.out_kind != "tensor":
            m.reason[i] = f"returns {c.out_kind}, not one tensor"
        elif last[i] is not None:
            m.value[i] = nodes[last[i]].output[0]
            m.kind[i] = "scope"
            m.source[i] = i
        elif c.derived is not None:
            v = ctx.last_projection(c, inits)
            if v is not None:
                m.value[i], m.kind[i], m.source[i] = v, "derived", i
            else:
                m.reason[i] = (f"not called as a module ({c.derived} is its output), and its "
                               "MultiheadAttention's nodes end in no Gemm with a weight initializer")
        else:
            _resolve_nodeless(m, calls, ctx, c, producers.get(c.in_id))


def _resolve_nodeless(m, calls, ctx, c, prod):
    """A call that returned one tensor and left no node of its own: its
    input's value when it passes the input through, the Conv's when it is a
    BatchNorm folded into it; else why it has none.  ``prod``: its input's
    (value, call index), None when no module call made the input."""
    i = c.index
    between, why = ctx.parent_value_before(c) if prod is None and c.equal_to_input else (None, None)
    if between is not None:
        m.value[i], m.kind[i], m.source[i] = between, "identity", i
    elif prod is None and c.equal_to_input:
        m.reason[i] = why or ("no ONNX node (it passes its input through) and its input comes "
                              "from a functional call, not a module, so there is no value to name")
    elif prod is None:
        m.reason[i] = "no ONNX node: folded away by the exporter"
    elif c.equal_to_input:
        m.value[i], m.kind[i], m.source[i] = prod[0], "identity", i
    elif (_is_bn(c.module) and prod[1] is not None and _is_conv(calls[prod[1]].module)
          and m.kind.get(prod[1]) == "scope" and m.value.get(prod[1]) == prod[0]):
        p = prod[1]
        m.value[i], m.kind[i], m.source[i] = prod[0], "fused", i
        m.kind[p], m.source[p] = "fused-into", i
    else:
        m.reason[i] = "no ONNX node of its own: its computation was folded into its neighbours"


def _choose_primaries(m, calls, nodes, variant, last, own_last, types):
    """One eager tensor per value (m.primary): the call whose own node made
    it, the fused BatchNorm, else the first.  Others claiming the value must
    agree bit for bit, and the tensor must fit the value's ONNX type, or the
    calls lose the value (with the reason)."""
    claims = defaultdict(list)
    for i, v in m.value.items():
        if m.source[i] == i:
            claims[v].append(i)
    for v, idx in claims.items():
        fused = [i for i in idx if m.kind[i] == "fused"]
        owner = [i for i in idx if variant.get(i) is not None and last[i] is not None
                 and nodes[last[i]].output[0] == v and own_last.get(variant[i]) == last[i]]
        primary = (fused or owner or sorted(idx))[0]
        t = calls[primary].output
        why = _type_problem(t, types[v]) if (t is not None and v in types) else None
        if t is None:
            why = "no eager output recorded"
        for i in idx:
            if why is None and i != primary and not bitwise_equal(calls[i].output, t):
                _unmap(m, i, f"its value {v} also holds {calls[primary].path!r}'s output, which "
                             "differs from this module's eager output")
        if why is not None:
            for i in list(m.value):
                if m.value.get(i) == v:
                    _unmap(m, i, f"value {v} does not fit the eager output: {why}")
            continue
        m.primary[v] = primary


def build(calls, model_proto, style, input_ids, types):
    """The Mapping of a recorded call tree onto the exported graph: place
    each call on its scope, take the last value of each call's subtree,
    resolve the calls that left no node through the data flow, then choose
    one eager tensor per value.  ``style``: LegacyScopes or DynamoScopes;
    ``input_ids``: id(input tensor) -> graph input name; ``types``: value ->
    its ONNX type (value_types)."""
    nodes = list(model_proto.graph.node)
    m = Mapping(calls, style.method)
    scopes = style.node_scopes(nodes)
    present, own_first, own_last = _own_nodes(nodes, scopes)
    variant, problem = _place_calls(m, calls, style, present)
    first, last = _subtree_spans(calls, variant, own_first, own_last, problem)
    ctx = _Placed(calls, nodes, scopes, variant, first, last)
    inits = {i.name for i in getattr(model_proto.graph, "initializer", ())}
    _resolve_calls(m, calls, nodes, ctx, inits, problem, last, input_ids)
    _fuse_rewritten_conv_bn(m, calls, nodes)
    _choose_primaries(m, calls, nodes, variant, last, own_last, types)
    return m


class _Placed:
    """Where the calls landed in the graph, for the identity rule: the node
    index range each call's subtree spans (first, last) and each node's scope."""

    def __init__(self, calls, nodes, scopes, variant, first, last):
        self.calls, self.nodes, self.scopes = calls, nodes, scopes
        self.variant, self.first, self.last = variant, first, last

    def parent_value_before(self, c):
        """For a pass-through call whose input no module made: (value, None),
        or (None, why not).  The candidates are the non-Constant nodes of the
        parent's own scope after every node of the calls that returned before
        it and before every node of the call that starts next (``nxt``): the
        functional ops between, in graph order.  When ``nxt`` takes the
        pass-through's output as its input (``x = self.drop(F.relu(x));
        x = self.fc(x)``), its value is the last candidate, the one feeding
        ``nxt``.  When it does not (or takes that tensor changed in place since,
        as RepVGG's ``x = self.drop_path(x); x += identity``: the tensor's
        version counter moved), the parent computed more after the call
        (``x = x + self.drop_path(f(x).transpose(1, 2))``, a residual): the
        last candidate is that later sum, and the value is the one candidate
        that the others consume; with several, the one term made between the
        calls of a final Add whose other term comes from before them (the
        residual); else ambiguous, unmapped."""
        if c.parent is None or c.parent == 0 or c.parent not in self.variant:
            return None, None
        scope = self.variant[c.parent]
        lo, hi, nxt = -1, None, None
        for d in self.calls[1:]:
            if d.end is not None and d.end < c.start and self.last.get(d.index) is not None:
                lo = max(lo, self.last[d.index])
            if d.start > c.end and self.first.get(d.index) is not None and (nxt is None or d.start < nxt.start):
                nxt = d
        if nxt is None:
            return None, None
        hi = self.first[nxt.index]
        cand = [self.nodes[i] for i in range(lo + 1, hi)
                if self.scopes[i] == scope and self.nodes[i].op_type != "Constant" and len(self.nodes[i].output)]
        if not cand:
            return None, None
        if nxt.in_id is not None and nxt.in_id == c.out_id and nxt.in_version == c.out_version:
            return cand[-1].output[0], None  # nxt takes the pass-through's output, unchanged
        used = {x for n in cand for x in n.input}
        inner = [n.output[0] for n in cand[:-1] if n.output[0] in used]
        if len(inner) == 1:
            return inner[0], None
        made = {n.output[0] for n in cand}
        last = cand[-1]
        summed = [x for x in last.input if x in made]
        if last.op_type in ("Add", "Sum") and len(summed) == 1 and len(last.input) > len(summed):
            return summed[0], None  # a residual: the other term comes from before the calls
        if not inner:
            return None, ("no ONNX node (it passes its input through); the parent's nodes after it "
                          "do not use a value made between the calls around it, so none is its output")
        return None, (f"no ONNX node (it passes its input through), and the parent's functional ops "
                      f"around it make {len(inner)} values it could be ({', '.join(inner[:3])}): "
                      "which one is ambiguous")

    def last_projection(self, c, inits):
        """For MultiheadAttention's derived out_proj call: the output of the
        last Gemm of the attention module's own scope that takes a weight
        initializer (the out projection comes after the attention itself;
        the exporter may share one initializer between identical layers, so
        names do not tell).  None when there is none."""
        scope = self.variant.get(c.parent)
        lo, hi = self.first.get(c.parent), self.last.get(c.parent)
        if scope is None or lo is None or hi is None:
            return None
        for i in range(hi, lo - 1, -1):
            n = self.nodes[i]
            if self.scopes[i] == scope and n.op_type == "Gemm" and len(n.input) > 1 and n.input[1] in inits:
                return n.output[0]
        return None


def _fuse_rewritten_conv_bn(m, calls, nodes):
    """A BatchNorm whose own node is a Conv: the exporter's optimizer folded the
    Conv feeding it into it (dynamo) and named the fused node after the
    BatchNorm.  The Conv call, left without a node, is fused into it."""
    made_by = {o: n for n in nodes for o in n.output}
    for c in calls[1:]:
        j = c.index
        if not _is_bn(c.module) or m.kind.get(j) != "scope" or c.in_id is None:
            continue
        n = made_by.get(m.value[j])
        if n is None or n.op_type != "Conv":
            continue
        for p in calls[1:]:
            if (p.index not in m.value and _is_conv(p.module) and p.out_id == c.in_id
                    and p.end is not None and p.end <= c.start):
                m.value[p.index], m.kind[p.index], m.source[p.index] = m.value[j], "fused-into", j
                m.reason.pop(p.index, None)
                m.kind[j] = "fused"


def _unmap(m, i, why):
    m.value.pop(i, None)
    m.kind.pop(i, None)
    m.source.pop(i, None)
    m.reason[i] = why
    for j, src in list(m.source.items()):  # a Conv fused into an unmapped BatchNorm goes too
        if src == i and j != i:
            _unmap(m, j, f"fused into {m.calls[i].path!r}, which is unmapped")


def leaf_summary(model, m):
    leaves = [(n, mod) for n, mod in model.named_modules() if n and not any(True for _ in mod.children())]
    by_path = defaultdict(list)
    for c in m.calls[1:]:
        by_path[c.path].append(c.index)
    mapped, exact, unmapped, fused = 0, 0, [], []
    for name, mod in leaves:
        idx = by_path.get(name, [])
        if not idx:
            unmapped.append({"module": name, "type": type(mod).__name__,
                             "reason": "never called during the forward"})
            continue
        kinds = [m.kind[i] for i in idx if i in m.value]
        if kinds:
            mapped += 1
            if any(k != "fused-into" for k in kinds):
                exact += 1
            else:
                into = m.calls[m.source[idx[0]]].path if idx[0] in m.source else None
                fused.append({"module": name, "type": type(mod).__name__, "fused_into": into})
        else:
            unmapped.append({"module": name, "type": type(mod).__name__,
                             "reason": m.reason.get(idx[0], "unmapped")})
    n = len(leaves)
    called = n - sum(1 for u in unmapped if u["reason"] == "never called during the forward")
    return {"method": m.method, "leaf_modules": n, "leaf_called": called,
            "leaf_mapped": mapped, "leaf_mapped_own_value": exact,
            "rate": round(mapped / n, 4) if n else None, "rate_called": round(mapped / called, 4)
            if called else None, "fused": fused, "unmapped": unmapped}


def _forward_lines(cls):
    """(file, first line, last line) of a module class's own forward, or None."""
    import inspect
    fn = cls.__dict__.get("forward")
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return code.co_filename, first, first + len(lines) - 1


def name_warning_modules(model, warnings_doc):
    """Adds ``modules`` to each warning record whose file:line lies in the
    forward of a module class of `model` (the class's own forward or one it
    inherits): the paths of the modules of that class, model order ("" is the
    model itself).  A warning raised in a helper the forward calls names no
    module.  The branch a TracerWarning reports left no node of its own; the
    module whose forward holds it is what bisect and the causes can name."""
    spans = {}
    for path, mod in model.named_modules():
        for cls in type(mod).__mro__:
            if cls in (torch.nn.Module, object):
                break
            if cls not in spans:
                spans[cls] = _forward_lines(cls)
            s = spans[cls]
            if s is None:
                continue
            for w in warnings_doc:
                if w.get("file") == s[0] and isinstance(w.get("line"), int) and s[1] <= w["line"] <= s[2]:
                    w.setdefault("modules", [])
                    if path not in w["modules"]:
                        w["modules"].append(path)
    return warnings_doc
