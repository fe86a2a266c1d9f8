"""The ONNX Runtime library of the onnxruntime Python package, for the tests
that hand it to `onnxparity chain --ort-lib` (or api.chain/fp16_search's
ort_lib): skips the test where the package has none."""
import pytest

from onnxparity import ortlib


def lib() -> str:
    """The package's libonnxruntime path; skip when it has none."""
    try:
        return str(ortlib.find()[0])
    except Exception as e:  # noqa: BLE001 - any reason means: no package library
        pytest.skip(f"no ONNX Runtime library in the onnxruntime package: {e}")
