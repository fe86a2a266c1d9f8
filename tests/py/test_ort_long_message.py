"""ONNX Runtime's refusal reaches the user with its reason, however long.

onp_error holds 767 bytes of message; ORT's text can be longer (OpenVINO's
compiler errors, a node or op name quoted whole), and the reason sits at its
end.  A message that does not fit keeps its head and its tail around
" ... (K bytes cut) ... " (src/ort/ort.c), in the tool's one error line
(docs/cli.md), through the worker process as well as without it."""
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

TAIL = "End(-1) is not a registered function/op"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """model.onnx: one node of a custom-domain op whose name is 2,019 bytes,
    which no ORT registers; one fixture."""
    root = tmp_path_factory.mktemp("longmsg")
    op = "VeryLongOperator" + "x" * 2000 + "End"
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="n0", domain="onnxparity.long")],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("onnxparity.long", 1)])
    m.ir_version = 8
    onnx.save(m, str(root / "model.onnx"))
    d = root / "test_data_set_0"
    d.mkdir()
    x = np.ones((1, 3), np.float32)
    (d / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (d / "output_0.pb").write_bytes(numpy_helper.from_array(x, "y").SerializeToString())
    return root


@pytest.mark.parametrize("argv", [["run", "{m}"], ["run", "{m}", "--no-isolate"],
                                  ["check", "{b}", "--format", "json"]])
def test_long_ort_message_keeps_its_tail(onnxparity, bundle, argv):
    args = [a.format(m=bundle / "model.onnx", b=bundle) for a in argv]
    p = subprocess.run([onnxparity, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 4, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "CreateSession" in ln]
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("onnxparity: ") and "Load model from" in line, line
    assert line.endswith(TAIL), line[-200:]
    cut = re.search(r" \.\.\. \((\d+) bytes cut\) \.\.\. ", line)
    assert cut, line
    # what is shown plus what was cut is ORT's whole message
    shown = line.split("CreateSession [ORT_FAIL]: ", 1)[1]
    whole = len(shown) - len(cut.group(0)) + int(cut.group(1))
    assert whole == len(f"Load model from {bundle / 'model.onnx'} failed:Fatal error: "
                        f"onnxparity.long:VeryLongOperator{'x' * 2000}{TAIL}"), line
    if argv[0] == "check":
        assert p.stdout.startswith("{") and '"verdict":\t"error"' in p.stdout, p.stdout
