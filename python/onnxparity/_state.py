"""The model and the inputs as given: a snapshot of everything a forward can
change, the comparison that names what it changed, and the restore.

What a snapshot holds, per module (shared modules once):
  * every parameter and buffer: the tensor object itself and a clone of its
    values (restore puts the same object back and copies the values into
    it, so references held elsewhere, an optimizer's, stay valid);
  * every plain data attribute: None, numbers, strings, tensors, and
    dicts/lists/tuples/sets of those (a cache, a step counter, a stored
    tensor), deep-copied.  torch.nn.Module's own bookkeeping and the private
    attributes of torch's own module classes are left out; an attribute
    that cannot be deep-copied is left out too.
A forward's changes are found by comparing with the snapshot bit for bit
(tensors) or by value (other data): values changed, a name rebound, an
attribute added or removed.

Fast mode (``Snapshot.fast``, set by the capture's eager loop only): a
tensor whose object, version counter, storage pointer, shape, strides and
dtype are all as recorded is taken as unchanged without reading its
values.  torch bumps the version counter on every in-place write through
the tensor or a view of it (``copy_``, ``add_``, BatchNorm's running
statistics, an optimizer step); a write past it (through ``.data``, a
numpy view, raw storage) is not seen.  So the mode is only a shortcut with
a check behind it: whoever sets it compares the whole state bit for bit
once its forwards are done (``changes(full=True)``) and, when that finds
what the shortcut missed, turns the mode off and redoes them (capture.py,
``_eager_truths``).  Reading the state bit for bit costs about a third of
a resnet18 forward; the signature, a few microseconds per tensor.

Fixtures: each forward gets copies of the fixture's tensors (``copy_fixture``);
``written`` names the inputs whose copy the forward changed.
"""
import collections
import copy

import torch

from ._fixtures import Fixture
from ._tensors import bitwise_equal

# torch.nn.Module's own attributes (hooks, flags, registries)
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_CONTAINERS = (dict, list, tuple, set, frozenset, collections.deque)


def _is_data(v, depth=0):
    if isinstance(v, _SCALARS) or (isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter)):
        return True
    if depth >= 6 or not isinstance(v, _CONTAINERS):
        return False
    items = list(v.items()) if isinstance(v, dict) else [(None, x) for x in v]
    return all(isinstance(k, _SCALARS + (tuple,)) and _is_data(x, depth + 1) for k, x in items)


def _same(a, b):
    """Equal data: tensors bit for bit, floats with NaN equal to NaN, containers
    element by element (dicts by key)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return bitwise_equal(a, b)
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple, collections.deque)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # an ambiguous comparison: call it changed
        return False


def _attribute_names(m):
    own = type(m).__module__.startswith("torch.")
    return [n for n in vars(m) if n not in _MODULE_INTERNALS and n != "training"
            and not (own and n.startswith("_"))]


def _qual(path, name):
    return f"{path}.{name}" if path else name


def _keys(m):
    """The names a module holds: its non-None parameters and buffers and
    its instance attributes.  Equal to the snapshot's, nothing was added
    (a parameter or buffer set from None to a tensor changes the first two),
    so the scan for added names can skip the module (Snapshot._added);
    what was removed or changed is found by the per-entry loops either way."""
    return ({k for k, v in m._parameters.items() if v is not None},
            {k for k, v in m._buffers.items() if v is not None}, set(vars(m)))


class _Names:
    """What one module held at the snapshot: ``keys`` (_keys), the
    parameter and buffer slots registered (None ones included), the data
    attributes snapshotted, and the attribute names whose value was not data
    (rebound to data, they count as added)."""

    __slots__ = ("keys", "param_slots", "buffer_slots", "data", "nondata")

    def __init__(self, m, data):
        self.keys = _keys(m)
        # .keys(): a ScriptModule's _parameters (an OrderedDictWrapper) does not iterate
        self.param_slots, self.buffer_slots = set(m._parameters.keys()), set(m._buffers.keys())
        self.data = data
        self.nondata = [n for n in _attribute_names(m) if n not in data]


# an attribute absent from a module's __dict__
_MISSING = object()


def _unchanged_atom(now, saved):
    """A snapshotted attribute whose live value *is* its saved deep copy is
    unchanged: deepcopy returns the object itself only for immutable atoms
    (None, numbers, strings, bytes) and tuples made of them, while tensors,
    lists, dicts, sets and deques are always copied, so a mutable value
    never passes.  Spares the value comparison of a module's configuration
    (kernel sizes, strides, flags) after every forward."""
    return now is saved


def _signature(t):
    """What fast mode reads instead of the values (see the module comment)."""
    return (t._version, t.data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)


def _slot(store, name):
    """store.get(name) for a module's _parameters or _buffers: a
    ScriptModule's (an OrderedDictWrapper) has no get()."""
    return store[name] if name in store else None


class Snapshot:
    """The state of ``model`` now.  ``changes()`` lists what differs from it,
    ``restore()`` puts it back; both may be called any number of times."""

    def __init__(self, model):
        self.fast = False  # see the module comment; changes()/restore(full=None) follow it
        self.modules = []  # (path, module)
        self.tensors = []  # (module, path, name, kind, tensor object, clone)
        self.sigs = []     # _signature of each tensor object, aligned with self.tensors
        self.attrs = []    # (module, path, name, deep copy)
        self.names = {}    # id(module) -> _Names: what it held
        self.skipped = []  # qualified names of attributes that could not be copied
        with torch.no_grad():
            for path, m in model.named_modules():
                self.modules.append((path, m))
                for kind, items in (("parameter", m.named_parameters(recurse=False)),
                                    ("buffer", m.named_buffers(recurse=False))):
                    for name, t in items:
                        self.tensors.append((m, path, name, kind, t, t.detach().clone()))
                        self.sigs.append(_signature(t))
                data = set()
                for name in _attribute_names(m):
                    v = vars(m)[name]
                    if not _is_data(v):
                        continue
                    try:
                        saved = copy.deepcopy(v)
                    except Exception:
                        self.skipped.append(_qual(path, name))
                        continue
                    self.attrs.append((m, path, name, saved))
                    data.add(name)
                self.names[id(m)] = _Names(m, data)

    def _added(self, m):
        """The names ``m`` gained since the snapshot: (parameters, buffers,
        data attributes), the first two sorted; a parameter or buffer set where None was
        registered counts as added.  When the names it holds are the
        snapshot's (_keys) and no attribute that held something else now
        holds data, nothing was added and no name is looked at one by one."""
        was = self.names[id(m)]
        now = _keys(m)
        if now == was.keys and not any(_is_data(vars(m).get(n)) for n in was.nondata if n in vars(m)):
            return (), (), ()
        attrs = [n for n in _attribute_names(m) if n not in was.data and _is_data(vars(m)[n])]
        return sorted(now[0] - was.keys[0]), sorted(now[1] - was.keys[1]), attrs

    def counts(self):
        kinds = [k for _, _, _, k, _, _ in self.tensors]
        return {"parameters": kinds.count("parameter"), "buffers": kinds.count("buffer"),
                "attributes": len(self.attrs)}

    def _untouched(self, i, now, full):
        """Fast mode's shortcut for tensor ``i``: the same object with the
        recorded signature (never when ``full``)."""
        if full is None:
            full = not self.fast
        return not full and now is self.tensors[i][4] and _signature(now) == self.sigs[i]

    def changes(self, full=None):
        """[{name, kind, how}] of what differs from the snapshot: kind
        parameter | buffer | attribute; how values | rebound | added | removed.
        ``full``: read every tensor's values (None: unless in fast mode)."""
        out = []
        for i, (m, path, name, kind, t, saved) in enumerate(self.tensors):
            store = m._parameters if kind == "parameter" else m._buffers
            now = _slot(store, name)
            if now is None:
                out.append({"name": _qual(path, name), "kind": kind, "how": "removed"})
            elif self._untouched(i, now, full):
                continue
            elif not bitwise_equal(now.detach(), saved):
                out.append({"name": _qual(path, name), "kind": kind,
                            "how": "values" if now is t else "rebound"})
        for path, m in self.modules:
            params, buffers, attrs = self._added(m)
            for kind, names in (("parameter", params), ("buffer", buffers), ("attribute", attrs)):
                out.extend({"name": _qual(path, n), "kind": kind, "how": "added"} for n in names)
        for m, path, name, saved in self.attrs:
            now = vars(m).get(name, _MISSING)
            if _unchanged_atom(now, saved):
                continue
            if now is _MISSING:
                out.append({"name": _qual(path, name), "kind": "attribute", "how": "removed"})
            elif not _same(now, saved):
                out.append({"name": _qual(path, name), "kind": "attribute", "how": "values"})
        return out

    def restore(self, full=None):
        """Put every snapshotted tensor object and value back, drop what was
        added since.  ``full``: check every tensor's values (None: unless in
        fast mode, where a tensor with its recorded signature is left as it
        is)."""
        with torch.no_grad():
            for path, m in self.modules:
                params, buffers, attrs = self._added(m)
                was = self.names[id(m)]
                for name in params:
                    if name in was.param_slots:  # registered as None (a Linear without bias)
                        m._parameters[name] = None
                    else:
                        delattr(m, name)
                for name in buffers:
                    if name in was.buffer_slots:
                        m._buffers[name] = None
                    else:
                        delattr(m, name)
                for name in attrs:
                    delattr(m, name)
            for i, (m, path, name, kind, t, saved) in enumerate(self.tensors):
                store = m._parameters if kind == "parameter" else m._buffers
                if self._untouched(i, _slot(store, name), full):
                    continue
                if _slot(store, name) is not t:
                    store[name] = t
                if t.shape != saved.shape or t.dtype != saved.dtype:
                    t.data = saved.clone()
                elif not bitwise_equal(t.detach(), saved):
                    t.copy_(saved)
                self.sigs[i] = _signature(t)  # the copy bumped the version
            for m, path, name, saved in self.attrs:
                now = vars(m).get(name, _MISSING)
                if not _unchanged_atom(now, saved) and (now is _MISSING or not _same(now, saved)):
                    setattr(m, name, copy.deepcopy(saved))


def _clone(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, tuple):
        return tuple(_clone(v) for v in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


def copy_fixture(fx):
    """A Fixture of fresh copies of ``fx``'s tensors (same nesting)."""
    return Fixture(_clone(fx.args), _clone(fx.kwargs))


def written(copied, original, names):
    """Names (aligned with the flattened inputs) of the inputs whose copy
    differs from the original: what the forward wrote to."""
    return [n for n, (_, a), (_, b) in zip(names, copied, original) if not bitwise_equal(a, b)]
