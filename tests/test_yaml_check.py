"""The check-only YAML loader (libyaml's composer) gives exactly what the round-trip loader gives: the same tree
positions and values, settings, duplicate keys and errors, on every YAML file of the repository and on the
shapes where the two parsers place things differently. Where it cannot, it hands the file to the round-trip
loader, which these tests prove by comparing results, not by trusting the hand-off."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precisionlint.frameworks.documents import read_settings
from precisionlint.sources import LimitError, Limits, SourceError, yaml_check, yaml_source
from precisionlint.sources.tree import Node, NodeBudget

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(p for pattern in ("rules/**/*.y*ml", "examples/**/*.y*ml", "tests/**/*.y*ml")
               for p in ROOT.glob(pattern) if p.is_file())

SHAPES = {
    "plain": "trainer:\n  precision: 16-mixed\n  devices: 2\n  max_steps: 1.5e3\n",
    "empty values": "a:\n  b:\n  c: 1\nd:\n  e:  # a comment\n  f:\n    # a comment on its own line\n  g: x\nh:\n",
    "empty last in nested": "v:\n  x: 1\n  run:  # blank: read from the environment\n\ntop: 1\n",
    "empty at the end": "trainer:\n  precision:",
    "scalars": "a: yes\nb: on\nc: 010\nd: 1_000\ne: 0x1F\nf: .inf\ng: 2001-12-14\nh: ~\ni: null\nj: True\n"
               "k: '16'\nl: \"bf16\"\nm: -3\nn: +4.\n",
    "underscored ints": "stop_at: 406_934\na: -1_000\nb: +_1\nc: 0_7\nd: 1__0_\n2_0: key\ne: [1_0, -0_0]\n",
    "underscores alone": "a: _\nb: -__\n",
    "keys": "1: a\ntrue: b\n'quoted key': c\n\"precision\": 16\nnull: d\n",
    "flow": "trainer: {precision: 16, devices: [0, 1], plugins: {}}\nlist: [a, {b: c}]\n",
    "block scalars": "trainer:\n  precision: |\n    16\n  note: >\n    folded\n    text\n",
    "sequences": "- precision: 16\n- - nested\n  - list\n-\n- last\n",
    "anchors": "base: &b\n  precision: 16\nrun:\n  <<: *b\n  devices: 2\nother: *b\n",
    "ampersand in a block scalar": "steps:\n  - run: |\n      python train.py &> log.txt\n      echo a & b\n"
                                   "precision: 16\nflow: [a&b, x & y]\n",
    "tags": "a: !!str 16\nb: !custom x\nprecision: 16\n",
    # HyperPyYAML (SpeechBrain): local tags on scalars, empty values, mappings and sequences, flow and block
    "local tags": "seed: 1234\n__set_seed: !apply:speechbrain.utils.seed_everything [!ref <seed>]\n"
                  "out: !ref results/<seed>\nact: !new:torch.nn.ReLU\nlast: !name:f\nn: !ref 5\n"
                  "model: !new:speechbrain.nnet.CNN\n  channels: 3\n  kernel: [3, !ref <seed>]\n"
                  "flow: !new:f {x: 1, y: [2]}\nblock: !tuple\n  - 1\n  - 2\nlist:\n  - !new:f [1]\n  - !ref <x>\n"
                  "  - !name:g\nprecision: !ref <p>\n",
    "tagged key": "!k key: 1\n",
    "duplicates": "trainer:\n  precision: 16\n  precision: bf16-mixed\n",
    "duplicate by value": "1: a\n1.0: b\ntrue: c\n",
    "documents": "---\nprecision: 16\n---\nprecision: bf16\n...\n",
    "directive": "%YAML 1.1\n---\nprecision: 16\n",
    "complex key": "? [a, b]\n: precision\n",
    "carriage returns": "trainer:\r\n  precision: 16\r\n",
    "byte-order marks": "\ufeff\ufefftrainer: {precision: 16}\nx: \"a\ufeffb\"\n",
    "unicode": "# 训练配置\ntrainer:\n  name: 模型\n  precision: 16  # 半精度\n",
    "broken": "trainer:\n  precision: [16\n",
    "tab": "trainer:\n\tprecision: 16\n",
    "empty": "",
    "comments only": "# nothing here\n",
    "deep": "a: " + "[" * 300 + "]" * 300 + "\n",
}


def _dump(node: Node) -> Any:
    if node.kind == "map":
        return ("map", node.start, node.end,
                [(e.key, e.key_start, e.key_end, e.removal, _dump(e.value)) for e in node.entries])
    if node.kind == "seq":
        return ("seq", node.start, node.end, [_dump(item) for item in node.items])
    return ("scalar", node.start, node.end, type(node.value).__name__, node.value)


def _result(load: Any, text: str) -> Any:
    try:
        document = load("t.yaml", text, Limits())
    except (SourceError, LimitError) as exc:
        return ("error", type(exc).__name__, str(exc), getattr(exc, "line", None), getattr(exc, "column", None))
    read_settings(document)  # the frameworks read each loader's tree the same way
    return ("ok", [_dump(root) for root in document.tree], document.settings, document.duplicate_keys,
            document.line_starts)


def _same(text: str) -> None:
    assert _result(yaml_check.load, text) == _result(yaml_source.load, text)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes(name: str) -> None:
    _same(SHAPES[name])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_repository_files(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8 (a decoding case)")
    _same(text)


def test_the_fast_path_is_taken_for_ordinary_files(monkeypatch: pytest.MonkeyPatch) -> None:
    if yaml_check._tools() is None:
        pytest.skip("PyYAML with libyaml is not installed: every file takes the round-trip path")
    calls: list[str] = []
    monkeypatch.setattr(yaml_source, "load", lambda *args: calls.append("round trip"))
    for name in ("plain", "empty values", "empty last in nested", "flow", "block scalars", "documents", "unicode",
                 "underscored ints"):
        yaml_check.load("t.yaml", SHAPES[name], Limits())
    assert calls == []


def _scalar_end_by_character(text: str, start: int, flow: bool, key: bool = False) -> int:
    """The extent of a single-line scalar, one character at a time: the definition the loaders' faster scan
    must agree with everywhere."""
    if start >= len(text):
        return start
    char = text[start]
    if char == '"':
        end = start + 1
        while end < len(text) and text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        return min(end + 1, len(text))
    if char == "'":
        end = start + 1
        while end < len(text):
            if text[end] == "'":
                if text.startswith("''", end):
                    end += 2
                    continue
                return end + 1
            end += 1
        return end
    if char in "|>&*!{[":
        line_end = text.find("\n", start)
        return len(text) if line_end == -1 else line_end
    end = start
    stops = ",]}" if flow else ""
    while end < len(text) and text[end] not in "\r\n" + stops:
        if text[end] == "#" and end > start and text[end - 1] in " \t":
            break
        if key and text[end] == ":" and (end + 1 >= len(text) or text[end + 1] in " \t\r\n"):
            break
        end += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    return end


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab :#,]}[{\"'\\\t\r\n|>&*!-", max_size=30), st.integers(0, 31), st.booleans(),
       st.booleans())
def test_scalar_extents_match_a_character_scan(text: str, start: int, flow: bool, key: bool) -> None:
    walker = yaml_source._Walker(text, [0], NodeBudget(10, 10))
    assert walker._scalar_end(start, flow, key) == _scalar_end_by_character(text, start, flow, key)


def test_scalar_extents_on_every_position_of_the_shapes() -> None:
    for text in SHAPES.values():
        walker = yaml_source._Walker(text, [0], NodeBudget(10, 10))
        for start in range(len(text) + 1):
            for flow in (False, True):
                for key in (False, True):
                    assert walker._scalar_end(start, flow, key) == _scalar_end_by_character(text, start, flow, key)


# The text test that sends a file to the round-trip path, as patterns: the faster test must agree with them. What
# looks like an anchor counts only when libyaml's parser reads an anchor there (or rejects the text).
_UNUSUAL = re.compile(r"[\r\ufeff]|^%|^\s*\?(?:\s|$)|(?:^|[\s\[{,])(?:!!|!<)\S", re.MULTILINE)
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,])&\S", re.MULTILINE)


def _unusual_by_patterns(text: str) -> bool:
    return bool(_UNUSUAL.search(text)) or (bool(_MAYBE_ANCHOR.search(text)) and yaml_check._anchored(text))


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="a :#,[]{}\t\r\n\ufeff\u2028\x85%?&!<>-|", max_size=20))
def test_the_unusual_text_test_is_the_pattern(text: str) -> None:
    assert yaml_check._unusual(text) == _unusual_by_patterns(text)


def test_the_unusual_text_test_on_the_shapes() -> None:
    for text in SHAPES.values():
        assert yaml_check._unusual(text) == _unusual_by_patterns(text)


def test_an_ampersand_in_a_block_scalar_is_not_an_anchor() -> None:
    """A workflow's shell step (`run.sh &> log`) keeps the file on this path; a real anchor does not."""
    if yaml_check._tools() is None:
        pytest.skip("PyYAML with libyaml is not installed: every file takes the round-trip path")
    assert not yaml_check._unusual(SHAPES["ampersand in a block scalar"])
    assert yaml_check._unusual(SHAPES["anchors"])
    assert yaml_check._unusual("a: &x 1\n")  # an anchor no alias names
    assert yaml_check._unusual("a: !local &x 1\n")  # after a local tag
    assert yaml_check._unusual("a: [&x 1\n")  # libyaml rejects it: the round-trip path reports it


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="0123456789+-._:eExXoObBaflsnrtuyTFNYL~ <=!&*", max_size=12))
def test_scalar_tags_are_ruamels(text: str) -> None:
    """The tag of a plain scalar, as this path looks it up, is the one ruamel's resolver gives."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    if yaml_check._tools() is None:
        pytest.skip("PyYAML with libyaml is not installed")
    resolve = yaml_check._tools().resolve  # type: ignore[union-attr]
    assert resolve(text) == str(VersionedResolver().resolve(ScalarNode, text, (True, False)))


# ---------------------------------------------------------------------------------------------------------------
# ruamel's scalar table, kept between runs (yaml_check._scalar_resolver)
# ---------------------------------------------------------------------------------------------------------------


def _ruamel_table() -> tuple[Any, Any, str]:
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    resolver = VersionedResolver()
    _, table, default = yaml_check._table_resolver(resolver, ScalarNode)
    assert table is not None, "this ruamel's table is no longer the lookup's shape"
    return resolver, table, default


def test_the_copied_table_is_in_step_with_the_installed_ruamel() -> None:
    """yaml_scalar_table.py is ruamel's table as make_yaml_scalar_table copies it; when this fails after a ruamel
    upgrade, run `python -m precisionlint.sources.make_yaml_scalar_table`."""
    from precisionlint.sources import make_yaml_scalar_table, yaml_scalar_table

    rows, default, _ = make_yaml_scalar_table.installed_table()
    assert (yaml_scalar_table.TABLE, yaml_scalar_table.DEFAULT) == (rows, default), (
        "run `python -m precisionlint.sources.make_yaml_scalar_table`")


_COPIED: list[Any] = []  # the copied table's resolver, made once for all examples


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="0123456789+-._:eExXoObBaflsnrtuyTFNYL~ <=!&*", max_size=12))
def test_the_copied_table_gives_ruamels_tags(text: str) -> None:
    from ruamel.yaml.nodes import ScalarNode

    if not _COPIED:
        _COPIED.append(yaml_check._copied_table())
    resolver, _, _ = _ruamel_table()
    assert _COPIED[0](text) == str(resolver.resolve(ScalarNode, text, (True, False)))


def test_the_resolver_digest_reads_only_a_regular_file_of_sensible_size(tmp_path: Path) -> None:
    import os

    small = tmp_path / "resolver.py"
    small.write_bytes(b"x = 1\n")
    assert yaml_check.resolver_digest(str(small)) == f"6:{__import__('zlib').crc32(b'x = 1' + bytes([10])):08x}"
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (yaml_check._RESOLVER_READ_LIMIT + 1))
    assert yaml_check.resolver_digest(str(big)) is None
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert yaml_check.resolver_digest(str(fifo)) is None  # opened without blocking, then refused
    assert yaml_check.resolver_digest(str(tmp_path / "missing.py")) is None


# A check in a fresh interpreter that reports whether it imported ruamel, with a copy of the installed ruamel.yaml
# first on the path: the copied table is used only for a resolver.py it was made from.
_CHECK_PROBE = r"""
import atexit, sys
out = sys.argv[1]
def dump():
    with open(out, "w") as handle:
        handle.write("ruamel" if "ruamel.yaml" in sys.modules else "")
atexit.register(dump)
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
main()
"""


def test_a_check_imports_ruamel_only_for_a_resolver_the_table_was_not_copied_from(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    import ruamel.yaml

    site = tmp_path / "site"
    shutil.copytree(Path(ruamel.yaml.__file__).parent, site / "ruamel" / "yaml",
                    ignore=shutil.ignore_patterns("__pycache__"))
    resolver = site / "ruamel" / "yaml" / "resolver.py"
    project = tmp_path / "project"
    project.mkdir()
    (project / "lightning.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
                                            "  max_steps: 1_000\n  devices: [0, 1]\n  enable_progress_bar: yes\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    package_files = sorted(str(path) for path in (ROOT / "precisionlint").rglob("*.json"))

    def check() -> tuple[str, bool]:
        marker = tmp_path / "imported"
        done = subprocess.run(
            [sys.executable, "-c", _CHECK_PROBE, str(marker), "check", "--no-cache", "--output-format", "json",
             "lightning.yaml"], cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        return done.stdout, marker.read_text() == "ruamel"

    first, imported = check()
    assert not imported  # the installed ruamel's resolver is one the table was copied from
    resolver.write_text(resolver.read_text() + "\n# another release\n")
    changed, imported = check()
    assert imported and changed == first  # another resolver: asked ruamel itself, same findings
    again, imported = check()
    assert imported and again == first  # and nothing was kept for it: it is asked again
    assert sorted(str(path) for path in (ROOT / "precisionlint").rglob("*.json")) == package_files


def test_a_big_config_is_read_without_a_composed_graph_of_the_whole_file() -> None:
    """The tree is built from libyaml's events as they are parsed: at no time are libyaml's composed nodes (two
    marks each) of the whole file held beside it. Traced peak of a 0.5 MB config: 52 bytes per byte when the
    file was composed first, 26 now."""
    import tracemalloc

    if yaml_check._tools() is None:
        pytest.skip("PyYAML with libyaml is not installed")
    parts = ["trainer:\n  precision: 16-mixed\n  devices: 8\nexperiments:\n"]
    for run in range(3000):
        parts.append(f"  run_{run:05d}:\n    description: \"ablation {run}\"\n    model:\n      dim: {run}\n"
                     "      heads: 16\n      layers: [1, 2, 3, 4]\n    optimizer:\n      lr: 3.0e-4\n"
                     "      betas: [0.9, 0.95]\n")
    text = "".join(parts)
    yaml_check.load("warm.yaml", parts[0], Limits())  # the parser's import and tables, before tracing
    tracemalloc.start()
    try:
        document = yaml_check.load("big.yaml", text, Limits())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert document.tree[0].entries[1].value.entries[2999].key == "run_02999"
    assert peak < 40 * len(text)


def test_libyaml_that_cannot_be_mapped_is_out_of_memory_not_a_pyyaml_without_it(monkeypatch: Any) -> None:
    """Under a memory limit, `import yaml` can fail because its shared library cannot be mapped: that is the
    limit's doing (a MemoryError, said as out of memory), not a PyYAML without libyaml, whose answer (None: the
    round-trip path) would be kept for the run and would import ruamel under the same limit."""
    import builtins

    real_import = builtins.__import__

    def failing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "yaml":
            raise ImportError("libyaml.so: failed to map segment from shared object")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(yaml_check, "_STATE", {})
    monkeypatch.setattr(builtins, "__import__", failing)
    with pytest.raises(MemoryError):
        yaml_check._tools()
    assert "tools" not in yaml_check._STATE
