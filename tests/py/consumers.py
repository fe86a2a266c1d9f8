"""Real consumers of what the tool writes (issue 17), used by conftest.run on
every command a test runs:

- every JUnit file (`--junit FILE`) is read by junitparser (Debian's
  python3-junitparser) and must have unique (classname, name) ids and a
  `time` on every case;
- every SARIF file (`--sarif FILE`, `--format sarif`) is validated by
  Microsoft's sarif-multitool (scripts/setup.sh consumers puts it in
  third_party/sarif-multitool): 0 errors, 0 warnings;
- every JSON document (`--format json` on stdout, the criteria `gate
  --record` writes) validates against its published schema in
  docs/schemas/, chosen by the document's own "schema" member; a schema id
  without a published file is a failure.

A consumer that is not installed is reported once per session as a warning
(and by test_consumers.py as a skip that says so); `make test` installs all
three."""
import json
import pathlib
import re
import subprocess
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
SARIF_TOOL = ROOT / "third_party" / "sarif-multitool" / "Sarif.Multitool"
SCHEMA_BASE = "https://schemas.onnxparity.example/"

_missing_said = set()


def _missing(what):
    if what not in _missing_said:
        _missing_said.add(what)
        warnings.warn(f"{what} is not installed: its check of the tool's output is not made "
                      "(scripts/setup.sh deps consumers installs it)")


def schema_path(schema_id):
    """docs/schemas/NAME-V.json for "onnxparity.NAME/V", else None."""
    m = re.fullmatch(r"onnxparity\.([a-z0-9-]+)/([0-9]+)", schema_id or "")
    return SCHEMAS / f"{m.group(1)}-{m.group(2)}.json" if m else None


_validators = {}


def _validator(path):
    if path not in _validators:
        import jsonschema
        store = {}
        for f in SCHEMAS.glob("*.json"):
            s = json.loads(f.read_text())
            store[s["$id"]] = s
        schema = json.loads(path.read_text())
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        resolver = jsonschema.RefResolver(schema["$id"], schema, store=store)
        _validators[path] = cls(schema, resolver=resolver)
    return _validators[path]


def validate_doc(doc, where):
    """The document against its published schema; AssertionError naming the
    first violation and where it is."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        _missing("jsonschema (python3-jsonschema)")
        return
    sid = doc.get("schema") if isinstance(doc, dict) else None
    path = schema_path(sid)
    assert path is not None, f"{where}: no onnxparity schema id in the document ({sid!r})"
    assert path.exists(), f"{where}: {sid} has no published schema ({path.relative_to(ROOT)})"
    errors = sorted(_validator(path).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        at = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise AssertionError(f"{where}: does not validate against {path.name} at {at}: "
                             f"{e.message[:400]} ({len(errors)} error(s))")


def check_junit(path):
    """Read with junitparser; ids unique, every case timed.  Returns the
    parsed document."""
    try:
        from junitparser import JUnitXml
    except ImportError:
        _missing("junitparser (python3-junitparser)")
        return None
    xml = JUnitXml.fromfile(str(path))
    suites = [xml] if xml._tag == "testsuite" else list(xml)
    seen = set()
    for suite in suites:
        for case in suite:
            key = (case.classname, case.name)
            assert key not in seen, f"{path}: duplicate testcase id {key}"
            seen.add(key)
            assert case._elem.get("time") is not None, f"{path}: testcase {key} has no time"
    return xml


def check_sarif(path):
    """sarif-multitool validate: no error, no warning."""
    if not SARIF_TOOL.exists():
        _missing(f"sarif-multitool ({SARIF_TOOL.relative_to(ROOT)})")
        return
    r = subprocess.run([str(SARIF_TOOL), "validate", str(path)], capture_output=True, text=True)
    bad = [ln for ln in r.stdout.splitlines() if re.search(r": (error|warning) [A-Z]+[0-9]+:", ln)]
    assert r.returncode == 0 and not bad, f"{path}: sarif-multitool validate:\n" + "\n".join(
        bad or [r.stdout[-2000:], r.stderr[-2000:]])


def _after(args, flag):
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def consume(args, result, tmpdir):
    """Every output the command `args` wrote, through its consumer."""
    args = [str(a) for a in args]
    junit = _after(args, "--junit")
    if junit and pathlib.Path(junit).is_file():
        check_junit(junit)
    sarif = _after(args, "--sarif")
    if sarif and pathlib.Path(sarif).is_file():
        check_sarif(sarif)
    fmt = _after(args, "--format")
    if fmt == "sarif" and result.stdout.strip():
        p = pathlib.Path(tmpdir) / "stdout.sarif"
        p.write_text(result.stdout)
        check_sarif(p)
    if fmt == "json" and result.stdout.strip():
        try:
            doc = json.loads(result.stdout)
        except ValueError:
            doc = None
        assert doc is not None or result.returncode >= 2, \
            f"{' '.join(args[:3])}: --format json printed no JSON document (exit {result.returncode})"
        if doc is not None:
            validate_doc(doc, " ".join(args[1:3]) + " --format json")
    crit = _after(args, "--criteria")
    if "--record" in args and result.returncode == 0 and crit and pathlib.Path(crit).is_file():
        validate_doc(json.loads(pathlib.Path(crit).read_text()), crit)
