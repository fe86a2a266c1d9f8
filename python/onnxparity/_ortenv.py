"""The capturing environment's ONNX Runtime, for parity.json's
``onnxruntime`` member: the onnxruntime package ``import onnxruntime`` would
load in this interpreter (which distribution ships it: onnxruntime,
onnxruntime-gpu, onnxruntime-openvino, ...), its version, and its C library
(the path ``python -m onnxparity.ortlib`` prints and its sha256), so that a
check can tell the ORT the user deploys from the one the tool runs.

Nothing is imported (no ORT is loaded by a capture that records it).
"""
import hashlib
import importlib.metadata
import importlib.util
import pathlib
from typing import Dict, Optional, Union

from . import ortlib


def _distribution_of(package_dir: pathlib.Path) -> Optional[str]:
    """The name of the installed distribution whose files hold
    package_dir/__init__.py, or None."""
    names = importlib.metadata.packages_distributions().get("onnxruntime", [])
    for name in dict.fromkeys(names):
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        init = pathlib.Path(str(dist.locate_file("onnxruntime/__init__.py")))
        if init.resolve() == (package_dir / "__init__.py").resolve():
            return dist.metadata["Name"]
    return None


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def describe() -> Optional[Dict[str, Union[str, None]]]:
    """{"package", "version", "library", "library_sha256"} of this
    environment's onnxruntime, "library"/"library_sha256" None (and "note"
    saying why) when the package ships no C library; None without any
    onnxruntime package."""
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    package_dir = pathlib.Path(list(spec.submodule_search_locations)[0])
    name = _distribution_of(package_dir)
    version: Optional[str] = None
    if name:
        version = importlib.metadata.version(name)
    doc: Dict[str, Union[str, None]] = {"package": name, "version": version, "library": None,
                                        "library_sha256": None}
    try:
        path, _ = ortlib.find()
    except LookupError as e:
        doc["note"] = str(e)
        return doc
    doc["library"] = str(path.resolve())
    doc["library_sha256"] = _sha256(path)
    return doc
