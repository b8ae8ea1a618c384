"""`check --fix` and `check --diff`: the rule book's .fixed files, file keeping (bytes, mode, BOM, line endings,
mtime of untouched files), exit codes, overlapping and refused fixes, and the advise --write helpers."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from precisionlint.checks import CheckContext, Rule, find_rule
from precisionlint.cli.commands import main
from precisionlint.core.model import Edit, Finding, Fix, Severity
from precisionlint.engine.options import EngineOptions
from precisionlint.fix.apply import fix_text, unified_diff
from precisionlint.fix.edits import apply_edits
from precisionlint.fix.plan import select_fixes
from precisionlint.fix.setting_changes import plan_setting_changes
from precisionlint.fix.verify import Expectation, parse_config, same_except
from precisionlint.fix.write import rewrite, write_report
from precisionlint.frameworks.documents import load_document
from precisionlint.sources import Limits
from tests.rule_cases import RuleCase, load_cases

BOM = b"\xef\xbb\xbf"
LEGACY_TOML = b'[trainer_config]\nprecision = 16  # Lightning 1.x\nmax_epochs = 10\n'
LEGACY_TOML_FIXED = b'[trainer_config]\nprecision = "16-mixed"  # Lightning 1.x\nmax_epochs = 10\n'


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory to run in, with its own config so no pyproject.toml above it is picked up. It
    declares Lightning 2.2, so that the fix of a Lightning 1.x spelling is safe here (without a declared
    Lightning 2.x floor that fix is unsafe)."""
    (tmp_path / "precisionlint.toml").write_text('target-versions = { lightning = "2.2" }\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_cli(workdir: Path, *args: str) -> Result:
    config = str(workdir / "precisionlint.toml")
    return CliRunner().invoke(main, ["check", "--config", config, "--no-progress", *args], catch_exceptions=False)


# ---------------------------------------------------------------------------------------------------------------
# The rule book: every bad input of a folder with .fixed files
# ---------------------------------------------------------------------------------------------------------------

CASES = load_cases()
FIXABLE_CASES = [c for c in CASES if any(c.fixed_for(p) for p in c.bad)]
FIX_INPUTS = [(c, p) for c in FIXABLE_CASES for p in c.bad if not p.is_symlink()]


def _fix_args(case: RuleCase) -> list[str]:
    args = ["--fix", "--select", case.rule_name]
    if case.unsafe_fixes:
        args.append("--unsafe-fixes")
    for gpu in case.gpus:
        args += ["--gpu", gpu]
    return args


def test_the_fixable_config_rules_have_fixed_files() -> None:
    names = {c.rule_name for c in FIXABLE_CASES}
    for rule in ("unknown-precision-value", "legacy-precision-value", "invalid-tf32-setting",
                 "tf32-ignored-under-mixed-precision", "static-loss-scale"):
        assert rule in names, f"rules/{rule} has no .fixed file"


@pytest.mark.parametrize("case,path", FIX_INPUTS, ids=[f"{c.rule_name}/{p.name}" for c, p in FIX_INPUTS])
def test_fix_gives_the_fixed_file(case: RuleCase, path: Path, workdir: Path) -> None:
    copy = workdir / path.name
    shutil.copyfile(path, copy)
    expected_path = case.fixed_for(path)
    # A bad input without .fixed has no applicable fix: --fix must leave it byte for byte.
    expected = expected_path.read_bytes() if expected_path else path.read_bytes()

    before = _rule_findings(workdir, case, copy.name)
    unfixable = [f for f in before if not _applicable(case, f)]

    run_cli(workdir, *_fix_args(case), copy.name)
    assert copy.read_bytes() == expected

    again = run_cli(workdir, *_fix_args(case), copy.name)
    assert copy.read_bytes() == expected, "a second --fix changed the file again"
    assert "Fixed" not in again.output

    # What is left of this rule is exactly what had no fix to apply.
    left = _rule_findings(workdir, case, copy.name)
    assert not [f for f in left if _applicable(case, f)], f"fixable findings left: {left}"
    assert len(left) == len(unfixable), f"the fixed file has other findings of {case.rule_name}: {left}"


FIX_PROJECTS = [(c, p) for c in CASES for p in c.bad_projects if any(p.rglob("*.fixed"))]


@pytest.mark.parametrize("case,project", FIX_PROJECTS, ids=[f"{c.rule_name}/{p.name}" for c, p in FIX_PROJECTS])
def test_fix_gives_the_fixed_project(case: RuleCase, project: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A project case's `<file>.fixed`: `check --fix .` run inside a copy of the project (its pins decide
    the fix's safety) leaves each file as its .fixed file says, and files without one as they were."""
    from precisionlint.project.model import current

    copy = tmp_path / project.name
    shutil.copytree(project, copy)
    monkeypatch.chdir(copy)
    args = ["check", "--no-progress", "--no-cache", *_fix_args(case), "."]
    current().forget()
    CliRunner().invoke(main, args, catch_exceptions=False)
    current().forget()
    for original in project.rglob("*"):
        if not original.is_file() or original.suffix == ".fixed":
            continue
        fixed = original.with_name(original.name + ".fixed")
        expected = fixed.read_bytes() if fixed.exists() else original.read_bytes()
        assert (copy / original.relative_to(project)).read_bytes() == expected, original.name
    again = CliRunner().invoke(main, args, catch_exceptions=False)
    current().forget()
    assert "Fixed" not in again.output


def _rule_findings(workdir: Path, case: RuleCase, name: str) -> list[dict]:
    report = run_cli(workdir, "--select", case.rule_name, "--output-format", "json",
                     *[a for g in case.gpus for a in ("--gpu", g)], name)
    return [f for f in json.loads(report.output) if f["name"] == case.rule_name]


def _applicable(case: RuleCase, finding: dict) -> bool:
    fix = finding["fix"]
    return bool(fix and fix["edits"] and (fix["applicability"] == "safe" or case.unsafe_fixes))


def test_fixable_bad_inputs_have_fixed_files(workdir: Path) -> None:
    """Any bad input of any rule that --fix (with unsafe fixes) changes must have its .fixed file, so the
    rule book shows every fix."""
    missing = []
    for case in CASES:
        for path in case.bad:
            if path.is_symlink() or case.fixed_for(path):
                continue
            copy = workdir / path.name
            shutil.copyfile(path, copy)
            run_cli(workdir, "--fix", "--unsafe-fixes", "--select", case.rule_name,
                    *[a for g in case.gpus for a in ("--gpu", g)], copy.name)
            if copy.read_bytes() != path.read_bytes():
                missing.append(f"rules/{case.rule_name}/{path.name}.fixed")
            copy.unlink()
    assert not missing, f"fixes without an expected .fixed file: {missing}"


# ---------------------------------------------------------------------------------------------------------------
# --fix and --diff on disk
# ---------------------------------------------------------------------------------------------------------------

def test_fix_writes_and_reports_exit_zero_when_clean(workdir: Path) -> None:
    (workdir / "train.toml").write_bytes(LEGACY_TOML)
    result = run_cli(workdir, "--fix", "train.toml")
    assert (workdir / "train.toml").read_bytes() == LEGACY_TOML_FIXED
    assert result.exit_code == 0
    assert "Fixed 1 finding." in result.output


def test_fix_exits_one_when_findings_remain(workdir: Path) -> None:
    # The legacy value is fixed (safe); the unknown tf32 value has no fix and remains.
    (workdir / "train.toml").write_text('[trainer_config]\nprecision = "bf16"\ntf32_matmul_precision = "tf32"\n')
    result = run_cli(workdir, "--fix", "train.toml")
    assert result.exit_code == 1
    assert (workdir / "train.toml").read_text() == (
        '[trainer_config]\nprecision = "bf16-mixed"\ntf32_matmul_precision = "tf32"\n'
    )
    assert "PL103" in result.output and "PL102" not in result.output


def test_unsafe_fix_needs_the_flag(workdir: Path) -> None:
    path = workdir / "ds.json"
    path.write_text('{"fp16": {"enabled": true, "loss_scale": 128}}\n')
    assert run_cli(workdir, "--fix", "ds.json").exit_code == 1
    assert path.read_text() == '{"fp16": {"enabled": true, "loss_scale": 128}}\n'
    assert run_cli(workdir, "--fix", "--unsafe-fixes", "ds.json").exit_code == 0
    assert path.read_text() == '{"fp16": {"enabled": true, "loss_scale": 0}}\n'


def test_diff_writes_nothing_and_prints_the_diff(workdir: Path) -> None:
    path = workdir / "train.toml"
    path.write_bytes(LEGACY_TOML)
    result = run_cli(workdir, "--diff", "train.toml")
    assert path.read_bytes() == LEGACY_TOML
    assert result.exit_code == 1
    assert result.output.startswith("--- a/train.toml\n+++ b/train.toml\n")
    assert "-precision = 16  # Lightning 1.x\n+precision = \"16-mixed\"  # Lightning 1.x\n" in result.output
    # --diff wins over --fix, as in ruff: still nothing written.
    run_cli(workdir, "--diff", "--fix", "train.toml")
    assert path.read_bytes() == LEGACY_TOML


def test_diff_is_empty_and_exits_zero_when_nothing_would_change(workdir: Path) -> None:
    (workdir / "train.toml").write_text('[trainer_config]\nprecision = "bf16-mixed"\n')
    result = run_cli(workdir, "--diff", "train.toml")
    assert result.exit_code == 0
    assert result.output == ""


def test_files_without_applicable_fixes_are_not_touched(workdir: Path) -> None:
    clean = workdir / "clean.yaml"
    clean.write_text("trainer:\n  precision: bf16-mixed\n")
    unsafe_only = workdir / "ds.json"
    unsafe_only.write_text('{"fp16": {"enabled": true, "loss_scale": 128}}\n')
    unfixable = workdir / "tf32.toml"
    unfixable.write_text('[trainer_config]\nprecision = "32-true"\ntf32_matmul_precision = "tf32"\n')
    fixed = workdir / "legacy.toml"
    fixed.write_bytes(LEGACY_TOML)
    past = 1_000_000_000
    for path in (clean, unsafe_only, unfixable, fixed):
        os.utime(path, (past, past))

    run_cli(workdir, "--fix", ".")
    for path in (clean, unsafe_only, unfixable):
        assert path.stat().st_mtime == past, f"{path.name} was rewritten"
    assert fixed.read_bytes() == LEGACY_TOML_FIXED


def test_crlf_and_bom_are_kept(workdir: Path) -> None:
    path = workdir / "train.yaml"
    original = BOM + b"# config\r\ntrainer_config:\r\n  precision: bf16-mixed\r\n  tf32_matmul_precision: high\r\n" \
        b"  max_epochs: 3\r\n"
    path.write_bytes(original)
    run_cli(workdir, "--fix", "train.yaml")
    assert path.read_bytes() == BOM + b"# config\r\ntrainer_config:\r\n  precision: bf16-mixed\r\n  max_epochs: 3\r\n"


def test_crlf_json_removal_keeps_valid_json(workdir: Path) -> None:
    path = workdir / "train.json"
    path.write_bytes(b'{\r\n  "trainer_config": {\r\n    "tf32_matmul_precision": "medium",\r\n'
                     b'    "precision": 16\r\n  }\r\n}\r\n')
    run_cli(workdir, "--fix", "train.json")
    fixed = path.read_bytes()
    assert fixed == b'{\r\n  "trainer_config": {\r\n    "precision": "16-mixed"\r\n  }\r\n}\r\n'
    assert json.loads(fixed) == {"trainer_config": {"precision": "16-mixed"}}


def test_file_mode_is_kept(workdir: Path) -> None:
    path = workdir / "train.toml"
    path.write_bytes(LEGACY_TOML)
    path.chmod(0o640)
    run_cli(workdir, "--fix", "train.toml")
    assert path.read_bytes() == LEGACY_TOML_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in workdir.iterdir() if p.name.endswith(".tmp")] == []


def test_symlink_is_kept_and_its_target_fixed(workdir: Path) -> None:
    target = workdir / "real.toml"
    target.write_bytes(LEGACY_TOML)
    link = workdir / "link.toml"
    link.symlink_to(target.name)
    run_cli(workdir, "--fix", "link.toml")
    assert link.is_symlink()
    assert target.read_bytes() == LEGACY_TOML_FIXED


def test_json_output_carries_the_fix(workdir: Path) -> None:
    (workdir / "train.toml").write_bytes(LEGACY_TOML)
    result = run_cli(workdir, "--output-format", "json", "train.toml")
    [finding] = json.loads(result.output)
    start = LEGACY_TOML.index(b"16")
    assert finding["fix"] == {
        "description": "Replace with '16-mixed'",
        "applicability": "safe",
        "edits": [{"start": start, "end": start + 2, "content": '"16-mixed"',
                   "location": {"line": 2, "column": 13}, "end_location": {"line": 2, "column": 15}}],
    }


def test_per_file_ignores_hold_for_fixes(workdir: Path) -> None:
    (workdir / "precisionlint.toml").write_text('[per-file-ignores]\n"legacy.toml" = ["legacy-precision-value"]\n')
    path = workdir / "legacy.toml"
    path.write_bytes(LEGACY_TOML)
    assert run_cli(workdir, "--fix", "legacy.toml").exit_code == 0
    assert path.read_bytes() == LEGACY_TOML


def test_a_failed_write_is_an_error_and_leaves_the_file(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = workdir / "train.toml"
    path.write_bytes(LEGACY_TOML)

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    from precisionlint.fix import write as fix_write

    monkeypatch.setattr(os, "replace", refuse)
    monkeypatch.setattr(fix_write, "_exchange", refuse)  # the atomic swap, where the platform has one
    result = run_cli(workdir, "--fix", "train.toml")
    assert result.exit_code == 2
    assert "cannot write the fixed file" in result.output
    assert path.read_bytes() == LEGACY_TOML
    assert sorted(p.name for p in workdir.iterdir()) == ["precisionlint.toml", "train.toml"]


# ---------------------------------------------------------------------------------------------------------------
# Passes, overlaps and verification
# ---------------------------------------------------------------------------------------------------------------

def _rule(func, code: str = "PL990", name: str = "test-rule") -> Rule:  # type: ignore[no-untyped-def]
    return Rule(code, name, Severity.WARNING, "", "", "settings", False, True, func)


def _remove_x_members(ctx: CheckContext) -> Iterator[Finding]:
    """Reports every member whose key starts with x_, with a removal fix: neighbours' removals overlap in
    JSON (they share a comma)."""
    stack = [ctx.document.tree]
    while stack:
        node = stack.pop()
        for entry in node.entries:
            stack.append(entry.value)
            if entry.key.startswith("x_") and entry.removal:
                fix = Fix("remove", "safe", (Edit(entry.removal[0], entry.removal[1], ""),))
                yield ctx.report(ctx.document.span_of(entry.key_start, entry.key_end), "x", fix=fix)


def test_overlapping_fixes_converge_over_passes() -> None:
    text = '{\n  "keep": 1,\n  "x_a": 2,\n  "x_b": 3\n}\n'
    options = EngineOptions(rules=[_rule(_remove_x_members)])
    document = load_document("t.json", text, "json")
    findings = list(_remove_x_members(CheckContext(document, options.rules[0])))
    assert len(findings) == 2
    assert len(select_fixes(document, [f.fix for f in findings if f.fix])) == 1  # they overlap

    result = fix_text("t.json", text, "json", options, unsafe=False)
    assert result.new_text == '{\n  "keep": 1\n}\n'
    assert result.fixed == 2
    assert result.findings == []


def _corrupting(replacement: str):  # type: ignore[no-untyped-def]
    def check(ctx: CheckContext) -> Iterator[Finding]:
        for setting in ctx.settings:
            if setting.name == "precision":
                start, end = setting.value_offsets
                yield ctx.report(setting.span, "x", fix=Fix("bad", "safe", (Edit(start, end, replacement),)))
    return check


@pytest.mark.parametrize("replacement", [
    '"16-mixed"\nextra = 1',  # adds a key
    '"16-mixed',  # does not parse
    '"16-mixed" "x"',  # not a value
])
def test_a_fix_that_changes_more_than_its_key_is_refused(replacement: str) -> None:
    text = '[trainer_config]\nprecision = 16\nmax_epochs = 3\n'
    result = fix_text("t.toml", text, "toml", EngineOptions(rules=[_rule(_corrupting(replacement))]), unsafe=True)
    assert result.new_text == text
    assert result.fixed == 0
    assert len(result.findings) == 1


def test_a_yaml_fix_must_read_back_as_the_value_it_writes() -> None:
    # A plain multi-line scalar: replacing its first line only would leave "16-mixed _mixed".
    text = "trainer:\n  precision: bf16\n    _mixed\n  max_epochs: 3\n"
    result = fix_text("t.yaml", text, "yaml", EngineOptions(rules=[_rule(_corrupting("16-mixed"))]), unsafe=True)
    assert result.new_text == text


def test_an_anchored_yaml_value_keeps_its_anchor_and_a_shared_one_is_refused(workdir: Path) -> None:
    rule = find_rule("legacy-precision-value")
    assert rule is not None
    options = EngineOptions(rules=[rule])
    text = "seed_everything: 1\ntrainer:\n  precision: &p 16\n  max_epochs: 3\n"
    assert fix_text("t.yaml", text, "yaml", options, unsafe=False).new_text == (
        "seed_everything: 1\ntrainer:\n  precision: &p 16-mixed\n  max_epochs: 3\n"
    )
    shared = text + "copy: *p\n"  # the anchor's value is used elsewhere: changing it would change that too
    assert fix_text("t.yaml", shared, "yaml", options, unsafe=False).new_text == shared


def test_same_except_is_strict_about_types_order_and_extra_keys() -> None:
    old = parse_config("json", '{"a": 1, "b": {"c": true}}')
    limits = Limits()
    assert same_except(old, parse_config("json", '{"a": 1, "b": {"c": true}}'), [], limits)
    assert not same_except(old, parse_config("json", '{"a": 1.0, "b": {"c": true}}'), [], limits)
    assert not same_except(old, parse_config("json", '{"b": {"c": true}, "a": 1}'), [], limits)
    assert not same_except(old, parse_config("json", '{"a": 1, "b": {"c": 1}}'), [], limits)
    assert same_except(old, parse_config("json", '{"a": 1, "b": {}}'), [Expectation((0, "b", "c"), False)], limits)
    assert not same_except(old, parse_config("json", '{"a": 1, "b": {"c": false}}'),
                           [Expectation((0, "b", "c"), True, True)], limits)


def test_apply_edits_and_unified_diff() -> None:
    assert apply_edits("abcdef", [Edit(4, 5, "E"), Edit(0, 1, "A"), Edit(2, 2, "+")]) == "Ab+cdEf"
    with pytest.raises(ValueError):
        apply_edits("abcdef", [Edit(0, 3, ""), Edit(2, 4, "")])
    assert unified_diff("x.toml", "a\n", "a\n") == ""
    diff = unified_diff("./x.toml", "a = 1", "a = 2")
    assert diff == "--- a/x.toml\n+++ b/x.toml\n@@ -1 +1 @@\n-a = 1\n\\ No newline at end of file\n" \
                   "+a = 2\n\\ No newline at end of file\n"


# ---------------------------------------------------------------------------------------------------------------
# Spelling of replacement values (precisionlint.sources.setting_edits)
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,text,fixed", [
    ("toml", "[trainer_config]\nprecision = 'bf16'\n", "[trainer_config]\nprecision = 'bf16-mixed'\n"),
    ("toml", "[trainer_config]\nprecision = 32\n", '[trainer_config]\nprecision = "32-true"\n'),
    ("toml", 'trainer_config = {precision = "16", max_epochs = 1}\n',
     'trainer_config = {precision = "16-mixed", max_epochs = 1}\n'),
    # (Lightning is certainly the reader: LightningCLI's seed_everything, a Hydra _target_.)
    ("yaml", "seed_everything: 1\ntrainer:\n  precision: '16'\n  devices: 1\n",
     "seed_everything: 1\ntrainer:\n  precision: '16-mixed'\n  devices: 1\n"),
    ("yaml", 'trainer:\n  _target_: lightning.pytorch.Trainer\n  precision: "bf16"   # x\n',
     'trainer:\n  _target_: lightning.pytorch.Trainer\n  precision: "bf16-mixed"   # x\n'),
    ("yaml", "ckpt_path: null\ntrainer: {precision: 16, max_epochs: 1}\n",
     "ckpt_path: null\ntrainer: {precision: 16-mixed, max_epochs: 1}\n"),
    ("json", '{"seed_everything": 1, "trainer": {"precision":16, "devices": 1}}',
     '{"seed_everything": 1, "trainer": {"precision":"16-mixed", "devices": 1}}'),
    ("python", "from lightning import Trainer\nTrainer(precision='16', name='x')\n",
     "from lightning import Trainer\nTrainer(precision='16-mixed', name='x')\n"),
    ("python", "from lightning import Trainer\nTrainer(precision=16, name='x')\n",
     "from lightning import Trainer\nTrainer(precision='16-mixed', name='x')\n"),
])
def test_replacements_keep_the_file_style(fmt: str, text: str, fixed: str, workdir: Path) -> None:
    rule = find_rule("legacy-precision-value")
    assert rule is not None
    assert fix_text("t", text, fmt, EngineOptions(rules=[rule]), unsafe=False).new_text == fixed  # type: ignore[arg-type]


def test_no_fix_for_a_python_variable() -> None:
    rule = find_rule("legacy-precision-value")
    assert rule is not None
    text = "from lightning import Trainer\nP = 16\nTrainer(precision=P)\n"
    result = fix_text("t.py", text, "python", EngineOptions(rules=[rule]), unsafe=False)
    assert result.new_text == text
    assert [f.fix for f in result.findings] == [None]


def test_accelerate_no_is_quoted_for_yaml_1_1_readers() -> None:
    rule = find_rule("unknown-precision-value")
    assert rule is not None
    text = "compute_environment: LOCAL_MACHINE\ndistributed_type: 'NO'\nmixed_precision: fp32\n"
    result = fix_text("t.yaml", text, "yaml", EngineOptions(rules=[rule]), unsafe=True)
    assert result.new_text == 'compute_environment: LOCAL_MACHINE\ndistributed_type: \'NO\'\nmixed_precision: "no"\n'


@pytest.mark.parametrize("fmt,text,fixed", [
    # The only member of a JSON object: its whole line goes.
    ("json", '{\n  "trainer_config": {\n    "precision": "bf16-mixed", "tf32_matmul_precision": "high"\n  }\n}\n',
     '{\n  "trainer_config": {\n    "precision": "bf16-mixed"\n  }\n}\n'),
    ("json", '{"trainer_config": {"tf32_matmul_precision": "high", "precision": "16-mixed"}}',
     '{"trainer_config": {"precision": "16-mixed"}}'),
    # A member of a TOML inline table has no removal range (the loader gives none): no fix, file kept.
    ("toml", 'trainer_config = {precision = "16-mixed", tf32_matmul_precision = "high"}\n',
     'trainer_config = {precision = "16-mixed", tf32_matmul_precision = "high"}\n'),
    ("yaml", "trainer_config:\n  tf32_matmul_precision: high  # why\n  precision: 16-mixed\n",
     "trainer_config:\n  precision: 16-mixed\n"),
])
def test_removals_keep_the_file_valid(fmt: str, text: str, fixed: str) -> None:
    rule = find_rule("tf32-ignored-under-mixed-precision")
    assert rule is not None
    result = fix_text("t", text, fmt, EngineOptions(rules=[rule]), unsafe=False)  # type: ignore[arg-type]
    assert result.new_text == fixed
    parse_config(fmt, result.new_text)


# ---------------------------------------------------------------------------------------------------------------
# advise --write: plan_setting_changes and the writer of --fix (fix_write.rewrite)
# ---------------------------------------------------------------------------------------------------------------

def _plan(tmp_path: Path, name: str, content: str | bytes, changes: dict[str, object]) -> str:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    old, new = plan_setting_changes(str(path), changes)
    assert path.read_bytes() == content, "planning must not write"
    assert old == content.removeprefix(BOM).decode()
    return new


def test_plan_replaces_removes_and_inserts_in_toml(tmp_path: Path) -> None:
    text = ("# top\n[trainer_config]\n  precision = 16   # legacy\n  tf32_matmul_precision = 'high'\n"
            "  max_epochs = 10\n\n# the data table\n[data]\nx = 1\n")
    assert _plan(tmp_path, "a.toml", text, {"precision": "bf16-mixed", "tf32_matmul_precision": None}) == (
        '# top\n[trainer_config]\n  precision = "bf16-mixed"   # legacy\n  max_epochs = 10\n\n'
        "# the data table\n[data]\nx = 1\n"
    )
    text = "[trainer_config]\n  precision = 16\n  max_epochs = 10\n\n# the data table\n[data]\nx = 1\n"
    assert _plan(tmp_path, "b.toml", text, {"tf32_matmul_precision": "high"}) == (
        '[trainer_config]\n  precision = 16\n  max_epochs = 10\n  tf32_matmul_precision = "high"\n\n'
        "# the data table\n[data]\nx = 1\n"
    )


def test_plan_creates_a_trainer_config_table(tmp_path: Path) -> None:
    assert _plan(tmp_path, "a.toml", "name = 'run'\n[data]\nx = 1", {"precision": "bf16-mixed"}) == (
        "name = 'run'\n[data]\nx = 1\n\n[trainer_config]\nprecision = \"bf16-mixed\"\n"
    )
    assert _plan(tmp_path, "b.yaml", "name: run\n", {"precision": "16-mixed", "tf32_matmul_precision": "high"}) == (
        "name: run\ntrainer_config:\n  precision: 16-mixed\n  tf32_matmul_precision: high\n"
    )
    assert _plan(tmp_path, "c.json", '{\n    "name": "run"\n}\n', {"precision": "bf16-mixed"}) == (
        '{\n    "name": "run",\n    "trainer_config": {\n        "precision": "bf16-mixed"\n    }\n}\n'
    )


def test_plan_inserts_into_yaml_with_the_mapping_indentation(tmp_path: Path) -> None:
    text = ("model:\n    name: x\ntrainer_config:\n    precision: 16  # c\n    callbacks:\n      - a\n"
            "    # trailing comment\n\nother: 1\n")
    assert _plan(tmp_path, "a.yaml", text, {"precision": "bf16-mixed", "tf32_matmul_precision": "high"}) == (
        "model:\n    name: x\ntrainer_config:\n    precision: bf16-mixed  # c\n    callbacks:\n      - a\n"
        "    tf32_matmul_precision: high\n    # trailing comment\n\nother: 1\n"
    )
    # Under a LightningCLI `trainer:` mapping, CRLF kept.
    assert _plan(tmp_path, "b.yaml", "trainer:\r\n  max_epochs: 3\r\n", {"precision": "bf16-mixed"}) == (
        "trainer:\r\n  max_epochs: 3\r\n  precision: bf16-mixed\r\n"
    )


def test_plan_inserts_json_members_in_the_file_style(tmp_path: Path) -> None:
    text = '{\n\t"trainer": {\n\t\t"max_epochs": 3\n\t}\n}\n'
    assert _plan(tmp_path, "a.json", text, {"precision": "bf16-mixed"}) == (
        '{\n\t"trainer": {\n\t\t"max_epochs": 3,\n\t\t"precision": "bf16-mixed"\n\t}\n}\n'
    )
    assert _plan(tmp_path, "b.json", '{"trainer": {"max_epochs": 3}}', {"precision": "16-mixed"}) == (
        '{"trainer": {"max_epochs": 3, "precision": "16-mixed"}}'
    )
    # Removing the only member and adding another in the same object.
    text = '{\n  "trainer_config": {\n    "tf32_matmul_precision": "high"\n  }\n}\n'
    assert _plan(tmp_path, "c.json", text, {"tf32_matmul_precision": None, "precision": "bf16-mixed"}) == (
        '{\n  "trainer_config": {\n    "precision": "bf16-mixed"\n  }\n}\n'
    )


def test_plan_keeps_what_is_already_so_and_refuses_what_has_no_place(tmp_path: Path) -> None:
    text = '[trainer_config]\nprecision = "bf16-mixed"\n'
    assert _plan(tmp_path, "a.toml", text, {"precision": "bf16-mixed", "tf32_matmul_precision": None}) == text
    with pytest.raises(ValueError, match="no section"):
        _plan(tmp_path, "ds.json", '{"fp16": {"enabled": true}}', {"precision": "bf16-mixed"})
    with pytest.raises(ValueError, match="trainer section"):
        _plan(tmp_path, "cli.yaml", "trainer:\n  precision: 16-mixed\n", {"tf32_matmul_precision": "high"})
    with pytest.raises(ValueError, match="not a TOML"):
        _plan(tmp_path, "train.py", "x = 1\n", {"precision": "bf16-mixed"})


def test_rewrite_keeps_mode_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(BOM + b"trainer:\n  accelerator: gpu\n  precision: 16\n")
    path.chmod(0o600)
    old, new = plan_setting_changes(str(path), {"precision": "16-mixed"})
    rewrite(str(path), path.read_bytes(), new, "yaml")
    assert path.read_bytes() == BOM + b"trainer:\n  accelerator: gpu\n  precision: 16-mixed\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]
    fresh = tmp_path / "report.html"
    write_report(str(fresh), "<p>1</p>\n")
    assert fresh.read_text() == "<p>1</p>\n"
