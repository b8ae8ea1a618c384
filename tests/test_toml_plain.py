"""sources.toml_plain: plain TOML read without tomllib, to tomllib's values, and everything else left to tomllib.

Compared with tomllib itself: every value with its type and every table's key order, on hand-written cases, on the
repository's own TOML files and on mutations of plain configs (a mutation that tomllib refuses must never be read).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from precisionlint.sources.toml_plain import parse_plain

tomllib = pytest.importorskip("tomllib")  # Python 3.11+ (on 3.10 tomlkit parses; the comparison needs tomllib)

ROOT = Path(__file__).resolve().parent.parent


def typed(value: Any) -> Any:
    """A value with the type of every scalar and the order of every table's keys (True == 1 and 1 == 1.0)."""
    if isinstance(value, dict):
        return [(key, typed(item)) for key, item in value.items()]
    if isinstance(value, list):
        return ["list", [typed(item) for item in value]]
    return (type(value).__name__, repr(value))


def tomllib_reads(text: str) -> Any:
    try:
        return typed(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return None


PLAIN = [
    "",
    "\n\n# only a comment\n",
    '[trainer]\nprecision = "16-mixed"\naccelerator = "gpu"\n',
    "a = 1\n[b]\nc = 2.5e-3 # after a value\n[b.d]\n[e.f]\n[e]\ng = true\nh = false\n",
    "x = 0\ny = -0\nz = +7\nw = 123456789012345678\nf = -0.0\ng = 1e06\nh = 6.02E+23\ni = 3.25\nj = 1e999\n",
    "  [ tool . precisionlint ]  # indented, spaces in the header\n\tkey\t=\t'C:\\path #not a comment'\n",
    "s = \"a # b ' c\"\nt = '\"quoted\"'\nempty = \"\"\nlit = ''\n1 = 2\ntrue = false\nkebab-case_key = 3\n",
    "[a.b.c]\nx = 1\n[a.b]\ny = 2\n[a]\nz = 3\n",
    "last = 1",  # no newline at the end
    "v = 1#comment right after\nw = \"x\"#\n",
]

# Valid TOML that is not plain: tomllib reads it (with the same values as before this module existed).
NOT_PLAIN = [
    "a = [1, 2]\n", "a = {b = 1}\n", "a.b = 1\n", '"quoted key" = 1\n', "[a.'b']\n", "d = 1979-05-27\n",
    "t = 07:32:00\n", 's = "tab\\tescape"\n', 's = """multi\nline"""\n', "s = '''lit'''\n", "x = inf\n", "x = nan\n",
    "x = 1_000\n", "x = 0xff\n", "x = 0o7\n", "x = 0b1\n", "[[runs]]\nx = 1\n", 's = "é"\n', "# é\n",
    "a = 1\r\nb = 2\r\n", "x = 1" + "0" * 30 + "\n",
]

# Invalid TOML: tomllib refuses it, with its own message and position; the plain reader must not read it.
INVALID = [
    "a = 1\na = 2\n", "[a]\n[a]\n", "[ a ]\n[a]\n", "[a]\nb = 1\n[a.b]\n", "[a.b]\n[a]\nb = 1\n", "x = 01\n",
    "x = 1.\n", "x = .5\n", "x = +\n", "x =\n", "= 1\n", "x = 1 2\n", "x = True\n", "x = trueish\n", "x = 1e\n",
    "[a\n", "[]\n", "[a.]\n", "x = \"unterminated\n", "x = 'a\x01b'\n", "# bell \x07\n", "x = 1 # del \x7f\n",
    "x = \"a\" \"b\"\n", "x 1\n", "[a] b = 1\n", "x = 1979-05-27T\n", "x = -\n", "a = 1\n\x00\n",
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_configs_read_as_tomllib_reads_them(text: str) -> None:
    got = parse_plain(text)
    assert got is not None, text
    assert typed(got) == tomllib_reads(text)


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_other_valid_toml_is_left_to_tomllib(text: str) -> None:
    assert tomllib_reads(text) is not None, text  # the case is valid TOML
    assert parse_plain(text) is None


@pytest.mark.parametrize("text", INVALID)
def test_invalid_toml_is_left_to_tomllib(text: str) -> None:
    assert tomllib_reads(text) is None, text  # the case is invalid TOML
    assert parse_plain(text) is None


def test_the_repositorys_toml_files_read_as_tomllib_reads_them() -> None:
    """The rule cases' and tests' TOML files (and the project's own): each read as tomllib reads it, or left to it;
    most rule cases are plain configs."""
    plain = 0
    paths = sorted([*ROOT.glob("rules/**/*.toml"), *ROOT.glob("tests/**/*.toml"), ROOT / "pyproject.toml"])
    for path in paths:
        text = path.read_text(encoding="utf-8")
        got = parse_plain(text)
        if got is not None:
            plain += 1
            assert typed(got) == tomllib_reads(text), path
    assert plain >= 10, (plain, len(paths))


def test_mutations_of_plain_configs_are_read_as_tomllib_reads_them_or_left_to_it() -> None:
    """Characters inserted, deleted and lines repeated at random (a fixed seed) in plain configs: whenever the plain
    reader reads a mutation, tomllib reads it to the same value; a mutation tomllib refuses is never read."""
    rng = random.Random(31)
    pieces = [*" \t\n#=[].\"'\\-+_019eEtrufals,{}\r\x00\x7f:", "true", "false", '"""', "'''", "[[", "1.", ".5", "é"]
    read = 0
    for _ in range(3000):
        text = rng.choice(PLAIN)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            choice = rng.random()
            if choice < 0.4:
                text = text[:at] + rng.choice(pieces) + text[at:]
            elif choice < 0.7:
                text = text[:at] + text[at + 1:]
            else:
                lines = text.split("\n")
                lines.insert(rng.randint(0, len(lines)), rng.choice(lines))
                text = "\n".join(lines)
        got = parse_plain(text)
        if got is not None:
            read += 1
            assert typed(got) == tomllib_reads(text), repr(text)
    assert read > 500  # the mutations exercised the reader, not only its refusals
