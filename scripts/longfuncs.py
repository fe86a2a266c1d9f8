"""List the functions longer than a limit (default 120 lines) in src/, cli/
and python/: the functions a reader cannot hold at once (STYLE.md,
"Functions a reader can hold"; issue 28 asks for none over 120).

How a function's length is counted:
  C (src/**/*.c, cli/**/*.c, their .h): the house style puts a function's
      braces on lines of their own at column 0 (.clang-format, Linux braces),
      so a function runs from a line that is exactly "{" to the next line
      that starts with "}"; its length is both lines and every line between.
      A "{" whose declaration (the lines above it, back to a blank line, a
      ";" or the end of the previous definition) has no "(" is not a
      function.  Its name is the identifier before the first "(" of that
      declaration, comments and __attribute__((...)) skipped.
  Python (python/**/*.py): every def (methods and nested functions too, each
      counted alone with what it nests), from the "def" line to the last line
      of its body (ast's lineno .. end_lineno), decorators not counted.

Usage: /usr/bin/python3 scripts/longfuncs.py [--max N] [--root DIR] [PATH ...]
  PATH ...  files or folders to scan instead of src/ cli/ python/
Prints one line per long function, longest first: "LINES  FILE:LINE  NAME",
and exits 1 when there is one, 0 when there is none (2 on a usage error)."""
import argparse
import ast
import pathlib
import re
import sys

DEFAULT_DIRS = ("src", "cli", "python")
C_SUFFIXES = (".c", ".h")
IDENT_BEFORE_PAREN = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def c_decl_name(decl):
    """The function's name in its declaration text (comments, and
    __attribute__((...)) in front of it, skipped), or None."""
    decl = COMMENT.sub(" ", decl)
    while True:
        m = IDENT_BEFORE_PAREN.search(decl)
        if not m:
            return None
        if m.group(1) != "__attribute__":
            return m.group(1)
        depth, j = 0, m.end() - 1  # at the "(" after __attribute__
        while j < len(decl):
            depth += {"(": 1, ")": -1}.get(decl[j], 0)
            if depth == 0:
                break
            j += 1
        decl = decl[j + 1:]


def c_functions(text):
    """(name, first_line, n_lines) for each function of a C file in the house
    layout; first_line is the opening brace's (1-based)."""
    lines = text.splitlines()
    out = []
    decl_start = 0  # first line after the previous definition or blank line
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip() == "{":
            name = c_decl_name("\n".join(lines[decl_start:i]))
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            if name and end < len(lines):
                out.append((name, i + 1, end - i + 1))
            i = end + 1
            decl_start = i
            continue
        if not line.strip() or line.startswith("}") or line.rstrip().endswith(";"):
            decl_start = i + 1
        i += 1
    return out


def py_functions(text, filename):
    """(qualified name, def line, n_lines) for each def of a Python file."""
    tree = ast.parse(text, filename)
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def scan(paths, root):
    """Every function of every C or Python file under `paths`:
    [(n_lines, relative path, line, name)]."""
    found = []
    for p in paths:
        p = root / p
        files = sorted(p.rglob("*")) if p.is_dir() else [p]
        for f in files:
            if not f.is_file():
                continue
            rel = f.relative_to(root) if f.is_relative_to(root) else f
            if f.suffix in C_SUFFIXES:
                funcs = c_functions(f.read_text(errors="replace"))
            elif f.suffix == ".py":
                funcs = py_functions(f.read_text(), str(f))
            else:
                continue
            found += [(n, str(rel), line, name) for name, line, n in funcs]
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=120, help="longest length allowed (lines)")
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]),
                    help="the repository (default: this script's)")
    ap.add_argument("paths", nargs="*", help="files or folders (default: src cli python)")
    args = ap.parse_args(argv)
    root = pathlib.Path(args.root).resolve()
    long_ones = sorted((f for f in scan(args.paths or DEFAULT_DIRS, root) if f[0] > args.max),
                       key=lambda f: (-f[0], f[1], f[2]))
    for n, rel, line, name in long_ones:
        print(f"{n:5d}  {rel}:{line}  {name}")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
