"""The engine's prefilter and model gate are derived from the words each rule and framework declares
(CONFIG_WORDS, PYTHON_WORDS, MODEL_WORDS next to each check; CONFIG_WORDS, PYTHON_WORDS in each framework module,
copied by the generated catalog). Each rule's cases hold its own words, and the derived lists select the files the
lists kept by hand selected."""

from __future__ import annotations

import sys
from pathlib import Path

from precisionlint.checks import all_rules
from precisionlint.checks.catalog import FRAMEWORK_WORDS, RULE_WORDS
from precisionlint.engine.gate import SCRIPT_MODEL_WORDS, needs_script_model, word_probe
from precisionlint.engine.prefilter import CONFIG_KEYWORDS, PYTHON_KEYWORDS
from precisionlint.sources import format_of

sys.path.insert(0, str(Path(__file__).parent))
from rule_cases import load_cases, project_files  # noqa: E402

# The lists as the engine kept them by hand until they were derived from the declarations. A file that holds one
# of these words holds one of the derived ones and the other way round, so the same files are read, parsed and
# given the model. A declaration that adds a word reads more files: write the word here too, after measuring
# what it costs on a real tree (benchmarks/run.py).
HAND_KEPT_CONFIG = {
    b"precision", b"fp16", b"bf16", b"bfloat16", b"tf32", b"float16", b"fp8", b"loss_scale", b'"amp"', b"amp:",
    b"amp =", b"AMP:", b"_component_: torchtune.", b'"_component_": "torchtune.', b"deepspeed_config",
    b"--fp4-",
}
HAND_KEPT_PYTHON = {
    b"autocast", b"GradScaler", b".scale(", b"custom_fwd", b"custom_bwd", b"half", b"float16", b"precision",
    b"fp16", b"bf16", b"tf32", b"fp32_precision", b"deepspeed=", b"AmpOptimWrapper", b"DelayedScaling",
    b"CurrentScaling", b"BlockScaling", b"Float8LinearConfig", b"convert_to_float8_training",
}
HAND_KEPT_MODEL = {
    "autocast", "GradScaler", ".scale(", "unscale_", "custom_fwd", "custom_bwd", "tf32", "fp32_precision",
    "is_bf16_supported", "matmul_precision", "MixedPrecisionPolicy", "MixedPrecision(",
}


def test_the_derived_lists_are_the_hand_kept_lists() -> None:
    assert set(CONFIG_KEYWORDS) == HAND_KEPT_CONFIG
    assert set(PYTHON_KEYWORDS) == HAND_KEPT_PYTHON
    assert set(SCRIPT_MODEL_WORDS) == HAND_KEPT_MODEL
    assert len(set(CONFIG_KEYWORDS)) == len(CONFIG_KEYWORDS)  # each word scanned for once


def test_declared_words_are_bytes_for_the_prefilter_and_text_for_the_model() -> None:
    for _, config, python, model, tree in RULE_WORDS:
        assert all(isinstance(word, bytes) and word for word in (*config, *python))
        assert all(isinstance(word, str) and word.isascii() and word for word in (*model, *tree))
    for _, config, python in FRAMEWORK_WORDS:
        assert all(isinstance(word, bytes) and word for word in (*config, *python))


def _words_of(rule_module: str, reads: tuple[str, ...]) -> tuple[set[bytes], set[bytes], set[str]]:
    """A rule's own words, with those of the frameworks it reads (READS; any-framework: every framework)."""
    config: set[bytes] = set()
    python: set[bytes] = set()
    model: set[str] = set()
    for module, own_config, own_python, own_model, own_tree in RULE_WORDS:
        if module == rule_module:
            config.update(own_config)
            python.update(own_python)
            python.update(word.encode() for word in own_tree)
            model.update(own_model)
    for framework, framework_config, framework_python in FRAMEWORK_WORDS:
        if framework in reads or "any-framework" in reads:
            config.update(framework_config)
            python.update(framework_python)
    return config, python, model


def _reported_files(case) -> list[Path]:  # type: ignore[no-untyped-def]
    """The case files expected.txt names a finding of the case's rule in."""
    files = [*case.bad, *(path for project in case.bad_projects for path in project_files(project))]
    return [path for path in files if path.exists() and str(path.relative_to(case.folder)) in case.expected]


# Rules that report on any file the others' words let through (what a key or a comment says, whatever it is
# about): they declare no words of their own.
ON_EVERY_READ_FILE = {"duplicate-key", "invalid-suppression", "unused-suppression"}
# Script rules the model gate serves by what a file holds together (engine.gate.needs_script_model: a half cast
# beside an optimizer, a 16-bit checkpoint load beside a trainer, a clip beside a framework's scaled backward),
# besides any model words they declare.
COMBINED = {"adam-eps-underflow-fp16", "half-params-without-master-weights", "scaler-with-half-params",
            "clip-before-unscale"}


def test_each_rule_s_bad_cases_hold_its_own_words() -> None:
    """A rule declares the words without which it has nothing to report: every file it reports on in its cases
    holds one of them (or of the frameworks it reads), and a script rule's Python files one of its model words."""
    rules = {rule.name: rule for rule in all_rules() if rule.module is not None}
    missing: list[str] = []
    checked = 0
    for case in load_cases():
        rule = rules.get(case.rule_name)
        if rule is None or rule.name in ON_EVERY_READ_FILE:
            continue
        config, python, model = _words_of(rule.module, rule.reads)  # type: ignore[arg-type]
        for path in _reported_files(case):
            fmt = format_of(path.name)
            data = path.read_bytes()
            words = python if fmt in ("python", "notebook") else config
            if not any(word in data for word in words):
                missing.append(f"{path}: none of {rule.name}'s words")
            if rule.target == "script" and fmt == "python":
                text = data.decode("utf-8")
                probe = word_probe(text)
                if not any(word in probe for word in model) and not (
                        rule.name in COMBINED and needs_script_model(text)):
                    missing.append(f"{path}: none of {rule.name}'s model words")
            checked += 1
    assert not missing, "declare the words these files hold next to the rule's check:\n" + "\n".join(missing)
    assert checked > 100


def test_each_script_rule_without_model_words_is_one_the_combined_gate_serves() -> None:
    """Script rules that declare no model word get the model through needs_script_model's combinations."""
    declared = {module for module, _, _, model, _ in RULE_WORDS if model}
    for rule in all_rules():
        if rule.target == "script" and rule.module not in declared:
            assert rule.name in COMBINED, f"{rule.name}: declare MODEL_WORDS next to its check"
