"""Every rule's case folder: bad inputs give exactly the expected findings, good inputs give none."""

from __future__ import annotations

import pytest

from precisionlint.checks import all_rules, find_rule
from precisionlint.core.model import SourceFile
from precisionlint.engine.check import check_source
from precisionlint.engine.options import EngineOptions
from precisionlint.sources import format_of
from tests.rule_cases import RuleCase, load_cases, project_files, shared_correct_inputs

CASES = load_cases()


def _options(case: RuleCase, gpu_names: list[str] | None = None) -> EngineOptions:
    rule = find_rule(case.rule_name)
    assert rule is not None, f"rules/{case.rule_name}: no rule of that name"
    gpus: tuple = ()
    names = case.gpus if gpu_names is None else gpu_names
    if names:
        from precisionlint.hardware.names import find_gpu

        gpus = tuple(find_gpu(name) for name in names)
        assert all(gpus), f"rules/{case.rule_name}: unknown GPU among {names}"
    return EngineOptions(rules=[rule], gpus=gpus)


def _project_gpus(project) -> list[str] | None:
    """A project case's own target GPUs, `[tool.precisionlint] gpus` in its pyproject.toml, as `check .` reads
    them; None when it names none (the folder's options.toml applies)."""
    import tomlkit

    pyproject = project / "pyproject.toml"
    if not pyproject.exists():
        return None
    table = tomlkit.parse(pyproject.read_text()).unwrap().get("tool", {}).get("precisionlint", {})
    return list(table["gpus"]) if "gpus" in table else None


def _project_findings(case: RuleCase, project, monkeypatch) -> dict[str, list[tuple[int, int, str]]]:
    """Every file of a project case checked from inside the project, as `precisionlint check .` would."""
    from precisionlint.project.model import current

    current().forget()
    monkeypatch.chdir(project)
    options = _options(case, _project_gpus(project))
    found: dict[str, list[tuple[int, int, str]]] = {}
    for path in project_files(project):
        relative = path.relative_to(project).as_posix()
        fmt = format_of(path.name)
        assert fmt is not None
        result = check_source(SourceFile(relative, relative, fmt), options)
        for f in result.findings:
            found.setdefault(f"{project.name}/{relative}", []).append((f.span.line, f.span.column, f.code))
    current().forget()
    return {name: sorted(rows) for name, rows in found.items()}


def _findings(case: RuleCase, path) -> list[tuple[int, int, str]]:
    fmt = format_of(path.name)
    assert fmt is not None
    result = check_source(SourceFile(str(path), path.name, fmt), _options(case))
    return sorted((f.span.line, f.span.column, f.code) for f in result.findings)


def test_every_rule_has_a_case_folder() -> None:
    folders = {case.rule_name for case in CASES}
    # internal-error cannot be produced by any input file (it is a bug by definition): tests/test_engine.py
    # provokes it with a rule that raises.
    missing = [r.name for r in all_rules() if r.name not in folders and r.name != "internal-error"]
    assert not missing, f"rules without a case folder under rules/: {missing}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule_name)
def test_folder_has_bad_and_good_inputs(case: RuleCase) -> None:
    assert case.bad or case.bad_projects, f"rules/{case.rule_name} has no bad* input"
    assert case.good or case.good_projects, f"rules/{case.rule_name} has no good* input"


BAD = [(c, p) for c in CASES for p in c.bad]
GOOD = [(c, p) for c in CASES for p in c.good]


@pytest.mark.parametrize("case,path", BAD, ids=[f"{c.rule_name}/{p.name}" for c, p in BAD])
def test_bad_case_gives_expected_findings(case: RuleCase, path) -> None:
    import sys

    if case.python_below is not None and sys.version_info[:2] >= case.python_below:
        pytest.skip(f"this Python parses rules/{case.rule_name}/{path.name}")
    expected = sorted(case.expected.get(path.name, []))
    assert expected, f"rules/{case.rule_name}/expected.txt lists nothing for {path.name}"
    assert _findings(case, path) == expected


@pytest.mark.parametrize("case,path", GOOD, ids=[f"{c.rule_name}/{p.name}" for c, p in GOOD])
def test_good_case_gives_no_finding(case: RuleCase, path) -> None:
    assert _findings(case, path) == []


BAD_PROJECTS = [(c, p) for c in CASES for p in c.bad_projects]
GOOD_PROJECTS = [(c, p) for c in CASES for p in c.good_projects]


@pytest.mark.parametrize("case,project", BAD_PROJECTS, ids=[f"{c.rule_name}/{p.name}" for c, p in BAD_PROJECTS])
def test_bad_project_gives_expected_findings(case: RuleCase, project, monkeypatch) -> None:
    expected = {
        name: sorted(rows) for name, rows in case.expected.items() if name.startswith(f"{project.name}/")
    }
    assert expected, f"rules/{case.rule_name}/expected.txt lists nothing for {project.name}/"
    assert _project_findings(case, project, monkeypatch) == expected


@pytest.mark.parametrize("case,project", GOOD_PROJECTS, ids=[f"{c.rule_name}/{p.name}" for c, p in GOOD_PROJECTS])
def test_good_project_gives_no_finding(case: RuleCase, project, monkeypatch) -> None:
    assert _project_findings(case, project, monkeypatch) == {}


SHARED, ALLOWED = shared_correct_inputs()


@pytest.mark.parametrize("path", SHARED, ids=[p.name for p in SHARED])
def test_correct_training_loops_give_no_finding_of_any_rule(path) -> None:
    allowed = {r.code for name in ALLOWED for r in [find_rule(name)] if r is not None}
    rules = [r for r in all_rules() if r.code not in allowed]
    fmt = format_of(path.name)
    assert fmt is not None
    # Checked where it lives (rules/ is no package of precisionlint's: the floor of its optional torch does not
    # speak for these files).
    result = check_source(SourceFile(str(path), str(path), fmt), EngineOptions(rules=rules))
    assert [(f.span.line, f.code, f.message) for f in result.findings] == []
