"""The tests' own view of a bundle for the chain and float16 tests: its
fixtures as arrays, and the export's values beyond float16's range (the
onnxruntime Python package, float32).  Imported by tests that have already
skipped without onnx, onnxruntime and numpy."""
import pathlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

F16_MAX = 65504.0


def fixtures(bundle):
    """[(feeds by position, expected outputs)] of the bundle's fixtures."""
    out = []
    for d in sorted(pathlib.Path(bundle).glob("test_data_set_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])):
        ins = sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        outs = sorted(d.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        load = lambda p: numpy_helper.to_array(onnx.load_tensor(str(p)))  # noqa: E731
        out.append(([load(p) for p in ins], [load(p) for p in outs]))
    return out


def beyond_float16(model_path, bundle):
    """[(value, node)] in node order: the export's float node outputs whose
    magnitude exceeds float16's largest finite value (65504) on some fixture
    of the bundle."""
    m = onnx.shape_inference.infer_shapes(onnx.load(str(model_path)))
    floats = {v.name: v for v in m.graph.value_info if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    order = [(o, n) for n in m.graph.node for o in n.output if o in floats]
    m.graph.output.extend(floats[o] for o, _ in order)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    big = set()
    for ins, _ in fixtures(bundle):
        got = s.run([o for o, _ in order], dict(zip(names, ins)))
        big |= {o for (o, _), g in zip(order, got) if np.max(np.abs(g)) > F16_MAX}
    return [(o, n) for o, n in order if o in big]
