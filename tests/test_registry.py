"""The registry lists rules from their modules' source text; importing each module must agree with it."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

from precisionlint.checks import all_rules


def test_scanned_metadata_equals_the_module_constants() -> None:
    for rule in all_rules():
        if rule.module is None:
            continue
        module = importlib.import_module(f"precisionlint.checks.{rule.module}")
        assert (rule.code, rule.name, rule.severity, rule.summary, rule.target) == (
            module.CODE, module.NAME, module.SEVERITY, module.SUMMARY, module.TARGET), rule.module
        assert rule.needs_gpu == getattr(module, "NEEDS_GPU", False)
        assert rule.fixable == getattr(module, "FIXABLE", False)
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
        "from precisionlint.cli import main\n"
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
            assert ", ".join(rule.reads) == module.READS, rule.module  # the scanned text equals the constant
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


def _write_rule(folder, name: str, summary: str) -> None:
    import os

    path = folder / f"{name}.py"
    path.write_text(
        f'CODE = "PL9{len(name)}"\nNAME = "{name}"\nSEVERITY = Severity.WARNING\nSUMMARY = "{summary}"\n'
        'TARGET = "settings"\nREADS = "torch"\n'
    )
    os.utime(path, ns=(1_000_000_123, 1_000_000_123))  # an old modification time, not a whole second


def _settle() -> None:
    import time

    from precisionlint.cache import RACY_SECONDS

    time.sleep(RACY_SECONDS + 0.05)  # the change time cannot be set back: wait until a later write would move it


def test_scanned_metadata_is_kept_and_never_served_after_a_rule_file_changes(tmp_path) -> None:
    """The metadata scanned from the rule sources is stored beside the bytecode; an edit that keeps the size and
    puts the modification time back, an added rule file and a removed one are each seen by the next run."""
    import os

    from precisionlint.checks import _REGISTRY_CACHE, _scanned_metadata

    _write_rule(tmp_path, "alpha", "first text")
    _settle()
    assert _scanned_metadata(str(tmp_path))["alpha"]["SUMMARY"] == "first text"
    stored = tmp_path / "__pycache__" / _REGISTRY_CACHE
    assert stored.is_file()
    written = stored.stat().st_mtime_ns
    assert _scanned_metadata(str(tmp_path))["alpha"]["SUMMARY"] == "first text"
    assert stored.stat().st_mtime_ns == written  # served from the table, not written again

    _write_rule(tmp_path, "alpha", "other text")  # same size, same modification time: only ctime moves
    assert _scanned_metadata(str(tmp_path))["alpha"]["SUMMARY"] == "other text"

    _write_rule(tmp_path, "beta", "added")
    assert set(_scanned_metadata(str(tmp_path))) == {"alpha", "beta"}
    os.unlink(tmp_path / "beta.py")
    assert set(_scanned_metadata(str(tmp_path))) == {"alpha"}


def test_a_rule_file_written_just_now_is_scanned_but_not_recorded(tmp_path) -> None:
    from precisionlint.checks import _REGISTRY_CACHE, _scanned_metadata

    (tmp_path / "gamma.py").write_text(
        'CODE = "PL901"\nNAME = "gamma"\nSEVERITY = Severity.INFO\nSUMMARY = "s"\nTARGET = "script"\n')
    assert _scanned_metadata(str(tmp_path))["gamma"]["NAME"] == "gamma"
    assert not (tmp_path / "__pycache__" / _REGISTRY_CACHE).exists()  # a same-tick rewrite could hide from stat
