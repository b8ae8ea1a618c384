"""The registry lists rules from the generated catalog; importing each module must agree with it."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

from precisionlint.checks import all_rules


def test_catalog_metadata_equals_the_module_constants() -> None:
    for rule in all_rules():
        if rule.module is None:
            continue
        module = importlib.import_module(f"precisionlint.checks.{rule.module}")
        assert (rule.code, rule.name, rule.severity, rule.summary, rule.target) == (
            module.CODE, module.NAME, module.SEVERITY, module.SUMMARY, module.TARGET), rule.module
        assert rule.needs_gpu == getattr(module, "NEEDS_GPU", False)
        assert rule.fixable == getattr(module, "FIXABLE", False)
        assert rule.needs_project == getattr(module, "NEEDS_PROJECT", False)
        assert rule.func is module.check
        assert rule.doc == (module.__doc__ or "").strip() and "## What it does" in rule.doc


def test_rules_pickle_for_worker_processes() -> None:
    for rule in all_rules():
        copy = pickle.loads(pickle.dumps(rule))
        assert copy == rule and copy.summary == rule.summary and copy.severity == rule.severity
        assert copy.func is rule.func


def test_checking_a_toml_file_imports_no_script_or_hardware_rule(tmp_path) -> None:
    (tmp_path / "c.toml").write_text('[trainer_config]\nprecision = "16"\n')
    code = (
        "import sys\n"
        "from precisionlint.cli.commands import main\n"
        "try:\n    main(['check', '--no-progress', 'c.toml'])\n"
        "except SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('precisionlint.script', 'precisionlint.hardware',"
        " 'precisionlint.checks.missing', 'ruamel', 'torch')))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


def test_every_rule_says_what_it_reads_in_known_words() -> None:
    """READS is what `precisionlint rules` and the README's Reads column show: framework names of the
    registry or the words of READ_KINDS, never free text that could drift from the frameworks' own names."""
    from precisionlint.checks import READ_KINDS
    from precisionlint.frameworks.registry import ALL_FRAMEWORKS

    known = {module.NAME for module in ALL_FRAMEWORKS} | set(READ_KINDS)
    for rule in all_rules():
        assert rule.reads, f"{rule.name} declares no READS"
        assert set(rule.reads) <= known, (rule.name, set(rule.reads) - known)
        assert len(set(rule.reads)) == len(rule.reads), rule.name
        if rule.module is not None:
            module = importlib.import_module(f"precisionlint.checks.{rule.module}")
            assert ", ".join(rule.reads) == module.READS, rule.module  # the catalog equals the constant
        if rule.target == "script":
            assert "torch" in rule.reads, rule.name  # script rules read the training-step model of PyTorch code


def test_unknown_precision_value_reads_every_framework_with_a_value_list() -> None:
    """The rule checks any setting whose framework declares a vocabulary: its READS must name exactly those."""
    from precisionlint.checks import find_rule
    from precisionlint.frameworks.registry import ALL_FRAMEWORKS

    rule = find_rule("unknown-precision-value")
    assert rule is not None
    with_values = {module.NAME for module in ALL_FRAMEWORKS if module.VOCABULARIES}
    assert set(rule.reads) == with_values
    assert f"({len(with_values)} frameworks)" in rule.summary
