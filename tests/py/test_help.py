"""Help on every command (cli/help.c) and docs/cli.md held against each other.

- `onnxparity COMMAND --help`, `-h` and `onnxparity help COMMAND` print the
  same page for every command of the global page: a synopsis, options, exit
  codes; exit 0, nothing on stderr.
- Every flag in docs/cli.md's sections for a command is on its help page,
  and every flag of the page is in those sections. A command's flags in the
  docs are the ones in its synopsis blocks (code blocks starting
  `onnxparity COMMAND`) and in the first column of its option tables, in
  every `## ` section whose heading names the command; plus the "ONNX Runtime
  options" section for the commands whose page has that group, and the
  "every command" section for all. A new flag needs a row in help.c and a
  row in docs/cli.md, nothing here.
"""
import re

from conftest import ROOT, run

FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-h)(?![\w-])")


def commands(onnxparity):
    page = run([onnxparity, "--help"]).stdout
    listed = page.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  ([a-z]+) ", listed, re.M)


def help_flags(page):
    """Flags of the option rows of a help page: lines "  -X..." up to the
    column where the text starts."""
    out = set()
    for line in page.splitlines():
        if re.match(r"^  -", line):
            out |= set(FLAG.findall(re.split(r"\s{2,}", line.strip())[0]))
    return out


def doc_sections():
    """[(heading, body)] of docs/cli.md's `## ` sections."""
    text = (ROOT / "docs" / "cli.md").read_text()
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def section_flags(body, cmd):
    """Flags of a section: its synopsis blocks and its tables' first column."""
    out = set()
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", body, re.M | re.S):
        if block.startswith("onnxparity "):
            for line in block.splitlines():
                if line.startswith("onnxparity ") and not line.startswith(f"onnxparity {cmd} "):
                    continue  # another command's synopsis in a shared section
                out |= set(FLAG.findall(line))
    for line in body.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first = re.split(r"(?<!\\)\|", line)[1]  # a cell may hold an escaped \|
            out |= set(FLAG.findall(first))
    return out


def doc_flags(cmd, page):
    out = set()
    for heading, body in doc_sections():
        names = set(re.findall(r"[a-z]+", heading.split(":")[0]))
        if cmd in names:
            out |= section_flags(body, cmd)
        elif "every command" in heading:
            out |= section_flags(body, cmd)
        elif heading.strip() == "ONNX Runtime options" and "ONNX Runtime options:" in page:
            out |= section_flags(body, cmd)
    return out


def test_global_page_lists_the_commands(onnxparity):
    cmds = commands(onnxparity)
    assert {"check", "gate", "merge", "bisect", "sweep", "diagnose", "report", "run", "inspect",
            "lint", "compare", "convert", "expose", "extract"} <= set(cmds), cmds


def test_every_command_has_a_help_page(onnxparity):
    for cmd in commands(onnxparity):
        pages = []
        for args in ([cmd, "--help"], [cmd, "-h"], ["help", cmd], [cmd, "x.onnx", "--help"]):
            r = run([onnxparity, *args])
            assert r.returncode == 0 and r.stderr == "", (args, r.returncode, r.stderr)
            pages.append(r.stdout)
        assert all(p == pages[0] for p in pages), cmd
        page = pages[0]
        assert page.startswith(f"usage: onnxparity {cmd} "), page[:200]
        assert "\noptions:\n" in page and "\nexit codes:\n" in page, cmd
        codes = page.split("\nexit codes:\n", 1)[1]
        assert re.search(r"^  0 ", codes, re.M) and re.search(r"^  2 ", codes, re.M), cmd
        assert {"--help", "-h", "--max-memory"} <= help_flags(page), cmd
        # every option row is one line of text beside the flag
        rows = [ln for ln in page.splitlines() if re.match(r"^  -", ln)]
        assert rows and all(re.search(r"\S\s{2,}\S", ln) or len(ln.strip()) > 26 for ln in rows)


def test_help_of_an_unknown_command_is_usage(onnxparity):
    r = run([onnxparity, "help", "frobnicate"])
    assert r.returncode == 2 and "frobnicate" in r.stderr and r.stdout == ""


def test_help_after_double_dash_is_an_argument(onnxparity):
    r = run([onnxparity, "inspect", "--", "--help"])
    assert r.returncode != 0 and "usage: onnxparity" not in r.stdout


def test_docs_and_help_list_the_same_flags(onnxparity):
    problems = []
    for cmd in commands(onnxparity):
        page = run([onnxparity, cmd, "--help"]).stdout
        in_help, in_docs = help_flags(page), doc_flags(cmd, page)
        if in_docs - in_help:
            problems.append(f"{cmd}: in docs/cli.md, not in --help: {sorted(in_docs - in_help)}")
        if in_help - in_docs:
            problems.append(f"{cmd}: in --help, not in docs/cli.md: {sorted(in_help - in_docs)}")
    assert not problems, "\n".join(problems)


def test_every_flag_of_the_page_is_accepted(onnxparity, tmp_path):
    """No flag on a help page is an unknown option to its command."""
    bad = []
    for cmd in commands(onnxparity):
        page = run([onnxparity, cmd, "--help"]).stdout
        for flag in help_flags(page) - {"-h", "--help"}:
            r = run([onnxparity, cmd, flag], cwd=tmp_path)
            if "unknown option" in r.stderr:
                bad.append(f"{cmd} {flag}: {r.stderr.strip()}")
    assert not bad, "\n".join(bad)


def test_an_unknown_flag_is_still_refused(onnxparity, tmp_path):
    """The check above can fail: a flag no command has is refused by each."""
    for cmd in commands(onnxparity):
        r = run([onnxparity, cmd, "--no-such-flag"], cwd=tmp_path)
        assert r.returncode == 2 and "unknown option '--no-such-flag'" in r.stderr, (cmd, r.stderr)
