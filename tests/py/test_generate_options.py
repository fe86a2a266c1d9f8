"""generate's own options (--steps, --strict, --max-differ-rate,
--min-divergence-step, --rtol, --atol) are read by one parser, the
library's onp_decode_args_parse: the tool and onnxparity.generate (the
in-process binding) take the same values and refuse the same ones with the
same one-line message, exit 2 / UsageError, before any bundle is read.

    /usr/bin/python3 -m pytest -q tests/py/test_generate_options.py
"""
import pytest

from conftest import run

# (the binding's keyword, its value, the tool's words, what the message says)
REFUSED = [
    ("min_divergence_step", 2000000, ["--min-divergence-step", "2000000"],
     "--min-divergence-step: wants an integer from 0 to 1048576, not '2000000'"),
    ("min_divergence_step", -1, ["--min-divergence-step", "-1"],
     "--min-divergence-step: wants an integer from 0 to 1048576, not '-1'"),
    ("max_differ_rate", 1.5, ["--max-differ-rate", "1.5"],
     "--max-differ-rate: wants a number in [0, 1], not '1.5'"),
    ("steps", 0, ["--steps=0"], "--steps: wants an integer from 1 to 1048576, not '0'"),
    ("steps", 1 << 21, ["--steps", str(1 << 21)],
     f"--steps: wants an integer from 1 to 1048576, not '{1 << 21}'"),
    ("atol", -1e-3, ["--atol", "-0.001"], "--atol: wants a number >= 0, not '-0.001'"),
]


@pytest.mark.parametrize("kw,value,words,says", REFUSED, ids=[w[0] + "=" + str(w[1]) for w in REFUSED])
def test_the_tool_and_the_binding_refuse_alike(onnxparity, lib, tmp_path, kw, value, words, says):
    import onnxparity as onp
    bundle = tmp_path / "not-read"  # refused before the bundle is opened
    r = run([onnxparity, "generate", bundle, *words])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [f"onnxparity: {says}"]
    with pytest.raises(onp.UsageError) as e:
        onp.generate(bundle, **{kw: value})
    assert str(e.value) == says


def test_the_largest_values_pass_the_parser_in_both(onnxparity, lib, tmp_path):
    # within the limits: past the options, to the missing bundle (exit 3)
    import onnxparity as onp
    bundle = tmp_path / "none"
    r = run([onnxparity, "generate", bundle, "--steps", "1048576", "--min-divergence-step",
             "1048576", "--max-differ-rate", "1", "--strict", "--rtol", "0"])
    assert r.returncode == 3 and "generate.json" in r.stderr, r.stderr
    with pytest.raises(onp.FileError, match="generate.json"):
        onp.generate(bundle, steps=1048576, min_divergence_step=1048576, max_differ_rate=1.0,
                     strict=True, rtol=0.0)
