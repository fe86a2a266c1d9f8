"""python3 -m onnxparity.exporters PKG.MODULE:FACTORY --fixtures FILE.npz --out DIR [options]

The exporter A/B from the shell: FACTORY() returns the model, the .npz
holds the fixtures as `python3 -m onnxparity capture` reads them
(docs/capture.md); the model is captured with each exporter into DIR/legacy
and DIR/dynamo, each bundle checked, and DIR/exporters.json and
DIR/exporters.md written (docs/exporters.md).  Prints the one-line answer,
or with --format json the exporters.json document.

Exit: 0 every exporter exported and matches eager (or the only one
available does), 1 the exporters differ or none matches (one separates or
failed to export), 2 usage or bad input (nothing written), 3 I/O error."""
import argparse
import contextlib
import json
import sys
from typing import Optional, Sequence

from .__main__ import UsageError, load_fixtures, load_model

EXIT_SAME, EXIT_DIFFER, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m onnxparity.exporters",
                                description="Capture one model with the legacy and the dynamo exporter "
                                            "and say which matches eager (docs/exporters.md).")
    p.add_argument("factory", help="PKG.MODULE:FACTORY, a callable returning the torch.nn.Module")
    p.add_argument("--fixtures", required=True, help=".npz of fixtures (docs/capture.md)")
    p.add_argument("--out", required=True, help="folder for DIR/legacy, DIR/dynamo and the report")
    p.add_argument("--exporters", default="legacy,dynamo", help="comma list (default legacy,dynamo)")
    p.add_argument("--split", help="cut a single fixture along dim 0 into these sizes, e.g. 1,4")
    p.add_argument("--eval", action="store_true", help="model.eval() before capturing")
    p.add_argument("--allow-training", action="store_true", help="capture modules left in training mode")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_SAME
    try:
        import torch  # noqa: F401  (here: whether it is installed)
        from ._exporters import compare_exporters
        from .errors import CaptureError
    except ModuleNotFoundError as e:
        print(f"onnxparity: the exporter A/B needs {e.name}, which is not installed: "
              "pip install 'onnxparity[capture]'", file=sys.stderr)
        return EXIT_USAGE
    try:
        split = [int(s) for s in args.split.split(",")] if args.split else None
        names = [s.strip() for s in args.exporters.split(",") if s.strip()]
        fixtures = load_fixtures(args.fixtures, split)
        model = load_model(args.factory, args.eval)
        with contextlib.redirect_stdout(sys.stderr):  # torch.onnx prints its progress on stdout
            ab = compare_exporters(model, fixtures, args.out, exporters=names,
                                   allow_training=args.allow_training)
    except (UsageError, CaptureError, ValueError) as e:
        print(f"onnxparity: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"onnxparity: {e}", file=sys.stderr)
        return EXIT_IO
    print(json.dumps(ab.document, indent=2) if args.format == "json" else ab.summary)
    return EXIT_DIFFER if ab.separating or ab.failed or not ab.matching else EXIT_SAME


if __name__ == "__main__":
    sys.exit(main())
