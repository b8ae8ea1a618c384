"""`--fix` never damages a file: the verified text is the written text, fixing is linear and bounded, a fix
is offered only where it applies (or its refusal is said), and linked or protected files are handled as
documented. Each test runs the real CLI on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BOM = b"\xef\xbb\xbf"


@pytest.fixture(autouse=True)
def lightning_2(tmp_path: Path) -> None:
    """Most files here are fixed through legacy-precision-value, whose fix is safe only where the project
    declares Lightning 2.x: every test's folder declares it."""
    (tmp_path / "precisionlint.toml").write_text('target-versions = { lightning = "2.2" }\n')


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"trainer: {precision: 16, max_epochs: 3}\nseed_everything: 1\n",
         b"trainer: {precision: 16-mixed, max_epochs: 3}\nseed_everything: 1\n"),
        (b"trainer:\n  precision: 16\n  max_epochs: 3\nseed_everything: 1\n",
         b"trainer:\n  precision: 16-mixed\n  max_epochs: 3\nseed_everything: 1\n"),
    ],
    ids=["flow", "block"],
)
@pytest.mark.parametrize("prefix", [BOM, BOM + BOM], ids=["one-bom", "two-boms"])
def test_a_yaml_file_starting_with_several_boms_is_fixed_in_place(
    tmp_path: Path, prefix: bytes, before: bytes, after: bytes
) -> None:
    """ruamel.yaml does not count U+FEFF as a column, and the engine strips one BOM: the second BOM used to
    shift every edit one character to the left (`precision:16-mixed6`, reported as fixed, exit 0)."""
    config = tmp_path / "f.yaml"
    config.write_bytes(prefix + before)
    done = run("--fix", "f.yaml", cwd=tmp_path)
    assert config.read_bytes() == prefix + after, done.stdout + done.stderr
    assert done.returncode == 0
    assert "Fixed 1 finding" in done.stdout


def test_a_feff_inside_a_yaml_line_does_not_shift_the_edits(tmp_path: Path) -> None:
    config = tmp_path / "f.yaml"
    line = 'trainer: {default_root_dir: "a\ufeffb", max_epochs: 3, precision: %s}\n'
    config.write_bytes(("seed_everything: 1\n" + line % "16").encode())
    run("--fix", "f.yaml", cwd=tmp_path)
    assert config.read_bytes() == ("seed_everything: 1\n" + line % "16-mixed").encode()


def test_a_file_reached_through_a_symlink_is_fixed_once_and_reported_fresh(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_bytes(b"[trainer_config]\nprecision = 16\n")
    (tmp_path / "link.toml").symlink_to("real.toml")
    done = run("--fix", "link.toml", "real.toml", cwd=tmp_path)
    assert real.read_bytes() == b'[trainer_config]\nprecision = "16-mixed"\n'
    assert (tmp_path / "link.toml").is_symlink()
    assert done.returncode == 0, done.stdout  # no stale finding from the second name
    assert "PL102" not in done.stdout


def test_fix_goes_through_a_symlink_to_the_real_file(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    real = tmp_path / "configs" / "real.toml"
    real.write_bytes(b"[trainer_config]\nprecision = 16\n")
    link = tmp_path / "train.toml"
    link.symlink_to("configs/real.toml")
    done = run("--fix", "train.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert link.is_symlink() and os.readlink(link) == "configs/real.toml"
    assert real.read_bytes() == b'[trainer_config]\nprecision = "16-mixed"\n'


def test_a_hard_linked_file_is_refused_and_both_names_keep_one_content(tmp_path: Path) -> None:
    first = tmp_path / "a.toml"
    first.write_bytes(b"[trainer_config]\nprecision = 16\n")
    os.link(first, tmp_path / "b.toml")
    done = run("--fix", "a.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert "a.toml: has 2 hard links; not fixed" in done.stderr
    assert first.read_bytes() == (tmp_path / "b.toml").read_bytes() == b"[trainer_config]\nprecision = 16\n"
    assert os.stat(first).st_ino == os.stat(tmp_path / "b.toml").st_ino


def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "train.toml"
    config.write_bytes(b"[trainer_config]\nprecision = 16\n")
    config.chmod(0o444)
    done = run("--fix", "train.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert "train.toml: read-only file; not fixed" in done.stderr
    assert config.read_bytes() == b"[trainer_config]\nprecision = 16\n"
    assert "PL102" in done.stdout  # the finding stands
    assert oct(config.stat().st_mode & 0o777) == oct(0o444)


# --- fixing is linear in the file and bounded like checking ------------------------------------------------


def _alias_bomb_with_30_fixes() -> str:
    lines = ["seed_everything: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines.append("trainer:\n  precision: 16\n  max_epochs: 3")
    lines += ["---\nseed_everything: 1\ntrainer:\n  precision: 16\n  max_epochs: 3"] * 29
    return "\n".join(lines) + "\n"


def test_fixing_an_alias_bomb_costs_its_size_not_its_expansion(tmp_path: Path) -> None:
    """1.5 kB of YAML expanding to 10^9 nodes, with 30 fixable findings: each fix used to be verified alone,
    every verification walking the expanded tree to the node limit (minutes). Verified as one batch, with
    aliased collections compared once, it is as quick as the check."""
    config = tmp_path / "bomb.yaml"
    config.write_text(_alias_bomb_with_30_fixes())
    done = run("--fix", "bomb.yaml", cwd=tmp_path)  # subprocess timeout: 300 s; the old code took longer
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Fixed 30 findings" in done.stdout
    assert config.read_text().count("precision: 16-mixed") == 30


def test_fixing_1500_calls_in_one_script_is_linear(tmp_path: Path) -> None:
    """One parse per fix made a 120 kB script with 1,500 deprecated calls take minutes to fix."""
    body = "".join(f"with torch.cuda.amp.autocast():\n    y{i} = model(x{i})\n" for i in range(1500))
    script = tmp_path / "train.py"
    script.write_text("import torch\n" + body)
    done = run("--fix", "--unsafe-fixes", "--select", "deprecated-amp-api", "train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-500:] + done.stderr
    assert "Fixed 1500 findings" in done.stdout
    assert script.read_text().count('torch.amp.autocast("cuda", dtype=torch.float16)') == 1500


def test_fixing_runs_under_the_files_cpu_time_limit(tmp_path: Path) -> None:
    """max-parse-time bounds fixing as it bounds checking: a file whose fixing runs over it is left as it
    was and reported as limit-exceeded, never half-fixed and never hanging."""
    from precisionlint.checks import all_rules
    from precisionlint.engine.options import EngineOptions
    from precisionlint.fix.apply import fix_text
    from precisionlint.sources import Limits

    body = "".join(f"with torch.cuda.amp.autocast():\n    y{i} = model(x{i})\n" for i in range(3000))
    text = "import torch\n" + body
    options = EngineOptions(rules=all_rules(), limits=Limits(max_parse_time=10.0))
    checked = fix_text("train.py", text, "python", options, unsafe=True)
    assert checked.fixed == 3000
    tight = EngineOptions(rules=all_rules(), limits=Limits(max_parse_time=0.3))
    result = fix_text("train.py", text, "python", tight, unsafe=True)
    assert result.new_text == text
    assert result.limit_hit
    assert any(f.code == "PL003" and "to fix (max-parse-time); not fixed" in f.message
               or f.code == "PL003" and "not checked" in f.message for f in result.findings)


# --- only fixes that apply are offered; a refused one says why ---------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "seed_everything: 1\nbase: &p 16\ntrainer:\n  max_epochs: 3\n  precision: *p\n",  # an alias
        "seed_everything: 1\ntrainer:\n  max_epochs: 3\n  precision: &p 16\nother: *p\n",  # an anchor in use
    ],
    ids=["alias", "anchor-in-use"],
)
def test_a_fix_that_cannot_apply_is_not_offered(tmp_path: Path, text: str) -> None:
    config = tmp_path / "f.yaml"
    config.write_text(text)
    shown = run("--output-format", "json", "f.yaml", cwd=tmp_path)
    report = json.loads(shown.stdout)
    findings = report["findings"] if isinstance(report, dict) else report
    assert [f["code"] for f in findings] == ["PL102"]
    assert findings[0]["fix"] is None  # not offered, so not "fixable"
    fixed = run("--fix", "f.yaml", cwd=tmp_path)
    assert config.read_text() == text
    assert "Fixed" not in fixed.stdout


def test_a_folded_plain_scalar_is_not_offered_a_fix(tmp_path: Path) -> None:
    config = tmp_path / "f.yaml"
    text = "seed_everything: 1\ntrainer:\n  max_epochs: 3\n  precision: bf16\n    mixed\n"
    config.write_text(text)
    done = run("--output-format", "json", "--unsafe-fixes", "f.yaml", cwd=tmp_path)
    report = json.loads(done.stdout)
    findings = report["findings"] if isinstance(report, dict) else report
    assert [f["code"] for f in findings] == ["PL101"]
    assert findings[0]["fix"] is None
    run("--fix", "--unsafe-fixes", "f.yaml", cwd=tmp_path)
    assert config.read_text() == text


def test_a_refused_fix_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix the verifier refuses (here: an edit that would add a second key) comes back with the reason,
    which --fix prints beside its finding."""
    monkeypatch.chdir(tmp_path)  # the project of "f.yaml" is this folder, which declares Lightning 2.2
    from precisionlint.checks import all_rules
    from precisionlint.core.model import Edit, Fix
    from precisionlint.engine.options import EngineOptions
    from precisionlint.fix.apply import fix_text

    text = "seed_everything: 1\ntrainer:\n  max_epochs: 3\n  precision: 16\n"
    options = EngineOptions(rules=all_rules())
    result = fix_text("f.yaml", text, "yaml", options, unsafe=False)
    assert result.fixed == 1
    from precisionlint.fix.plan import Refusal, select_fixes
    from precisionlint.frameworks.documents import load_document

    document = load_document("f.yaml", text, "yaml")
    start = text.index("3\n")
    bad = Fix("Set two keys", "safe", (Edit(start, start + 1, "3\n  precision: 32"),))
    refused: list[Refusal] = []
    assert select_fixes(document, [bad], None, refused) == []
    assert [r.reason for r in refused] == ["the fixed file would not parse"]


# --- what the user reads: the file's own encoding and spelling ---------------------------------------------


def test_a_latin1_coding_declaration_is_honoured_by_check_and_fix(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\nwith torch.cuda.amp.autocast():\n"
                       b"    y = 1\n")
    checked = run("--select", "deprecated-amp-api", "train.py", cwd=tmp_path)
    assert "PL001" not in checked.stdout and "PL207" in checked.stdout
    run("--fix", "--unsafe-fixes", "--select", "deprecated-amp-api", "train.py", cwd=tmp_path)
    assert script.read_bytes() == (b"# -*- coding: latin-1 -*-\nimport torch\n# caf\xe9\n"
                                   b'with torch.amp.autocast("cuda", dtype=torch.float16):\n    y = 1\n')


@pytest.mark.parametrize(
    ("name", "text", "shown"),
    [
        ("d.toml", "[trainer_config]\nprecision = 1979-05-27T07:32:00Z\n", "'1979-05-27T07:32:00Z'"),
        ("s.yaml", "seed_everything: 1\ntrainer:\n  max_epochs: 3\n  precision: !!set {a, b}\n", "'!!set {a, b}'"),
    ],
)
def test_values_are_shown_as_written_never_as_python_reprs(tmp_path: Path, name: str, text: str, shown: str) -> None:
    (tmp_path / name).write_text(text)
    done = run(name, cwd=tmp_path)
    assert f"precision {shown}" in done.stdout, done.stdout
    assert "datetime" not in done.stdout and "odict" not in done.stdout


@pytest.mark.parametrize("name", ["big.json", "big.yaml", "big.toml", "big.py"])
def test_a_4300_digit_number_is_a_limit_in_words(tmp_path: Path, name: str) -> None:
    digits = "9" * 5000
    texts = {
        "big.json": f'{{"trainer": {{"precision": {digits}}}}}\n',
        "big.yaml": f"trainer:\n  precision: {digits}\n",
        "big.toml": f"[trainer_config]\nprecision = {digits}\n",
        "big.py": f"import torch\nx = {digits}\nwith torch.autocast('cuda'):\n    pass\n",
    }
    (tmp_path / name).write_text(texts[name])
    done = run(name, cwd=tmp_path)
    assert done.returncode == 1
    assert "PL003" in done.stdout and "more than 4,300 digits" in done.stdout
    assert "set_int_max_str_digits" not in done.stdout and "internal error" not in done.stdout
