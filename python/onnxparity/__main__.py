"""python3 -m onnxparity capture PKG.MODULE:FACTORY --fixtures FILE.npz --out DIR [options]

FACTORY() returns the model (torch.nn.Module).  The .npz holds the fixtures;
member names (see docs/capture.md):

  input_0, input_1, ...          one fixture, positional inputs in that order
  NAME                           one fixture, keyword input NAME
  fixture_K/input_I, fixture_K/NAME
                                 fixture K (0, 1, ...): each fixture may have
                                 its own batch size
  --split 1,4                    cut the arrays of a single fixture along dim 0
                                 into fixtures of those sizes

Exit: 0 bundle written, 2 usage or bad input (the capture refused: nothing
written), 3 I/O error.
"""
import argparse
import importlib
import os
import re
import signal
import stat
import sys
import threading
from typing import Any, Callable, Dict, IO, List, Optional, Sequence, Tuple, Union

EXIT_OK, EXIT_USAGE, EXIT_IO = 0, 2, 3


class UsageError(Exception):
    pass


class _Signalled(BaseException):
    """SIGTERM or SIGHUP during a capture: unwinds the stack as SIGINT's
    KeyboardInterrupt does, so that the staging folder goes; main() then
    lets the process die of the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_CLEANUP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _raise_signalled(signum: int, frame: Any) -> None:
    for s in _CLEANUP_SIGNALS:  # a second signal must not cut the cleanup short
        signal.signal(s, signal.SIG_IGN)
    raise _Signalled(signum)


def _catch_signals() -> Dict[int, Any]:
    """SIGTERM and SIGHUP raise _Signalled (where their disposition is still
    the default, so that nohup and an ignoring parent stay in force); SIGINT
    keeps Python's KeyboardInterrupt.  Returns the handlers replaced."""
    old: Dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) == signal.SIG_DFL:
            old[s] = signal.signal(s, _raise_signalled)
    return old


def _interrupted(signum: int) -> None:
    """Remove the staging folders still live (an unwinding stack removed
    its own; this catches one made just before the signal) and say so."""
    from . import _staging
    _staging.abort_all()
    print(f"onnxparity: interrupted by {signal.Signals(signum).name}: the unfinished bundle was removed",
          file=sys.stderr)
    sys.stderr.flush()


def _die_of(signum: int) -> None:
    """End the process by `signum` itself (a shell's status says which)."""
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)


def load_factory(spec: str) -> Callable[[], Any]:
    if ":" not in spec:
        raise UsageError(f"{spec!r}: expected PKG.MODULE:FACTORY")
    mod_name, attr = spec.split(":", 1)
    try:
        obj = importlib.import_module(mod_name)
    except ImportError as e:
        raise UsageError(f"cannot import {mod_name!r}: {e}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{spec!r} is not callable")
    return obj


def load_model(spec: str, eval_mode: bool = False) -> Any:
    """The torch.nn.Module that the factory PKG.MODULE:FACTORY returns
    (in eval mode with ``eval_mode``); UsageError, naming the factory, when
    it cannot be imported, raises, or returns something else."""
    import torch
    factory = load_factory(spec)
    try:
        model = factory()
    except Exception as e:
        raise UsageError(f"{spec}() raised {type(e).__name__}: {e}") from e
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"{spec}() returned {type(model).__name__}, not a torch.nn.Module")
    if eval_mode:
        model.eval()
    return model


# ASCII digits only (str.isdigit takes other scripts' digits), matched whole
# (fullmatch: "$" would also match before a trailing newline).
_MEMBER = re.compile(r"fixture_([0-9]+)[/.](.+)", re.S)
_POS = re.compile(r"input_([0-9]+)")


def _fixture(members, where):
    pos = {}
    kw = {}
    for name, arr in members.items():
        m = _POS.fullmatch(name)
        if m:
            pos[int(m.group(1))] = arr
        else:
            kw[name] = arr
    if pos and sorted(pos) != list(range(len(pos))):
        raise UsageError(f"{where}: positional inputs must be input_0 .. input_{len(pos) - 1} without gaps "
                         f"(found {', '.join(f'input_{i}' for i in sorted(pos))})")
    args = tuple(pos[i] for i in range(len(pos)))
    return args + ((kw,) if kw else ())


def _input_key(name: str) -> Tuple[Optional[int], Union[int, str]]:
    """(fixture K or None, input position I or keyword NAME) of a member:
    two members with one key would be one input, the second silently lost."""
    m = _MEMBER.fullmatch(name)
    fixture, sub = (int(m.group(1)), m.group(2)) if m else (None, name)
    p = _POS.fullmatch(sub)
    return fixture, int(p.group(1)) if p else sub


def _key_words(key: Tuple[Optional[int], Union[int, str]]) -> str:
    fixture, inp = key
    what = f"input_{inp}" if isinstance(inp, int) else f"keyword input {inp!r}"
    return what if fixture is None else f"fixture {fixture}, {what}"


def _open_regular(path: str) -> IO[bytes]:
    """`path` opened for reading, never waiting for a FIFO's writer: opened
    non-blocking, then refused unless it is a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise OSError(f"{path}: cannot open: {e.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a character device" if stat.S_ISCHR(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "a block device" if stat.S_ISBLK(mode) else "a special file")
            raise UsageError(f"{path}: is {kind}, not a .npz file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_npz(path: str) -> Dict[str, Any]:
    """Every member of the archive at `path`, by name (".npy" dropped, as
    numpy names them).  Refused with one line: a file that is not a regular
    one (UsageError), not a .npz (OSError), a member numpy cannot read
    (OSError), an object or other non-numeric dtype (UsageError), two
    members with one name."""
    import zipfile
    import zlib
    import numpy as np
    with _open_regular(path) as f:
        try:
            npz = np.load(f, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            raise OSError(f"{path}: cannot read as .npz: {e}") from None
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise UsageError(f"{path}: holds one array (.npy), not a .npz archive of named inputs")
        with npz:
            seen: Dict[str, str] = {}
            for member in npz.zip.namelist():
                k = member[:-4] if member.endswith(".npy") else member
                if k in seen:
                    raise UsageError(f"{path}: members {seen[k]!r} and {member!r} have the same name")
                seen[k] = member
            arrays = {}
            for k, member in seen.items():
                try:
                    a = npz[k]
                except ValueError as e:
                    if "allow_pickle" in str(e):
                        raise UsageError(f"{path}: member {k!r} holds Python objects (dtype "
                                         "object): refused, only numeric arrays are inputs") from None
                    raise OSError(f"{path}: member {member!r}: cannot read: {e}") from None
                except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
                    raise OSError(f"{path}: member {member!r}: cannot read: {e}") from None
                arrays[k] = a
    return arrays


def load_fixtures(path: str, split: Optional[Sequence[int]] = None) -> Any:
    import numpy as np
    import torch
    arrays = _read_npz(path)
    if not arrays:
        raise UsageError(f"{path}: no arrays")
    keys: Dict[Tuple[Optional[int], Union[int, str]], str] = {}
    for name in arrays:
        key = _input_key(name)
        if key in keys:
            raise UsageError(f"{path}: members {keys[key]!r} and {name!r} are the same input "
                             f"({_key_words(key)}): rename one")
        keys[key] = name
    grouped = {k for k in arrays if _MEMBER.fullmatch(k)}
    if grouped and len(grouped) != len(arrays):
        raise UsageError(f"{path}: mixes fixture_K/ members with plain ones "
                         f"({', '.join(sorted(set(arrays) - grouped))})")
    tensors = {}
    for k, v in arrays.items():
        try:
            tensors[k] = torch.from_numpy(np.ascontiguousarray(v))
        except (TypeError, ValueError, RuntimeError):
            raise UsageError(f"{path}: member {k!r}: dtype {v.dtype} has no torch tensor type") from None
    if grouped:
        by_k: Dict[int, Dict[str, Any]] = {}
        for k, t in tensors.items():
            m = _MEMBER.fullmatch(k)
            assert m is not None  # every member is grouped
            by_k.setdefault(int(m.group(1)), {})[m.group(2)] = t
        if split:
            raise UsageError("--split applies to a single fixture, not to fixture_K/ members")
        return [_fixture(by_k[k], f"fixture_{k}") for k in sorted(by_k)]
    if not split:
        return [_fixture(tensors, path)]
    n = {int(t.shape[0]) if t.dim() else -1 for t in tensors.values()}
    if len(n) != 1 or sum(split) != next(iter(n)):
        raise UsageError(f"--split {','.join(map(str, split))}: every array needs dim 0 = "
                         f"{sum(split)} (found {sorted(n)})")
    out: List[Any] = []
    start = 0
    for size in split:
        out.append(_fixture({k: t[start:start + size] for k, t in tensors.items()}, path))
        start += size
    return out


def _csv(s):
    return [x for x in s.split(",") if x] if s else None


def _sizes(s):
    try:
        sizes = [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r}: expected sizes like 1,4") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{s!r}: sizes must be >= 1")
    return sizes


def _reference64(s):
    v = s.strip().lower()
    if v in ("all", "off"):
        return v
    try:
        k = int(v, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r}: expected a count, all or off") from None
    if k < 0:
        raise argparse.ArgumentTypeError(f"{s!r}: the count must be >= 0")
    return k


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m onnxparity", description=(
        "PyTorch side of onnxparity: export a model and capture its eager truth as a bundle."))
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture", help="export FACTORY() and write the bundle DIR",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("factory", metavar="PKG.MODULE:FACTORY")
    c.add_argument("--fixtures", required=True, metavar="FILE.npz")
    c.add_argument("--out", required=True, metavar="DIR")
    c.add_argument("--opset", type=int)
    c.add_argument("--exporter", choices=("auto", "legacy", "dynamo"), default="auto")
    c.add_argument("--dynamic", choices=("batch", "auto", "none"), default="auto",
                   help="dynamic dims: auto (dim 0 of every input/output and every dim that varies "
                        "across fixtures, default), batch (dim 0 only), none")
    c.add_argument("--input-names", type=_csv, metavar="A,B")
    c.add_argument("--output-names", type=_csv, metavar="A,B")
    c.add_argument("--split", type=_sizes, metavar="N,M,...")
    c.add_argument("--no-intermediates", action="store_true", help="the same as --intermediates none")
    c.add_argument("--intermediates", metavar="K|all|none",
                   help="store intermediates for the first K fixtures of each shape group "
                        "(default 2), every fixture (all) or none")
    c.add_argument("--allow-training", action="store_true")
    c.add_argument("--large-model", action="store_true", help="weights as external data")
    c.add_argument("--eval", action="store_true", help="call model.eval() on the factory's model first")
    c.add_argument("--reference64", type=_reference64, default=2, metavar="K|all|off",
                   help="float64 reference pass on the first K fixtures of each shape group "
                        "(default 2), on every fixture (all), or none (off)")
    c.add_argument("--trace-fixture", type=_trace_fixture, default=None, metavar="K|auto",
                   help="the fixture the exporter traces (default: auto under dynamo, 0 under legacy; "
                        "auto: the first whose dynamic dims are all >= 2)")
    return p


def _trace_fixture(s: str) -> Union[int, str]:
    if s == "auto":
        return s
    try:
        return int(s, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r}: expected a fixture index or auto") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    old = _catch_signals()
    try:
        return _main(args)
    except KeyboardInterrupt:
        _interrupted(signal.SIGINT)
        raise  # an in-process caller decides; run as a program, see below
    except _Signalled as e:
        _interrupted(e.signum)
        _die_of(e.signum)  # what the default disposition, replaced above, would have done
        return 128 + e.signum  # not reached
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _main(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401  (here: whether it is installed)
        from . import capture
    except ModuleNotFoundError as e:  # the wheel without its `capture` extra
        print(f"onnxparity: the capture needs {e.name}, which is not installed: "
              "pip install 'onnxparity[capture]'", file=sys.stderr)
        return EXIT_USAGE
    from .errors import CaptureError
    try:
        fixtures = load_fixtures(args.fixtures, args.split)
        model = load_model(args.factory, args.eval)
        doc = capture(model, fixtures, args.out, input_names=args.input_names,
                      output_names=args.output_names,
                      dynamic_axes=None if args.dynamic == "none" else args.dynamic, opset=args.opset,
                      exporter=args.exporter, intermediates="none" if args.no_intermediates else (
                          args.intermediates if args.intermediates is not None else 2),
                      allow_training=args.allow_training, large_model=args.large_model,
                      reference64=args.reference64, trace_fixture=args.trace_fixture)
    except (UsageError, CaptureError) as e:
        print(f"onnxparity: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"onnxparity: {e}", file=sys.stderr)
        return EXIT_IO
    m = doc["mapping"]
    tracer = sum(1 for w in doc["warnings"] if w["category"] == "TracerWarning")
    print(f"wrote {args.out}: {len(doc['fixtures'])} fixture(s), exporter {doc['exporter']} opset "
          f"{doc['opset']}, {m['leaf_mapped']}/{m['leaf_modules']} leaf modules mapped, "
          f"{len(doc['warnings'])} export warning(s) ({tracer} TracerWarning), eager "
          f"{'deterministic' if doc['deterministic'] else 'NOT deterministic'}, float64 reference "
          f"{_reference_summary(doc['noise'])}{_state_summary(doc['state'])}")
    return EXIT_OK


def _state_summary(state):
    """'' when the forward wrote nothing, else what it wrote (the capture
    restored it; parity.json "state" has the details)."""
    parts = [f"input {w['name']}" for w in state["inputs_written"]]
    parts += [f"{c['kind']} {c['name']}" for c in state["changed_by_forward"]]
    if not parts:
        return ""
    shown = ", ".join(parts[:4]) + (", ..." if len(parts) > 4 else "")
    return f"; the forward writes {shown}{' (state drift)' if state['state_drift'] else ''}"


def _reference_summary(noise):
    if noise["reference"] is None:
        return f"none ({noise['reason']})"
    return f"on {len(noise['fixtures_covered'])} fixture(s) ({noise['seconds']:.2f} s)"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # cleaned up and said: no traceback, die of SIGINT
        _die_of(signal.SIGINT)
