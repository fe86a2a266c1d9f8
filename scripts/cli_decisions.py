"""List the functions of cli/ that decide: that compute a verdict, an exit
code from a verdict, a threshold, a limit or a cause, instead of calling the
library for it (issue 28, Must-show 1: "cli/ holds no decision").  The tool
parses arguments, calls the library and formats; the decisions live in
src/ (run.h, gate.h, merge.h, causes.h, ...), once.

What counts as deciding (each a rule name, as printed):
  exit-code      EXIT_FAIL or EXIT_RUNTIME (or ONP_EXIT_...) produced as a
                 value: returned, assigned, passed, a branch of ?: .  A
                 verdict's exit code comes from onp_run_exit_code, an
                 error's from onp_error_exit_code (cli_report); reading a
                 code (rc == EXIT_FAIL) is not producing one.
  verdict-enum   ONP_RUN_PASS / _FAIL / _ERROR produced (a verdict made by
                 hand), not compared, not a designator ([ONP_RUN_PASS] = ...)
                 nor a case label.
  verdict-word   a string literal naming a verdict ("pass", "fail", "error",
                 any case, alone or as the first word: "FAIL — 2 regressions")
                 chosen by a ?: whose condition is not a judgment the library
                 made.  Formatting reads one: the condition compares with an
                 enum constant (v == ONP_RUN_FAIL, eff == ONP_DRIFT_EFFECT_...),
                 names a verdict (r->verdict, str_at(o, "verdict")), is a
                 result's own pass flag (x->pass, v->plain_pass), or reads a
                 document's ("pass" member).  Anything else (a count, a local
                 flag, a combination) computes the verdict here.
  verdict-name   strcmp (strncmp, strcasecmp) against "pass", "fail" or
                 "error": names are read with onp_run_verdict_from_name,
                 onp_fixture_status_from_name, onp_lint_severity_from_name.
  confidence     "high", "medium" or "low" compared with strcmp or chosen by
                 a ?: as above: onp_confidence_from_name / _name.
  cause          an ONP_CAUSE_... id produced (not compared), or a cause id
                 string ("training-mode", ...) compared or chosen.
  limit          arithmetic that computes a limit: a binary * / + - (or
                 fmax/fmin, or *= /= += -=) with an operand named like a
                 limit (margin, limit, lim, envelope, tolerance, tol, rtol,
                 atol, threshold, or ending in _max / _min).
  threshold      a comparison (< <= > >=) of a value with an operand named
                 like a limit, the other side not a plain number (checking
                 an option's range, margin < 1, is argument parsing).

Usage: /usr/bin/python3 scripts/cli_decisions.py [--root DIR] [PATH ...]
  PATH ...  C files or folders to scan instead of cli/ (*.c)
Prints one line per hit, "FILE:FUNCTION:LINE: RULE: source line", and exits
1 when there is one, 0 when there is none (2 on a usage error).  Functions
are found as scripts/longfuncs.py finds them (braces at column 0).
Heuristics over tokens, not a C parser: a rule that misfires is changed
here, in the open, never silenced per file."""
import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from longfuncs import c_functions  # noqa: E402  (one way to find functions)

VERDICT_WORDS = {"pass", "fail", "error"}
CONFIDENCE_WORDS = {"high", "medium", "low"}
CAUSE_IDS = {"training-mode", "baked-shape", "traced-control-flow", "op-semantics",
             "reduced-precision", "graph-optimization", "execution-provider", "runtime-version",
             "nondeterminism", "reference", "float-noise", "state-mutation", "input-dtype"}
EXIT_VALUES = {"EXIT_FAIL", "EXIT_RUNTIME", "ONP_EXIT_FAIL", "ONP_EXIT_RUNTIME"}
VERDICT_ENUM = {"ONP_RUN_PASS", "ONP_RUN_FAIL", "ONP_RUN_ERROR"}
STRCMP = {"strcmp", "strncmp", "strcasecmp", "strncasecmp"}
LIMIT_PART = re.compile(r"(^|_)(margin|limit|lim|envelope|tolerance|tol|rtol|atol|threshold)(_|$)"
                        r"|_(max|min)$")
ENUM_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")
NUMBER = re.compile(r"^(\d|\.\d)")
ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
TOKEN = re.compile(r"""
    (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<chr>'(?:\\.|[^'\\\n])*')
  | (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<num>\.?\d[\w.]*(?:[eEpP][+-]\d+)?)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=?|[?:;,.(){}\[\]~#])
  | (?P<ws>\s+)
  | (?P<other>.)
""", re.X)


def strip_comments(text):
    """The text with every comment blanked (newlines kept, strings kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokens(text, first_line):
    """[(kind, value, line)] of a piece of C; preprocessor lines skipped."""
    out, line = [], first_line
    for m in TOKEN.finditer(text):
        kind, val = m.lastgroup, m.group()
        if kind not in ("ws", "other"):
            out.append((kind, val, line))
        line += val.count("\n")
    return out


def literal(tok):
    """The text of a string literal token, else None."""
    return tok[1][1:-1] if tok[0] == "str" else None


def word_of(s):
    """The first word of a literal, lowercased ("FAIL — x" -> "fail")."""
    m = re.match(r"[A-Za-z]+", s)
    return m.group().lower() if m and (len(m.group()) == len(s) or not s[len(m.group())].isalpha()) else ""


def is_limit_name(v):
    return not ENUM_CONST.match(v) and bool(LIMIT_PART.search(v))


def chain_left(toks, k):
    """The identifiers of the operand ending at toks[k - 1] (a member chain
    a->b.c, a call's or index's closing bracket walked back over)."""
    ids, j = [], k - 1
    while j >= 0:
        kind, v, _ = toks[j]
        if v in (")", "]"):
            depth, j0 = 0, j
            while j >= 0:
                depth += {")": 1, "]": 1, "(": -1, "[": -1}.get(toks[j][1], 0)
                if depth == 0:
                    break
                j -= 1
            ids += [t[1] for t in toks[j:j0 + 1] if t[0] == "id"]
            j -= 1
        elif kind in ("id", "num"):
            ids.append(v)
            j -= 1
        else:
            break
        if j >= 0 and toks[j][1] in ("->", "."):
            j -= 1
            continue
        break
    return ids


def skip_group(toks, j, ids):
    """The index after the bracketed group that opens at toks[j], its
    identifiers appended to ids."""
    depth = 0
    while j < len(toks):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(toks[j][1], 0)
        if toks[j][0] == "id":
            ids.append(toks[j][1])
        if depth == 0:
            break
        j += 1
    return j + 1


def chain_right(toks, k):
    """The identifiers of the operand starting at toks[k + 1]."""
    ids, j, n = [], k + 1, len(toks)
    while j < n and toks[j][1] in ("!", "-", "+", "*", "&"):
        j += 1
    while j < n:
        kind, v, _ = toks[j]
        if v == "(":
            j = skip_group(toks, j, ids)
        elif kind in ("id", "num"):
            ids.append(v)
            j += 1
            while j < n and toks[j][1] in ("(", "["):  # a call or an index on it
                j = skip_group(toks, j, ids)
        else:
            break
        if j < n and toks[j][1] in ("->", "."):
            j += 1
            continue
        break
    return ids


def operand_is_number(toks, k, left):
    """1 when the operand beside the operator at k is a plain number."""
    j = k - 1 if left else k + 1
    if not left and j < len(toks) and toks[j][1] == "-":
        j += 1
    if not (0 <= j < len(toks)) or toks[j][0] != "num":
        return False
    nxt = toks[j - 1] if left else (toks[j + 1] if j + 1 < len(toks) else ("op", ";", 0))
    return nxt[1] not in ("->", ".", "(", "[")


STOP_LEFT = {";", "{", "}", ",", "return", "?", ":"} | ASSIGN


def ternary_parts(toks, q):
    """(condition, true branch, false branch) token lists of the ?: whose
    "?" is toks[q]."""
    j, depth = q - 1, 0
    while j >= 0:
        v = toks[j][1]
        if v in (")", "]"):
            depth += 1
        elif v in ("(", "["):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and v in STOP_LEFT:
            break
        j -= 1
    cond = toks[j + 1:q]
    j, depth, nest = q + 1, 0, 0
    while j < len(toks):
        v = toks[j][1]
        if v in ("(", "["):
            depth += 1
        elif v in (")", "]"):
            depth -= 1
        elif depth == 0 and v == "?":
            nest += 1
        elif depth == 0 and v == ":":
            if nest == 0:
                break
            nest -= 1
        j += 1
    true_b = toks[q + 1:j]
    k, depth = j + 1, 0
    while k < len(toks):
        v = toks[k][1]
        if v in ("(", "["):
            depth += 1
        elif v in (")", "]"):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and v in (";", ",", ":", "}", "{"):
            break
        k += 1
    return cond, true_b, toks[j + 1:k]


def branch_literal(b):
    """The string literal a branch is ("x", ("x"), "a" "b" joined), else None."""
    vals = [t for t in b if t[1] not in ("(", ")")]
    if vals and all(t[0] == "str" for t in vals):
        return "".join(literal(t) for t in vals)
    return None


def reads_judgment(cond):
    """1 when a ?: condition reads a judgment the library made (see the
    module's text, verdict-word)."""
    vals = [t[1] for t in cond]
    while vals and vals[0] == "(" and vals[-1] == ")":
        vals = vals[1:-1]
    while vals and vals[0] == "!":
        vals = vals[1:]
    if any(v in VERDICT_ENUM for v in vals) or any("verdict" in v.lower() for v in vals):
        return True
    if any(v.endswith("_from_name") for v in vals):
        return True  # a name read through the library's table
    for t in cond:  # a document's verdict or pass member read here
        if t[0] == "str" and literal(t) in ("verdict", "pass", "status"):
            return True
    if len(vals) >= 3 and vals[-2] in ("==", "!=") and ENUM_CONST.match(vals[-1]):
        return "&&" not in vals and "||" not in vals
    if vals and ("->" in vals or "." in vals):  # a result's own flag: x->pass, L->cells[k].pass
        plain = re.sub(r"\[[^\[\]]*\]", "", " ".join(vals)).split()
        if all(re.match(r"^[A-Za-z_]\w*$", v) or v in ("->", ".") for v in plain) and \
                re.search(r"(^|_)(pass|passed|ran|ok)$", plain[-1]):
            return True
    return False


def running_extreme(toks, k):
    """1 when the comparison at k is "if (A > B) B = A;" (or A = B): a
    running maximum or minimum, an aggregate, not a value held against a
    limit."""
    j, depth = k + 1, 0
    while j < len(toks):
        v = toks[j][1]
        depth += {"(": 1, ")": -1}.get(v, 0)
        if depth < 0 or v in (";", "{"):
            break
        j += 1
    if j >= len(toks) or toks[j][1] != ")":
        return False
    end = j + 1
    while end < len(toks) and toks[end][1] != ";":
        end += 1
    stmt = [t[1] for t in toks[j + 1:end]]
    if stmt.count("=") != 1:
        return False
    eq = stmt.index("=")
    ids = lambda part: tuple(v for v in part if re.match(r"^[A-Za-z_]\w*$", v))  # noqa: E731
    sides = {tuple(chain_left(toks, k)[::-1]), tuple(chain_right(toks, k))}
    return {ids(stmt[:eq]), ids(stmt[eq + 1:])} == sides


def scan_function(toks):
    """[(line, rule)] of one function body's tokens."""
    hits = []
    n = len(toks)
    for k, (kind, v, line) in enumerate(toks):
        prev = toks[k - 1][1] if k else ""
        nxt = toks[k + 1][1] if k + 1 < n else ""
        compared = prev in ("==", "!=") or nxt in ("==", "!=")
        if kind == "id" and v in EXIT_VALUES and not compared and prev != "case":
            hits.append((line, "exit-code"))
        if kind == "id" and v in VERDICT_ENUM and not compared and prev not in ("case", "[") \
                and nxt != "]":
            hits.append((line, "verdict-enum"))
        if kind == "id" and v.startswith("ONP_CAUSE_") and v != "ONP_CAUSE_COUNT" and not compared \
                and prev not in ("case", "[") and nxt != "]":
            hits.append((line, "cause"))
        if kind == "id" and v in STRCMP and nxt == "(":
            depth, j = 0, k + 1
            while j < n:
                depth += {"(": 1, ")": -1}.get(toks[j][1], 0)
                if depth == 0:
                    break
                s = literal(toks[j])
                if s is not None:
                    if s in VERDICT_WORDS:
                        hits.append((line, "verdict-name"))
                    elif s in CONFIDENCE_WORDS:
                        hits.append((line, "confidence"))
                    elif s in CAUSE_IDS:
                        hits.append((line, "cause"))
                j += 1
        if v == "?":
            cond, tb, fb = ternary_parts(toks, k)
            words = [branch_literal(b) for b in (tb, fb)]
            words = [w for w in words if w is not None]
            if any(word_of(w) in VERDICT_WORDS for w in words) and not reads_judgment(cond):
                hits.append((line, "verdict-word"))
            if any(w in CONFIDENCE_WORDS for w in words) and not reads_judgment(cond):
                hits.append((line, "confidence"))
            if any(w in CAUSE_IDS for w in words):
                hits.append((line, "cause"))
        if kind == "id" and v in ("fmax", "fmin", "fmaxf", "fminf") and nxt == "(":
            if any(is_limit_name(x) for x in chain_right(toks, k)):
                hits.append((line, "limit"))
        if kind == "op" and v in ("*", "/", "+", "-", "*=", "/=", "+=", "-="):
            binary = k and (toks[k - 1][0] in ("id", "num") or toks[k - 1][1] in (")", "]"))
            declared = v == "*" and k >= 1 and toks[k - 1][0] == "id" and \
                (k == 1 or toks[k - 2][1] in (";", "{", "}", "const", "static", "struct", "(", ","))
            if binary and not declared:
                names = chain_left(toks, k) + chain_right(toks, k)
                if any(is_limit_name(x) for x in names):
                    hits.append((line, "limit"))
        if kind == "op" and v in ("<", "<=", ">", ">="):
            left, right = chain_left(toks, k), chain_right(toks, k)
            if ((any(is_limit_name(x) for x in left) and not operand_is_number(toks, k, False)) or
                    (any(is_limit_name(x) for x in right) and not operand_is_number(toks, k, True))) \
                    and not running_extreme(toks, k):
                hits.append((line, "threshold"))
    return sorted(set(hits))


def scan_file(path, rel):
    """[(rel, function, line, rule, source line)] of one C file."""
    text = path.read_text(errors="replace")
    src_lines = text.splitlines()
    clean = strip_comments(text)
    clean_lines = clean.splitlines()
    out = []
    for name, first, length in c_functions(text):
        body = "\n".join(clean_lines[first - 1:first - 1 + length])
        body = "\n".join("" if ln.lstrip().startswith("#") else ln for ln in body.splitlines())
        for line, rule in scan_function(tokens(body, first)):
            out.append((rel, name, line, rule, src_lines[line - 1].strip()))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]),
                    help="the repository (default: this script's)")
    ap.add_argument("paths", nargs="*", help="C files or folders (default: cli)")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.root).resolve()
    hits = []
    for p in args.paths or ["cli"]:
        p = root / p
        files = sorted(p.glob("*.c")) if p.is_dir() else [p]
        if not files or not all(f.is_file() for f in files):
            print(f"cli_decisions.py: {p}: no C file", file=sys.stderr)
            return 2
        for f in files:
            rel = f.relative_to(root) if f.is_relative_to(root) else f
            hits += scan_file(f, str(rel))
    for rel, name, line, rule, src in hits:
        print(f"{rel}:{name}:{line}: {rule}: {src}")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
