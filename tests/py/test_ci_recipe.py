"""docs/ci.md's GitHub Actions recipe, executed as written (issue 17,
Must-show 4): the YAML block is read from the document, every job runs in
its own fresh `git clone` of this repository, in `needs` order, every matrix
entry, every `run:` step under `bash -eo pipefail` as Actions runs them.
What is GitHub's is emulated: checkout is the clone, upload/download-artifact
copy through a folder.  The install step gets the already-built tool (the
binary copied, third_party/ linked) unless ONNXPARITY_RECIPE_FULL=1 (see
docs/ci.md, "How the recipe is tested").  The criteria are recorded first
with the commands of the recipe's "Once" section."""
import fnmatch
import glob
import os
import re
import shutil
import subprocess

import pytest

import consumers
from conftest import ROOT

yaml = pytest.importorskip("yaml")
pytest.importorskip("torch")

CI_MD = ROOT / "docs" / "ci.md"


def recipe():
    text = CI_MD.read_text()
    m = re.search(r"<!-- recipe: github-actions.*?-->\s*```yaml\n(.*?)```", text, re.S)
    assert m, "docs/ci.md has no github-actions recipe block"
    return yaml.safe_load(m.group(1))


def once_block():
    text = CI_MD.read_text()
    m = re.search(r"## Once, on a release you trust\s*```sh\n(.*?)```", text, re.S)
    assert m, "docs/ci.md has no 'Once' block"
    return [ln for ln in m.group(1).splitlines() if ln.strip() and not ln.startswith("git ")]


def job_order(jobs):
    done, order = set(), []
    while len(order) < len(jobs):
        ready = [j for j, d in jobs.items() if j not in done
                 and set([d["needs"]] if isinstance(d.get("needs"), str) else d.get("needs", [])) <= done]
        assert ready, "a cycle in needs"
        for j in ready:
            done.add(j)
            order.append(j)
    return order


def expand(s, matrix):
    return re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(matrix[m.group(1)]), str(s))


class Runner:
    def __init__(self, tmp, onnxparity, full):
        self.tmp, self.bin, self.full = tmp, onnxparity, full
        self.artifacts = tmp / "artifacts"
        self.artifacts.mkdir()
        self.n = 0
        shim = tmp / "shim"  # python3 = the one with Debian's torch, as in the debian:12 image
        shim.mkdir()
        (shim / "python3").symlink_to("/usr/bin/python3")
        self.env = dict(os.environ, PATH=f"{shim}:{os.environ['PATH']}")
        self.env.pop("PYTHONPATH", None)
        self.env.pop("GITHUB_STEP_SUMMARY", None)

    def clone(self):
        self.n += 1
        d = self.tmp / f"job{self.n}"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(d)], check=True)
        # the working copy's recipe and sources as they are now (a test runs on uncommitted work)
        tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-m", "-o", "--exclude-standard"], capture_output=True,
                                 text=True, check=True).stdout.split()
        for f in tracked:
            if (ROOT / f).is_file():
                (d / f).parent.mkdir(parents=True, exist_ok=True)  # a new folder is untracked too
                shutil.copy2(ROOT / f, d / f)
        return d

    def install(self, d, script):
        if self.full:
            return self.bash(d, script)
        (d / "build").mkdir(exist_ok=True)
        shutil.copy2(self.bin, d / "build" / "onnxparity")  # copied, not linked
        (d / "third_party").symlink_to((ROOT / "third_party").resolve())
        return subprocess.CompletedProcess([], 0, "", "")

    def bash(self, d, script):
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                              cwd=d, env=self.env, capture_output=True, text=True, timeout=600)

    def upload(self, d, w):
        dest = self.artifacts / w["name"]
        dest.mkdir(parents=True, exist_ok=True)
        pattern = str(w["path"])
        files = glob.glob(str(d / pattern), recursive=True)
        assert files, f"upload-artifact {w['name']}: nothing matches {pattern}"
        for f in files:
            f = os.path.normpath(f)
            base = pattern.split("*")[0].rstrip("/")
            root = d / base if (d / base).is_dir() else (d / base).parent
            rel = os.path.relpath(f, root)
            if os.path.isdir(f):
                shutil.copytree(f, dest / rel, dirs_exist_ok=True)
            else:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest / rel)

    def download(self, d, w):
        names = [w["name"]] if "name" in w else [
            n for n in sorted(os.listdir(self.artifacts)) if fnmatch.fnmatch(n, w["pattern"])]
        assert names, f"download-artifact: no artifact {w}"
        for n in names:
            dest = d / w.get("path", ".")
            if len(names) > 1 and not w.get("merge-multiple"):
                dest = dest / n
            shutil.copytree(self.artifacts / n, dest, dirs_exist_ok=True)


def test_ci_recipe_runs_as_written(onnxparity, tmp_path):
    full = os.environ.get("ONNXPARITY_RECIPE_FULL") == "1"
    wf = recipe()
    runner = Runner(tmp_path, onnxparity, full)
    # "Once, on a release you trust": record the criteria in a clone, commit them
    # to the repository every job checks out (here: the clones of the clone)
    origin = runner.clone()
    runner.install(origin, "")
    for cmd in once_block():
        r = runner.bash(origin, cmd)
        assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    consumers.validate_doc(__import__("json").loads((origin / "parity-criteria.json").read_text()),
                           "parity-criteria.json")
    shutil.copy2(origin / "parity-criteria.json", tmp_path / "parity-criteria.json")
    ran = []
    for name in job_order(wf["jobs"]):
        job = wf["jobs"][name]
        axes = job.get("strategy", {}).get("matrix", {})
        combos = [{}] if not axes else [{k: v} for k, vals in axes.items() for v in vals]
        for matrix in combos:
            d = runner.clone()
            shutil.copy2(tmp_path / "parity-criteria.json", d / "parity-criteria.json")
            for step in job["steps"]:
                uses = step.get("uses", "")
                w = {k: expand(v, matrix) for k, v in step.get("with", {}).items()}
                if uses.startswith("actions/checkout@"):
                    continue  # the clone
                if uses.startswith("actions/upload-artifact@"):
                    runner.upload(d, w)
                    continue
                if uses.startswith("actions/download-artifact@"):
                    runner.download(d, w)
                    continue
                assert not uses, f"{name}: a step this test cannot emulate: {uses}"
                script = expand(step["run"], matrix)
                if step.get("name") == "install":
                    r = runner.install(d, script)
                else:
                    r = runner.bash(d, script)
                assert r.returncode == 0, f"{name} {matrix} step {step.get('name')!r}: exit " \
                                          f"{r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
                ran.append((name, step.get("name"), matrix))
            # what the jobs leave: every JUnit, JSON and summary read by its consumer
            for x in (d / "out").glob("*.xml"):
                consumers.check_junit(x)
            for x in (d / "out").glob("*.json"):
                consumers.validate_doc(__import__("json").loads(x.read_text()), str(x))
            if name == "parity":
                summary = (d / "out" / "summary.md").read_text()
                assert summary.startswith("### onnxparity gate: pass"), summary
            if name == "parity-merge":
                merged = __import__("json").loads((d / "out" / "merged.json").read_text())
                assert merged["verdict"] == "pass" and merged["summary"]["fixtures"] == 6
                assert sorted(merged["merged_from"]) == [f"out/shard-{i}.json" for i in range(3)]
    assert [r[0] for r in ran].count("parity-shard") == 3 * 2  # three shards: install, check
