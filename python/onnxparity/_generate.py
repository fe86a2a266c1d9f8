"""The decode loop of a decode bundle in this process (docs/generate.md):
``onnxparity.generate(bundle, ...)`` runs what ``onnxparity generate
--format json`` runs, through the library (api.h: onp_api_generate), and
returns the document typed.  Needs the library only, not torch."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import api

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class GeneratePrompt:
    """One prompt's generation (the document's prompts[]): its class
    ("agree", "near-tie", "defect"), the first divergent step, the first
    token divergence (``divergence``: step, eager_token, ort_token, margin,
    envelope_max), where its defect is placed (``where``: kind, step, layer,
    entry), eager's EOS step, a row stopping on one side only
    (``stop_divergence``), why in words; ``steps`` every step judged."""
    index: int
    batch: int
    row: int
    cls: str
    first_divergent_step: Optional[int]
    first_token_step: Optional[int]
    divergence: Optional[Dict[str, Any]]
    where: Dict[str, Any]
    eos_step: Optional[int]
    stop_divergence: Optional[Dict[str, Any]]
    why: Optional[str]
    steps: List[Dict[str, Any]] = field(repr=False)


@dataclass(frozen=True)
class GenerateResult:
    """What ``onnxparity generate --format json`` prints, typed: the
    verdict ("pass", "fail"), the exit code (0 pass, 1 a defect or a release
    criterion), the generation settings, the summary (classes, tokens,
    ``prompt_agreement`` with its bound), the criteria, the logit error's
    growth per step, every prompt."""
    verdict: str
    exit_code: int
    steps: int
    generation: Dict[str, Any]
    summary: Dict[str, Any]
    criteria: Dict[str, Any]
    step_ratio: List[Any]
    prompts: List[GeneratePrompt]
    document: Dict[str, Any] = field(repr=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def defects(self) -> List[GeneratePrompt]:
        return [p for p in self.prompts if p.cls == "defect"]


def _prompt(p: Dict[str, Any]) -> GeneratePrompt:
    return GeneratePrompt(index=p["index"], batch=p["batch"], row=p["row"], cls=p["class"],
                          first_divergent_step=p["first_divergent_step"],
                          first_token_step=p["first_token_step"], divergence=p["divergence"],
                          where=p["where"], eos_step=p["eos_step"],
                          stop_divergence=p["stop_divergence"], why=p["why"], steps=p["steps"])


def generate(bundle: PathLike, *, steps: Optional[int] = None, strict: bool = False,
             max_differ_rate: Optional[float] = None, min_divergence_step: Optional[int] = None,
             rtol: Optional[float] = None, atol: Optional[float] = None,
             **options: Any) -> GenerateResult:
    """Run a decode bundle's loop (onnxparity.capture_decode) in ONNX
    Runtime and judge it token by token, in this process, as ``onnxparity
    generate BUNDLE --format json`` does (docs/generate.md).  ``steps``: how
    many (None: all recorded); ``strict``: a near-tie fails too; the release
    criteria ``max_differ_rate`` (the bound on the share of prompts whose
    generation differs) and ``min_divergence_step``; ``rtol``/``atol`` the
    logits' tolerance.  Options: the ONNX Runtime ones, as check takes them
    (ort_lib, opt_level, provider, threads, ...).

    Returns a GenerateResult whatever the verdict.  Raises UsageError (bad
    options, more steps than recorded, a name the graph lacks), FileError /
    FormatError (an unreadable or malformed bundle, the member or array
    named), RuntimeFailure (ONNX Runtime refuses the model)."""
    own: List[str] = []
    if steps is not None:
        own += ["--steps", str(steps)]
    if strict:
        own.append("--strict")
    if max_differ_rate is not None:
        own += ["--max-differ-rate", repr(float(max_differ_rate))]
    if min_divergence_step is not None:
        own += ["--min-divergence-step", str(min_divergence_step)]
    for name, v in (("--rtol", rtol), ("--atol", atol)):
        if v is not None:
            own += [name, repr(float(v))]
    extra = list(options.pop("extra_args", ())) + own
    rc, text = api._call("onp_api_generate", bundle, None, (), dict(options, extra_args=extra))
    doc = json.loads(text)
    return GenerateResult(verdict=doc["verdict"], exit_code=rc, steps=doc["steps"],
                          generation=doc["generation"], summary=doc["summary"],
                          criteria=doc["criteria"], step_ratio=doc["step_ratio"],
                          prompts=[_prompt(p) for p in doc["prompts"]], document=doc)
