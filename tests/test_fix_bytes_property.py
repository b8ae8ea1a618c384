"""Property: `check --fix` writes exactly the text it verified, whatever the file's prefix and line endings.

Hypothesis builds a fixable file in every format (TOML, YAML, JSON, Python) and dresses it in what real files
carry: no BOM, one or two UTF-8 BOMs, LF / CRLF / lone-CR line endings where the format allows them, tabs
where the format allows them, a final newline or not, non-ASCII text. The file is fixed on disk through the
real command, and the test proves:
  - the bytes written decode to exactly the text precisionlint.fix.apply verified (fix_text, which is pure), with
    the original's BOM prefix kept byte for byte;
  - the fixed value is there, the file still parses (no parse error), and nothing fixable is left;
  - every line ending outside the edited line is kept as it was.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precisionlint.checks import all_rules
from precisionlint.cli.commands import main
from precisionlint.engine.options import EngineOptions
from precisionlint.fix.apply import fix_text
from precisionlint.sources.decoding import decode_source

BOM = b"\xef\xbb\xbf"
OPTIONS = EngineOptions(rules=all_rules())
PROPERTY_SETTINGS = settings(max_examples=int(os.environ.get("PRECISIONLINT_PROPERTY_EXAMPLES", "25")),
                             deadline=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# (lines, fixed value's text) per format; "{pad}" is the indentation, "{note}" free text.
TEMPLATES = {
    "toml": (["[trainer_config]", "{pad}name = \"{note}\"", "{pad}precision = 16", "{pad}max_epochs = 3"],
             'precision = "16-mixed"'),
    "yaml": (["seed_everything: 1", "# {note}", "trainer:", "{pad}max_epochs: 3", "{pad}precision: 16"],
             "precision: 16-mixed"),
    "json": (["{{", "{pad}\"seed_everything\": 1,", "{pad}\"note\": \"{note}\",",
              "{pad}\"trainer\": {{\"max_epochs\": 3, \"precision\": 16}}", "}}"], '"precision": "16-mixed"'),
    "python": (["import torch", "# {note}", "def step(model, x):", "{pad}with torch.cuda.amp.autocast():",
                "{pad}{pad}return model(x)"], 'torch.amp.autocast("cuda", dtype=torch.float16)'),
}
# Which dressings each format's own grammar accepts.
LINE_ENDINGS = {"toml": ["\n", "\r\n"], "yaml": ["\n", "\r\n", "\r"], "json": ["\n", "\r\n", "\r"],
                "python": ["\n", "\r\n", "\r"]}
PADS = {"toml": ["  ", "\t", ""], "yaml": ["  ", "    "], "json": ["  ", "\t"], "python": ["    ", "\t"]}
NOTES = ["plain", "é ünïcode", "tab\there", "训练", "zero\u200bwidth"]


@st.composite
def files(draw: st.DrawFn, fmt: str) -> bytes:
    lines, _ = TEMPLATES[fmt]
    pad = draw(st.sampled_from(PADS[fmt]))
    note = draw(st.sampled_from(NOTES))
    if fmt == "toml" and "\t" in note:
        note = note.replace("\t", "\\t")
    if fmt == "json" and "\t" in note:
        note = note.replace("\t", "\\t")
    newline = draw(st.sampled_from(LINE_ENDINGS[fmt]))
    text = newline.join(line.format(pad=pad, note=note) for line in lines)
    if draw(st.booleans()):
        text += newline
    boms = draw(st.sampled_from([0, 1, 2] if fmt == "yaml" else [0, 1]))
    return BOM * boms + text.encode("utf-8")


def fix_on_disk(tmp_path: Path, fmt: str, data: bytes) -> bytes:
    name = {"python": "train.py"}.get(fmt, f"train.{fmt}")
    path = tmp_path / name
    for stale in tmp_path.iterdir():
        stale.unlink()
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", "--no-cache", "--no-progress",
                                       str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 1), result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "a temporary file was left behind"
    return path.read_bytes()


def check_property(tmp_path: Path, fmt: str, data: bytes) -> None:
    text = decode_source(data, "t", fmt)  # type: ignore[arg-type]
    verified = fix_text("t", text, fmt, OPTIONS, unsafe=True)  # type: ignore[arg-type]
    written = fix_on_disk(tmp_path, fmt, data)
    prefix = BOM if data.startswith(BOM) else b""  # the engine strips one; a second is part of the text
    assert written.startswith(prefix) and written[len(prefix):].decode("utf-8") == verified.new_text, (
        f"written text differs from verified text:\n{data!r}\n{written!r}\n{verified.new_text!r}")
    assert TEMPLATES[fmt][1] in verified.new_text, f"not fixed:\n{data!r}\n-> {written!r}"
    after = fix_text("t", verified.new_text, fmt, OPTIONS, unsafe=True)  # type: ignore[arg-type]
    assert after.fixed == 0 and after.new_text == verified.new_text
    assert not [f for f in after.findings if f.code in ("PL001", "PL009")]
    # Line endings: the sequence of endings is the original's (the fixes here never add or remove a line).
    assert re.findall(r"\r\n|\r|\n", verified.new_text) == re.findall(r"\r\n|\r|\n", text)


@PROPERTY_SETTINGS
@given(data=files("toml"))
def test_toml_written_is_verified(tmp_path: Path, data: bytes) -> None:
    check_property(tmp_path, "toml", data)


@PROPERTY_SETTINGS
@given(data=files("yaml"))
def test_yaml_written_is_verified(tmp_path: Path, data: bytes) -> None:
    check_property(tmp_path, "yaml", data)


@PROPERTY_SETTINGS
@given(data=files("json"))
def test_json_written_is_verified(tmp_path: Path, data: bytes) -> None:
    check_property(tmp_path, "json", data)


@PROPERTY_SETTINGS
@given(data=files("python"))
def test_python_written_is_verified(tmp_path: Path, data: bytes) -> None:
    check_property(tmp_path, "python", data)
