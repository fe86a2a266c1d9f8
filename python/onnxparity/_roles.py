"""Which outputs are a classifier's logits (docs/compare.md, "Which outputs
are logits").  A top-1 label compared between eager and ONNX Runtime, and
the adequacy report's classes and decision boundaries, mean something only
for a score per class; box coordinates [300, 4] or a backbone's features
[N, 768] have the shape [N, C] too.  The capture decides once, from what it
alone has together (the dtype and shape of each output, its name, and the
exported graph: what makes the output and what uses it), and records the
answer with its reason in parity.json (adequacy.output_roles); check's
``--top-k auto`` reads it.

An output is logits when
  1. it is floating and shaped [N, C] with C >= 2; and
  2. its name does not say it holds something else (a word of NOT_WORDS:
     boxes, coordinates, keypoints, masks, embeddings, features, hidden
     states ...); and
  3. the graph does not make it by selecting among other values (a node of
     SELECTING_OPS: TopK, Gather*, Concat, Slice, NonMaxSuppression ...,
     seen through the nodes of PASSING_OPS that only reshape or cast) —
     unless a softmax-like node (SOFTMAX_OPS) makes or uses it, which makes
     it logits whatever else holds.
Otherwise it is not, and the reason says which test decided.  Without a
graph the first two tests decide.
"""
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

# words of an output's name that say it holds something other than class scores
NOT_WORDS = frozenset("""box boxes bbox bboxes coord coords coordinates landmark landmarks keypoint
keypoints mask masks offset offsets delta deltas anchor anchors embedding embeddings embeds feature
features hidden state states pooler depth flow regression""".split())
# nodes that make a value by picking or assembling parts of other values
SELECTING_OPS = frozenset("""TopK Gather GatherElements GatherND Concat Slice Split NonMaxSuppression
NonZero Where ScatterND ScatterElements RoiAlign""".split())
# nodes that keep the values of their input as they are
PASSING_OPS = frozenset("Identity Reshape Flatten Squeeze Unsqueeze Cast".split())
# a score per class: normalised over the classes, or consumed as a decision
SOFTMAX_OPS = frozenset("Softmax LogSoftmax ArgMax".split())
FLOAT_DTYPES = frozenset(["float32", "float64", "float16", "bfloat16"])


def _words(name: str) -> set:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def _maker(made_by: Dict[str, Any], value: str) -> Any:
    """The node that makes ``value``, looking through PASSING_OPS."""
    n = made_by.get(value)
    seen = 0
    while n is not None and n.op_type in PASSING_OPS and n.input and seen < 64:
        n = made_by.get(n.input[0])
        seen += 1
    return n


def role(name: str, dtype: str, shape: Sequence[int], graph: Any = None) -> Tuple[bool, str]:
    """(logits, why) for one output: ``dtype`` a dtype name (float32 ...),
    ``shape`` its dims in a fixture, ``graph`` the exported GraphProto or None."""
    if dtype not in FLOAT_DTYPES or len(shape) != 2 or shape[1] < 2:
        return False, f"not a floating [N, C] output with C >= 2 ({dtype} {list(shape)})"
    said = sorted(_words(name) & NOT_WORDS)
    if said:
        return False, f"its name says {said[0]!r}, not class scores"
    if graph is None:
        return True, "floating [N, C], no graph to look at"
    made_by = {o: n for n in graph.node for o in n.output}
    users = [n for n in graph.node if name in n.input]
    m = _maker(made_by, name)
    if (m is not None and m.op_type in SOFTMAX_OPS) or any(u.op_type in SOFTMAX_OPS for u in users):
        return True, "a softmax-like node makes or uses it"
    if m is not None and m.op_type in SELECTING_OPS:
        return False, (f"made by {m.op_type} ({m.name}): a selection of other values, not a score "
                       "per class")
    return True, f"floating [N, C] made by {m.op_type if m is not None else 'a graph input'}"


def roles(model_path: Optional[Any], outputs: Sequence[Tuple[str, str, Sequence[int]]]) -> List[Dict[str, Any]]:
    """[{name, logits, why}] for ``outputs`` ([(name, dtype, shape)]) of the
    model at ``model_path`` (its graph read without external data; None: no
    graph)."""
    graph = None
    if model_path is not None:
        try:
            import onnx
            graph = onnx.load(str(model_path), load_external_data=False).graph
        except Exception:  # an unreadable model: the name and shape tests alone
            graph = None
    out = []
    for name, dtype, shape in outputs:
        logits, why = role(name, dtype, shape, graph)
        out.append({"name": name, "logits": logits, "why": why})
    return out
