"""The rule catalog is generated from the rule modules' declarations and kept in step by this test; the rules'
needs are declared, not listed by hand elsewhere; running the tool never writes into its own package."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from precisionlint.checks import all_rules, make_catalog

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "precisionlint"

# What a rule module writes when its findings depend on the project around the file.
_READS_PROJECT = re.compile(r"ctx\.project|\.linked\(|_pins|precisionlint\.project|_accelerator|project_of")


def test_the_catalog_is_in_step_with_the_rule_modules() -> None:
    assert make_catalog.current() == make_catalog.render(), (
        "precisionlint/checks/catalog.py is out of date: run `python -m precisionlint.checks.make_catalog`")


def test_the_calls_catalog_is_in_step_with_the_framework_modules() -> None:
    assert make_catalog.current(make_catalog.CALLS_CATALOG) == make_catalog.render_calls(), (
        "precisionlint/frameworks/calls_catalog.py is out of date: run `python -m precisionlint.checks.make_catalog`")


def test_every_framework_call_is_read_from_its_framework_module() -> None:
    from precisionlint.frameworks import lightning
    from precisionlint.frameworks.python_calls import CALLS

    assert all(call in CALLS for call in lightning.PYTHON_CALLS)
    assert {call.framework for call in CALLS} == {"lightning", "composer", "hf", "accelerate", "torch"}


def test_the_generator_check_mode_fails_on_a_stale_catalog(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "catalog.py"
    stale.write_text(make_catalog.render().replace("'PL104'", "'PL999'"), encoding="utf-8")
    monkeypatch.setattr(make_catalog, "CATALOG", str(stale))
    stale_calls = tmp_path / "calls_catalog.py"
    stale_calls.write_text(make_catalog.render_calls(), encoding="utf-8")
    monkeypatch.setattr(make_catalog, "CALLS_CATALOG", str(stale_calls))
    assert make_catalog.main(["--check"]) == 1
    assert make_catalog.main([]) == 0
    assert make_catalog.main(["--check"]) == 0
    stale_calls.write_text(make_catalog.render_calls().replace("'composer'", "'other'"), encoding="utf-8")
    assert make_catalog.main(["--check"]) == 1
    assert make_catalog.main([]) == 0
    assert make_catalog.main(["--check"]) == 0


def test_every_rule_module_is_in_the_catalog() -> None:
    listed = {rule.module for rule in all_rules() if rule.module is not None}
    assert listed == set(make_catalog.rule_module_names())


def test_a_rule_that_reads_the_project_declares_it() -> None:
    """The cache keys a result by the project's pins only for rules that declare NEEDS_PROJECT: a rule that reads
    pins or linked files without declaring it would get stale cached results in silence."""
    for rule in all_rules():
        if rule.module is None:
            continue
        text = (PACKAGE / "checks" / f"{rule.module}.py").read_text(encoding="utf-8")
        reads_project = bool(_READS_PROJECT.search(text)) or rule.needs_gpu  # the engine reads the accelerator
        assert rule.needs_project == reads_project, rule.name


def _tree(folder: Path) -> dict[str, int]:
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


def test_check_writes_nothing_into_an_installed_package(tmp_path) -> None:
    """An installed copy of the package (as `pip install .` lays it out) is never written by a run: files left
    there outlive an uninstall and shadow a later editable install."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "precisionlint", ignore=shutil.ignore_patterns("__pycache__"))
    before = _tree(site)
    project = tmp_path / "work"
    shutil.copytree(ROOT / "examples" / "project", project)
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    for arguments in (["check", "--no-cache", "."], ["check", "."], ["rules"], ["rule", "PL104"]):
        done = subprocess.run([sys.executable, "-m", "precisionlint", *arguments], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode in (0, 1), done.stderr
    assert _tree(site) == before
