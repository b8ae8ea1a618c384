"""Which framework reads a config: attribution from evidence, vocabularies, and the guarantees that follow.

- no framework rule fires on a mapping whose reader was not identified;
- no safe fix writes a value its reader rejects, and no fix is offered for a merely likely reader;
- no suggestion changes the number format the user wrote;
- vocabularies, lock files and data are not read as configs; newer Python grammar is information.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precisionlint.checks import all_rules, find_rule
from precisionlint.core.model import Confidence, SourceFile
from precisionlint.engine.check import check_bytes, check_source
from precisionlint.engine.options import EngineOptions
from precisionlint.frameworks import registry, setting_vocabulary
from precisionlint.frameworks.base import dtype_of
from precisionlint.frameworks.documents import load_document
from precisionlint.sources import format_of
from tests.rule_cases import RULES_DIR

SETTINGS_RULES = [r for r in all_rules() if r.target == "settings"]
COMMON_SIBLINGS = ["callbacks", "logger", "devices", "plugins", "max_epochs", "seed", "model", "lr", "epochs",
                   "strategy", "batch_size", "optimizer", "scheduler", "name"]
VALUES = ["16", "bf16", "fp16", "amp_bf16", "16-mixed", "bf16-mixed", "mixed", "fp32", "32", "half", "amp_fp16",
          "bfloat16", "float16", "no"]


def _findings(name: str, text: str, rules=SETTINGS_RULES):  # type: ignore[no-untyped-def]
    fmt = format_of(name)
    assert fmt is not None
    return check_bytes(name, text.encode(), fmt, EngineOptions(rules=rules, prefilter=False)).findings


@settings(max_examples=150, deadline=None)
@given(
    key=st.sampled_from(["precision", "mixed_precision", "dtype"]),
    value=st.sampled_from(VALUES),
    siblings=st.lists(st.sampled_from(COMMON_SIBLINGS), unique=True, max_size=5),
    nested=st.sampled_from(["", "experiment", "train", "config"]),
)
def test_no_framework_rule_fires_without_evidence(key: str, value: str, siblings: list[str], nested: str) -> None:
    """A precision key beside common words (and any value, Lightning-looking or not) is nobody's in particular."""
    body = "".join(f"{s}: 1\n" for s in siblings) + f"{key}: {value}\n"
    text = body if not nested else f"{nested}:\n" + "".join(f"  {line}\n" for line in body.splitlines())
    assert load_document("c.yaml", text, "yaml").settings == []
    assert _findings("c.yaml", text) == []


def test_the_issue_shapes() -> None:
    composer = "max_seq_len: 2048\nprecision: amp_bf16\ncallbacks:\n  speed_monitor: {window_size: 10}\n"
    assert _findings("composer.yaml", composer) == []
    speechbrain = ("precision: bf16  # Options: bf16, fp16, fp32\nmodel: !new:speechbrain.nnet.linear.Linear\n"
                   "  input_size: 10\n")
    assert _findings("hparams.yaml", speechbrain) == []
    document = load_document("hparams.yaml", speechbrain, "yaml")
    [setting] = document.settings
    assert (setting.framework, setting.confidence) == ("speechbrain", Confidence.CERTAIN)
    wrong = speechbrain.replace("precision: bf16", "precision: bf16-mixed")
    [finding] = _findings("hparams.yaml", wrong)
    assert finding.code == "PL101" and "SpeechBrain rejects precision 'bf16-mixed'" in finding.message
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    assert finding.fix.edits[0].replacement == "bf16"


def _all_case_files() -> list[Path]:
    return sorted(p for p in RULES_DIR.rglob("*") if p.is_file() and format_of(p.name) is not None
                  and not p.name.endswith(".fixed"))


@pytest.mark.parametrize("path", _all_case_files(), ids=lambda p: str(p.relative_to(RULES_DIR)))
def test_fixes_keep_the_reader_and_the_dtype(path: Path) -> None:
    """Every fix of a settings rule on every case file: a safe one only for a certain reader, and what it writes
    is a value that reader accepts, in the dtype the user wrote."""
    fmt = format_of(path.name)
    assert fmt is not None
    result = check_source(SourceFile(str(path), path.name, fmt), EngineOptions(rules=SETTINGS_RULES))
    if result.document is None:
        return
    by_span = {(s.span.line, s.span.column): s for s in result.document.settings}
    for finding in result.findings:
        setting = by_span.get((finding.span.line, finding.span.column))
        if finding.fix is None or setting is None:
            continue
        if finding.fix.applicability == "safe":
            assert setting.confidence == Confidence.CERTAIN, (path, finding)
        vocabulary = setting_vocabulary(setting)
        if vocabulary is None or finding.code not in ("PL101", "PL102"):
            continue
        [edit] = finding.fix.edits
        written = load_document("x.yaml", f"v: {edit.replacement}\n", "yaml").tree[0].entries[0].value.value \
            if fmt == "yaml" else json.loads(edit.replacement.replace("'", '"')) if edit.replacement[:1] in "'\"" \
            else edit.replacement
        assert vocabulary.accepts(written), (path, finding.message, written)
        before = dtype_of(setting.value)
        if before is not None and vocabulary.mode(written) is not None:
            assert vocabulary.mode(written).dtype == before, (path, setting.value, written)  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(
    framework=st.sampled_from(["lightning", "accelerate", "composer", "speechbrain", "neox", "torchtune",
                               "mmengine", "nemo"]),
    dtype=st.sampled_from(["bf16", "bfloat16", "fp16", "float16", "half", "fp32", "float32", "fp8"]),
    kind=st.sampled_from(["", "mixed", "amp", "true", "pure"]),
    separator=st.sampled_from(["-", "_", " ", ""]),
    upper=st.booleans(),
)
def test_suggestions_never_change_the_dtype(framework: str, dtype: str, kind: str, separator: str,
                                            upper: bool) -> None:
    vocabulary = registry.vocabulary(framework, "precision") or registry.vocabulary(framework, "mixed_precision")
    assert vocabulary is not None
    for value in (f"{kind}{separator}{dtype}", f"{dtype}{separator}{kind}"):
        value = value.upper() if upper else value
        wanted = dtype_of(value)
        for suggestion in vocabulary.suggestions(value):
            mode = vocabulary.mode(suggestion)
            assert mode is not None and mode.dtype == wanted, (framework, value, suggestion)


def test_amp_bf16_never_becomes_fp16_anywhere() -> None:
    for framework in ("lightning", "accelerate", "composer", "speechbrain", "neox", "torchtune", "mmengine"):
        vocabulary = registry.vocabulary(framework, "precision") or registry.vocabulary(framework, "mixed_precision")
        assert vocabulary is not None
        for value in ("amp_bf16", "mixed_bf16", "bf16", "BF16-AMP"):
            for suggestion in vocabulary.suggestions(value):
                assert vocabulary.mode(suggestion).dtype == "bf16"  # type: ignore[union-attr]


def test_likely_readers_get_warnings_and_no_value_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from precisionlint.project.model import current

    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("lightning>=2.1\n")  # the 2.x spelling exists in every version
    (tmp_path / ".git").mkdir()
    current().forget()
    text = "trainer:\n  accelerator: gpu\n  devices: 2\n  precision: bf16_mixed\n"
    [finding] = _findings("t.yaml", text, [find_rule("unknown-precision-value")])
    assert finding.severity.label == "warning" and finding.fix is None
    [legacy] = _findings("t.yaml", text.replace("bf16_mixed", "16"), [find_rule("legacy-precision-value")])
    assert legacy.fix is not None and legacy.fix.applicability == "unsafe"
    certain = "trainer:\n  _target_: lightning.pytorch.Trainer\n  precision: 16\n"
    [safe] = _findings("t.yaml", certain, [find_rule("legacy-precision-value")])
    assert safe.fix is not None and safe.fix.applicability == "safe"
    # Without a declared Lightning 2.x floor the 2.x spelling may not exist where it runs: unsafe, and said.
    (tmp_path / "requirements.txt").write_text("pytorch-lightning<2.3\n")
    current().forget()
    [allowed_1x] = _findings("t.yaml", certain, [find_rule("legacy-precision-value")])
    assert allowed_1x.fix is not None and allowed_1x.fix.applicability == "unsafe"
    description = allowed_1x.fix.description
    assert "needs Lightning 2.0 or newer, and this project declares pytorch-lightning<2.3" in description
    # A floor below 2.0 promises that Lightning 1.8 runs it, which rejects '16-mixed': nothing to say.
    (tmp_path / "requirements.txt").write_text("pytorch-lightning>=1.8\n")
    current().forget()
    assert _findings("t.yaml", certain, [find_rule("legacy-precision-value")]) == []
    (tmp_path / "requirements.txt").unlink()
    current().forget()
    [unknown] = _findings("t.yaml", certain, [find_rule("legacy-precision-value")])
    assert unknown.fix is not None and unknown.fix.applicability == "unsafe"
    assert "this project declares no Lightning version" in unknown.fix.description
    current().forget()


def test_a_custom_trainer_section_is_not_lightning() -> None:
    assert load_document("t.yaml", "trainer:\n  precision: fp16\n  epochs: 3\n  lr: 0.1\n", "yaml").settings == []
    hydra_other = "trainer:\n  _target_: mylib.Trainer\n  precision: fp16\n  devices: 1\n"
    assert load_document("t.yaml", hydra_other, "yaml").settings == []


# --- files that are not configs ---------------------------------------------------------------------------------


def _check_tree(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_vocabularies_lock_files_and_data_are_not_read(tmp_path: Path) -> None:
    vocabulary = {f"tok{i}": i for i in range(20000)}
    vocabulary.update({"precision": 27182, "callbacks": 1, "devices": 2, "max_epochs": 3})
    flat = json.dumps(vocabulary)
    (tmp_path / "vocab.json").write_text(flat)
    (tmp_path / "words.json").write_text(flat)  # no telling name: a large flat mapping of scalars
    records = [{"precision": "fp16", "devices": i, "trainer": {"precision": "fp16", "devices": 1}}
               for i in range(3000)]
    (tmp_path / "records.json").write_text(json.dumps(records))
    (tmp_path / "data.json").write_text("\n".join(json.dumps(r) for r in records[:3]) + "\n")  # JSON Lines
    (tmp_path / "package-lock.json").write_text('{"precision": "fp16", "devices": 1}')
    (tmp_path / "ds_config_TEMPLATE.json").write_text('{"fp16": {"enabled": FP16}, "train_batch_size": BS}')
    tokenizer = {"version": "1.0", "truncation": None, "padding": None,
                 "added_tokens": [{"id": 0, "content": "<|endoftext|>", "special": True}],
                 "model": {"type": "BPE", "vocab": {**vocabulary, "fp16": 5}, "merges": ["a b"] * 2000}}
    (tmp_path / "gpt2.json").write_text(json.dumps(tokenizer, indent=2))  # tokenizer.json under another name
    result = _check_tree(tmp_path, ".")
    assert result.returncode == 0, result.stdout + result.stderr
    shown = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--show-frameworks", "."],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
    assert "words.json: not read as a config (a large flat mapping" in shown
    assert "records.json: not read as a config (a large array of records" in shown
    assert "data.json: not read as a config (JSON Lines" in shown
    assert "gpt2.json: not read as a config (a Hugging Face tokenizers file" in shown


def test_show_frameworks_names_the_reader_and_the_evidence(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("max_duration: 10ep\nglobal_train_batch_size: 8\nprecision: amp_bf16\n")
    (tmp_path / "other.yaml").write_text("precision: amp_bf16\ncallbacks: {}\n")
    shown = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--show-frameworks", "."],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0
    assert "run.yaml:\n  composer at line 3: composer (certain) - Composer's `max_duration` beside" in shown.stdout
    assert "precision = 'amp_bf16' -> precision" in shown.stdout
    assert "other.yaml: no framework identified; not checked by framework rules (keys `precision` line 1)" \
        in shown.stdout


def test_show_frameworks_reads_launchers_and_notebooks_without_failing(tmp_path: Path) -> None:
    """A shell launcher's tree is its launch commands, not a mapping: --show-frameworks stopped with an internal
    error at the first launcher with no precision setting (LLaVA-NeXT's scripts)."""
    (tmp_path / "finetune.sh").write_text("#!/bin/bash\ndeepspeed llava/train/train_mem.py --bf16 True\n")
    (tmp_path / "run.yaml").write_text("max_duration: 10ep\nglobal_train_batch_size: 8\nprecision: amp_bf16\n")
    shown = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--show-frameworks", "."],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "finetune.sh: no precision settings" in shown.stdout
    assert "run.yaml:\n  composer at line 3" in shown.stdout


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695")
def test_newer_python_grammar_is_information_and_does_not_fail_the_run(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\n\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n\n"
                                       "with torch.autocast('cuda'):\n    pass\n")
    (tmp_path / "broken.py").write_text("import torch\nwith torch.autocast('cuda')\n    pass\n")
    result = _check_tree(tmp_path, "train.py")
    assert result.returncode == 0, result.stdout
    assert "train.py:4:10: PL005 [info] generic function syntax (PEP 695) needs Python 3.12" in result.stdout
    broken = _check_tree(tmp_path, "broken.py")
    assert broken.returncode == 1 and "PL001 [error] syntax error" in broken.stdout


def test_hyperpyyaml_tags_parse_and_never_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran"
    text = (f"precision: fp16\nhook: !apply:os.system ['touch {sentinel}']\n"
            "model: !new:speechbrain.nnet.linear.Linear\n"
            "  input_size: 10\nlr: !ref <base_lr> * 2\nname: !name:builtins.print\n")
    document = load_document("hparams.yaml", text, "yaml")
    assert not sentinel.exists()
    [setting] = document.settings
    assert (setting.framework, setting.value) == ("speechbrain", "fp16")


_HYPERPYYAML_TAG = re.compile(
    r"(?:^|[\s\[{,:])(!(?:new|name|apply|module):|!ref\b|!copy\b|!include:|!tuple\b|!PLACEHOLDER\b)"
)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(["!new:", "!name:", "!ref", "!copy", "!include:", "!tuple", "!PLACEHOLDER", "!apply:",
                                 "!module:", " ", "\n", "[", "{", ",", ":", "x", "!", "\u3000", "_"]), max_size=12))
def test_hyperpyyaml_tags_are_those_of_one_pattern(pieces: list[str]) -> None:
    """The tag scan finds the tags that a findall of one pattern (a tag at the start or after a separator
    that no earlier tag took) finds."""
    from precisionlint.frameworks.base import _hyperpyyaml_tags

    text = "".join(pieces)
    assert _hyperpyyaml_tags(text) == set(_HYPERPYYAML_TAG.findall(text))
