"""Hostile inputs, on real files and through the real command line: every one ends as a finding or a one-line
error for that file, never a traceback, a hang, or a command executed.

Commands that could hang if the engine regressed run in a subprocess with a timeout, so that a regression
fails the test instead of blocking the suite; no test asserts how fast anything is (the benchmark does).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from precisionlint.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 120  # seconds; a run that takes this long is a hang, not a slow machine


def check(folder: Path, *args: str) -> tuple[int, str]:
    """`precisionlint check` in-process (CliRunner), from `folder`."""
    old = os.getcwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["check", "--no-progress", *args], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.output


def check_subprocess(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m precisionlint check` in its own process, killed if it hangs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=HANG_GUARD,
    )


def no_traceback(output: str) -> None:
    assert "Traceback" not in output, output
    assert "internal error" not in output, output


# ---------------------------------------------------------------------------------------------------------------
# YAML alias bombs
# ---------------------------------------------------------------------------------------------------------------


def billion_laughs(levels: int = 12, width: int = 9, extra: str = "") -> str:
    lines = ["a0: &a0 [bf16-mixed, bf16-mixed, bf16-mixed, bf16-mixed, bf16-mixed, bf16-mixed]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    lines.append(f"trainer:\n  precision: bf16-mixed\n  plugins: *a{levels - 1}")
    return "\n".join(lines) + "\n" + extra


def test_billion_laughs_is_walked_once_per_anchor(tmp_path: Path) -> None:
    # 9**12 (282 billion) leaves if expanded; each anchored collection is walked once instead.
    (tmp_path / "bomb.yaml").write_text(billion_laughs())
    result = check_subprocess(tmp_path, "bomb.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout
    no_traceback(result.stdout + result.stderr)


def test_alias_bomb_with_a_duplicate_key_is_one_warning_not_an_exponential_message(tmp_path: Path) -> None:
    # ruamel's own duplicate-key message prints both values, which expands every alias (found by the fuzzer);
    # duplicates are now resolved on the composed nodes (each visited once) and reported by duplicate-key.
    (tmp_path / "bomb.yaml").write_text(billion_laughs(extra="a11: again\n"))
    result = check_subprocess(tmp_path, "bomb.yaml")
    assert result.returncode == 1
    assert "PL004 [warning] key 'a11' appears 2 times" in result.stdout
    no_traceback(result.stdout + result.stderr)


def test_nested_collection_keys_do_not_take_exponential_time(tmp_path: Path) -> None:
    # 29 bytes that ruamel's round-trip constructor needs a minute for at 16 levels (found by the fuzzer).
    (tmp_path / "keys.yaml").write_text("precision: 16\nz: " + "{" * 40 + "1" + "}" * 40 + "\n")
    (tmp_path / "fine.yaml").write_text("? [a, b]\n: 1\ntrainer: {precision: 16, devices: 1}\n")
    result = check_subprocess(tmp_path, "keys.yaml", "fine.yaml")
    assert "keys.yaml:1:1: PL003 [error] a collection used as a mapping key inside another such key" in result.stdout
    assert "fine.yaml:3:22: PL102" in result.stdout  # a single collection key is fine
    no_traceback(result.stdout + result.stderr)


def test_node_budget_is_a_limit_finding(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-nodes = 100\n")
    items = "\n".join(f"  k{i}: {i}" for i in range(200))
    (tmp_path / "big.yaml").write_text(f"trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
                                       f"extra:\n{items}\n")
    code, output = check(tmp_path, "big.yaml")
    assert code == 1
    assert "big.yaml:1:1: PL003 [error] more than 100 nodes (max-nodes); not checked" in output


# ---------------------------------------------------------------------------------------------------------------
# Nesting thousands of levels deep
# ---------------------------------------------------------------------------------------------------------------

DEPTH = 5000
DEEP = {
    "flow.yaml": "trainer:\n  precision: " + "[" * DEPTH + "]" * DEPTH + "\n",
    "block.yaml": "precision: 16\n" + "".join(" " * i + f"k{i}:\n" for i in range(1500)) + " " * 1500 + "v: 1\n",
    "deep.json": '{"fp16": ' + "[" * DEPTH + "]" * DEPTH + "}\n",
    "objects.json": '{"fp16": ' + '{"a": ' * DEPTH + "1" + "}" * DEPTH + "}\n",
    "array.toml": "precision = " + "[" * DEPTH + "]" * DEPTH + "\n",
    "inline.toml": "precision = 16\nx = " + "{a = " * DEPTH + "1" + "}" * DEPTH + "\n",
    # A GradScaler: files that a pass reads (a file no pass reads is not parsed; test_engine checks that).
    "parens.py": ("import torch\nscaler = torch.amp.GradScaler()\nx = torch.half("
                  + "(" * DEPTH + "1" + ")" * DEPTH + ")\n"),
    "binop.py": "import torch\nscaler = torch.amp.GradScaler()\nx = torch.half(" + "+".join(["a"] * 100_000) + ")\n",
    "unary.py": "import torch\nscaler = torch.amp.GradScaler()\nx = torch.half(" + "-" * 100_000 + "1)\n",
    "calls.py": "import torch\nx = torch.autocast" + "()" * 20_000 + "\n",
}


def test_deep_nesting_in_every_format_is_a_finding(tmp_path: Path) -> None:
    for name, text in DEEP.items():
        (tmp_path / name).write_text(text)
    result = check_subprocess(tmp_path, "--jobs", "1", *DEEP)
    output = result.stdout + result.stderr
    no_traceback(output)
    assert result.returncode == 1, output
    for name in DEEP:
        line = next((line for line in result.stdout.splitlines() if line.startswith(f"{name}:")), None)
        assert line is not None, f"{name}: no finding\n{output}"
        assert " PL003 " in line or " PL001 " in line, line  # limit-exceeded or parse error, never PL009


def test_deep_but_reasonable_python_is_analysed(tmp_path: Path) -> None:
    """A 400-term expression (generated code) parses and is checked, not reported as too deep."""
    (tmp_path / "gen.py").write_text(
        "import torch\n"
        "TABLE = " + " + ".join(f'"s{i}"' for i in range(400)) + "\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n    loss = model(x)\nloss.backward()\n"
    )
    code, output = check(tmp_path, "gen.py")
    assert "PL003" not in output, output
    assert "gen.py:5:1: PL201" in output  # the backward of a float16 autocast result without a GradScaler


# ---------------------------------------------------------------------------------------------------------------
# Size, bytes, encodings
# ---------------------------------------------------------------------------------------------------------------


def test_a_100_mb_config_is_skipped_before_reading(tmp_path: Path) -> None:
    block = ('{"fp16": {"enabled": true}, "pad": "' + "x" * (1 << 20) + '"}\n').encode()
    with open(tmp_path / "huge.json", "wb") as handle:
        for _ in range(100):
            handle.write(block)
    (tmp_path / "ok.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    code, output = check(tmp_path, ".")
    assert code == 1
    assert "huge.json:1:1: PL003 [error] file is 104,861,500 bytes, over the 100,000,000-byte limit" in output
    assert "ok.yaml:2:14: PL102" in output


def test_max_file_size_from_the_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-file-size = 100\n")
    (tmp_path / "a.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
                                     + "# padding\n" * 20)
    code, output = check(tmp_path, "a.yaml")
    assert "a.yaml:1:1: PL003" in output and "100-byte limit" in output


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("random.yaml", bytes(range(256)) * 4 + b"precision", "PL001 [error] not valid UTF-8"),
        ("image.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR precision", "PL001 [error] not valid UTF-8"),
        ("nul.py", b"import torch\nx = 1.half()\x00\n", "PL001 [error] binary file: contains NUL bytes"),
        ("latin1.toml", b'[trainer_config]\nprecision = "16" # caf\xe9\n', "PL001 [error] not valid UTF-8"),
        ("utf16.yaml", "precision: 16\n".encode("utf-16"), "PL001 [error] encoded as UTF-16 (byte-order mark)"),
        ("utf32.json", '{"fp16": 1}'.encode("utf-32"), "PL001 [error] encoded as UTF-32 (byte-order mark)"),
    ],
)
def test_binary_and_undecodable_files(tmp_path: Path, name: str, data: bytes, expected: str) -> None:
    (tmp_path / name).write_bytes(data)
    code, output = check(tmp_path, name)
    assert code == 1
    assert expected in output
    no_traceback(output)


def test_invalid_utf8_position(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_bytes(b"trainer:\n  precision: b\xe9f16\n")
    _, output = check(tmp_path, "a.yaml")
    assert "a.yaml:2:15: PL001 [error] not valid UTF-8: byte 0xe9 cannot be decoded" in output


def test_mixed_line_endings_keep_parser_line_numbers(tmp_path: Path) -> None:
    # A lone \r ends a line for Python's tokenizer and for YAML; findings must land on those lines.
    (tmp_path / "mac.py").write_bytes(
        b"import torch\rfrom accelerate import Accelerator\r\n\nacc = Accelerator(mixed_precision='fp16')\n"
    )
    (tmp_path / "mac.yaml").write_bytes(b"# config\rtrainer:\r\n  precision: 16\r"
                                        b"  _target_: lightning.pytorch.Trainer\r")
    code, output = check(tmp_path, "mac.py", "mac.yaml")
    no_traceback(output)
    assert "mac.yaml:3:14: PL102" in output, output
    assert code in (0, 1)


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    if sys.platform == "darwin":
        pytest.skip("macOS file systems reject names that are not UTF-8")
    os.chdir(tmp_path)
    try:
        with open(os.fsencode("caf\udce9.yaml"), "wb") as handle:
            handle.write(b"trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    finally:
        os.chdir(ROOT)
    shown = {"text": "caf\ufffd.yaml:2:14: PL102", "github": "file=caf\ufffd.yaml,line=2,col=14",
             "json": '"path": "caf\\ufffd.yaml"', "sarif": '"uri": "caf%EF%BF%BD.yaml"'}
    for fmt, expected in shown.items():
        result = check_subprocess(tmp_path, "--output-format", fmt, ".")
        assert result.returncode == 1, (fmt, result.stderr)
        no_traceback(result.stdout + result.stderr)
        assert expected in result.stdout, (fmt, result.stdout)


# ---------------------------------------------------------------------------------------------------------------
# Things that are not regular files
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it for reading would block until a writer comes
    (tmp_path / "ok.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    named = check_subprocess(tmp_path, "pipe.yaml", "ok.yaml")
    assert named.returncode == 1
    assert "pipe.yaml:1:1: PL002 [error] cannot read file: is a FIFO (named pipe), not a regular file" in named.stdout
    assert "ok.yaml:2:14: PL102" in named.stdout
    walked = check_subprocess(tmp_path, ".")  # a FIFO inside a walked directory is not a file to check
    assert walked.returncode == 1 and "pipe.yaml" not in walked.stdout and "ok.yaml:2:14" in walked.stdout


def test_a_device_behind_a_config_name_is_not_read(tmp_path: Path) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")  # reading it would never end
    result = check_subprocess(tmp_path, "zero.yaml", ".")
    assert "zero.yaml:1:1: PL002 [error] cannot read file: is a device, not a regular file" in result.stdout
    assert result.returncode == 1


def test_a_directory_named_like_a_config(tmp_path: Path) -> None:
    (tmp_path / "configs.yaml").mkdir()
    (tmp_path / "configs.yaml" / "inner.yaml").write_text(
        "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    (tmp_path / "dir_link.yaml").symlink_to(tmp_path / "configs.yaml")
    code, output = check(tmp_path, "configs.yaml", "dir_link.yaml")
    assert "configs.yaml/inner.yaml:2:14: PL102" in output  # a named directory is walked
    no_traceback(output)


def test_unreadable_file(tmp_path: Path) -> None:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root can read a chmod 000 file (the FIFO, device and vanished-file tests cover the path)")
    path = tmp_path / "secret.yaml"
    path.write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    path.chmod(0)
    try:
        code, output = check(tmp_path, "secret.yaml")
    finally:
        path.chmod(0o644)
    assert "secret.yaml:1:1: PL002 [error] cannot read file: Permission denied" in output


def test_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "sub" / "inner").mkdir(parents=True)
    (tmp_path / "sub" / "inner" / "up").symlink_to(tmp_path)  # a directory loop
    (tmp_path / "sub" / "self").symlink_to(tmp_path / "sub" / "self")  # a link to itself
    (tmp_path / "one.yaml").symlink_to(tmp_path / "two.yaml")  # a file link loop
    (tmp_path / "two.yaml").symlink_to(tmp_path / "one.yaml")
    (tmp_path / "sub" / "ok.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    result = check_subprocess(tmp_path, ".")
    assert result.returncode == 1
    assert "one.yaml" not in result.stdout  # a looping link met while walking is skipped (test_discover_links.py)
    assert "sub/ok.yaml:2:14: PL102" in result.stdout
    assert result.stdout.count("sub/ok.yaml") == 1  # not again through sub/inner/up
    no_traceback(result.stdout + result.stderr)


def test_missing_paths_are_one_line_errors_and_the_rest_is_checked(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")
    result = check_subprocess(tmp_path, "nope.yaml", "ok.yaml", "no/such/dir")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "precisionlint: error: nope.yaml: no such file or directory",
        "precisionlint: error: no/such/dir: no such file or directory",
    ]
    assert "ok.yaml:2:14: PL102" in result.stdout


# ---------------------------------------------------------------------------------------------------------------
# Nothing executes
# ---------------------------------------------------------------------------------------------------------------


def test_python_tags_in_yaml_execute_nothing(tmp_path: Path) -> None:
    sentinel = tmp_path / "PWNED"
    command = f"touch {sentinel}"
    (tmp_path / "tags.yaml").write_text(
        f'trainer:\n  precision: !!python/object/apply:os.system ["{command}"]\n'
        f'  plugins: !!python/object/apply:subprocess.check_call [["touch", "{sentinel}"]]\n'
        f'  callbacks: !!python/object/new:os.system ["{command}"]\n'
        f"  logger: !!python/name:os.system\n"
        f'? !!python/object/apply:os.system ["{command}"]\n: precision\n'
    )
    (tmp_path / "run.py").write_text(
        f"import os\nos.system({command!r})\nopen({str(sentinel)!r}, 'w').close()\n"
        "import torch\nmodel.half()\n"
    )
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}, "__import__": "os"}\n')
    result = check_subprocess(tmp_path, ".")
    no_traceback(result.stdout + result.stderr)
    assert not sentinel.exists()


# ---------------------------------------------------------------------------------------------------------------
# Duplicate keys
# ---------------------------------------------------------------------------------------------------------------


def test_duplicate_keys_in_every_format(tmp_path: Path) -> None:
    # YAML: loaded last-wins as PyYAML does, checked, and the last occurrence reported once by duplicate-key.
    # Every format reports the later key, the one that overrides (TOML as a parse error).
    (tmp_path / "dup.yaml").write_text("trainer:\n  precision: 16\n  precision: bf16-mixed\n")
    (tmp_path / "dup.toml").write_text('[trainer_config]\nprecision = "16"\nprecision = "bf16-mixed"\n')
    # Legal JSON: Python's json keeps the last value (as Transformers and Accelerate read a DeepSpeed config) and
    # DeepSpeed refuses the path it opens itself, so a DeepSpeed config is checked last-wins and its repetition is
    # a warning of duplicate-key that says both.
    (tmp_path / "dup.json").write_text('{\n  "fp16": {"enabled": true},\n  "fp16": {"enabled": false}\n}\n')
    (tmp_path / "nested.json").write_text('{"a": [{"fp16": 1}, {"fp16": 2}], "b": {"fp16": 1}, "fp16": {}}\n')
    code, output = check(tmp_path, ".")
    assert "dup.yaml:3:3: PL004 [warning] key 'precision' appears 2 times" in output
    assert "dup.yaml:2:" not in output and "dup.yaml:3:3: PL001" not in output
    assert "dup.toml:3:1: PL001 [error] invalid TOML" in output
    assert "dup.json:3:3: PL004 [warning] key 'fp16' appears 2 times" in output and "PL001" not in output.replace(
        "dup.toml:3:1: PL001", "")
    assert "dup.json:2:" not in output
    assert "nested.json" not in output  # the same key in different objects is fine
    # A DeepSpeed config in JSON named .yaml (Accelerate's deepspeed_config_file) is read with json.load too.
    (tmp_path / "zero3.yaml").write_text('{\n  "bf16": {"enabled": true},\n  "bf16": {"enabled": false}\n}\n')
    code, output = check(tmp_path, "zero3.yaml")
    assert "zero3.yaml:3:3: PL004 [warning] key 'bf16' appears 2 times" in output
    assert "Python's json (as Transformers and Accelerate read a DeepSpeed config) keeps" in output
    assert "PyYAML" not in output


def test_a_duplicate_key_is_one_finding_whose_related_locations_follow_each_copy(tmp_path: Path) -> None:
    # The earlier occurrences are related locations in the same file. The same content under two paths is
    # analysed once, and a second run reads the cache: each path's finding still names its own file.
    text = "trainer:\n  precision: 16-mixed\n  precision: 32\n  devices: 8\n  precision: bf16-mixed\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.yaml").write_text(text)
    for _ in range(2):  # the first run fills the cache, the second reads it
        code, output = check(tmp_path, "--output-format", "json", "--select", "PL004", "a", "b")
        assert code == 1
        findings = json.loads(output)
        assert [(f["path"], f["line"], f["column"]) for f in findings] == [
            ("a/config.yaml", 5, 3), ("b/config.yaml", 5, 3)]
        for finding in findings:
            assert "appears 3 times in this mapping (lines 2, 3, 5)" in finding["message"]
            assert "the earlier ones are ignored" in finding["message"]
            assert [(r["path"], r["line"], r["column"], r["end_column"]) for r in finding["related"]] == [
                (finding["path"], 2, 3, 12), (finding["path"], 3, 3, 12)]
    code, output = check(tmp_path, "--output-format", "sarif", "--select", "PL004", "a")
    related = json.loads(output)["runs"][0]["results"][0]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in related] == ["a/config.yaml"] * 2
