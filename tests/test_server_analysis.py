"""The language server's pure parts (no LSP): a buffer's findings as `check` reports them, per-file configuration,
fixes and suppressions verified before they are offered, editor coordinates, and the light start-up of `check`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from precisionlint.cli.commands import main
from precisionlint.core.model import Edit
from precisionlint.server.analysis import (
    ProjectConfigs,
    analyse,
    file_suppression,
    find_config_file,
    fix_all_text,
    line_suppression,
    minimal_edit,
    verified_fix,
)

ROOT = Path(__file__).resolve().parent.parent
# The `_target_` names the reader (Lightning's Trainer): precisionlint reports a config only on such evidence.
TRAINER = "  _target_: lightning.pytorch.Trainer\n"
LEGACY_YAML = "trainer:\n  precision: 16\n  max_epochs: 3\n" + TRAINER


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    # Lightning 2.x declared: the fix of a 1.x precision spelling is safe only with a 2.x floor.
    (tmp_path / "requirements.txt").write_text("lightning>=2.2\n")
    return tmp_path


def check_json(path: Path, cwd: Path) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--output-format", "json", str(path)],
                          capture_output=True, text=True, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_buffer_findings_equal_check_on_the_saved_file(project: Path) -> None:
    path = project / "configs" / "train.yaml"
    path.parent.mkdir()
    path.write_text("trainer:\n  precision: 16-mixed\n" + TRAINER, encoding="utf-8")  # the disk differs
    analysis = analyse(path, LEGACY_YAML, ProjectConfigs())
    path.write_text(LEGACY_YAML, encoding="utf-8")
    expected = check_json(path, project)
    got = [f.to_json() for f in analysis.findings]
    for finding in got + expected:
        finding.pop("path")
        # The JSON report adds a schema version and line/column positions to each edit (README, "The JSON
        # contract"); the findings themselves must be the same.
        finding.pop("schema_version", None)
        for edit in (finding["fix"] or {}).get("edits", []):
            edit.pop("location", None)
            edit.pop("end_location", None)
    assert got == expected


def test_a_linked_file_belongs_to_the_folder_it_is_linked_into(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # b/train.yaml is fine under b's Lightning 2.2 pin; the same file linked into a/ is read under a's 1.9.5
    # pin, which rejects "bf16-mixed". check reports the link by its own place; so must the server.
    for folder, pin in (("a", "1.9.5"), ("b", "2.2.0")):
        (project / folder).mkdir()
        (project / folder / "requirements.txt").write_text(f"pytorch-lightning=={pin}\n")
    text = "trainer:\n  max_epochs: 10\n  precision: bf16-mixed\n"
    (project / "b" / "train.yaml").write_text(text)
    linked = project / "a" / "train.yaml"
    linked.symlink_to(Path("..") / "b" / "train.yaml")
    monkeypatch.chdir(project)
    expected = check_json(linked, project)
    assert [f["code"] for f in expected] == ["PL401"]
    analysis = analyse(linked, text, ProjectConfigs())
    assert [(f.code, f.span.line, f.message) for f in analysis.findings] == [
        (f["code"], f["line"], f["message"]) for f in expected]


def test_configuration_per_file_and_its_precedence(project: Path) -> None:
    sub = project / "sub"
    sub.mkdir()
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nignore = ["PL102"]\n')
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no table: not a configuration
    assert find_config_file(sub / "a.yaml") == (project / "pyproject.toml").resolve()
    (sub / "precisionlint.toml").write_text("select = ['ALL']\n")
    assert find_config_file(sub / "a.yaml") == (sub / "precisionlint.toml").resolve()
    (sub / ".precisionlint.toml").write_text("select = ['ALL']\n")
    assert find_config_file(sub / "a.yaml") == (sub / ".precisionlint.toml").resolve()

    configs = ProjectConfigs()
    assert analyse(project / "a.yaml", LEGACY_YAML, configs).findings == []  # PL102 ignored at the root
    assert [f.code for f in analyse(sub / "a.yaml", LEGACY_YAML, configs).findings] == ["PL102"]


def test_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.precisionlint]\nignore = ["PL102"]\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert find_config_file(repo / "a.yaml") is None


def test_excludes_and_per_file_ignores_are_honoured(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.precisionlint]\nexclude = ["generated/"]\nper-file-ignores = { "legacy/*" = ["PL102"] }\n')
    configs = ProjectConfigs()
    excluded = analyse(project / "generated" / "a.yaml", LEGACY_YAML, configs)
    assert excluded.excluded and excluded.findings == []
    assert analyse(project / "legacy" / "a.yaml", LEGACY_YAML, configs).findings == []
    assert [f.code for f in analyse(project / "other" / "a.yaml", LEGACY_YAML, configs).findings] == ["PL102"]


def test_a_broken_configuration_falls_back_to_the_defaults_and_says_why(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nignore = ["PL102"]\nselct = ["ALL"]\n')
    analysis = analyse(project / "a.yaml", LEGACY_YAML, ProjectConfigs())
    assert [f.code for f in analysis.findings] == ["PL102"]
    assert analysis.settings is not None and analysis.settings.error is not None
    assert "unknown key 'selct'" in analysis.settings.error
    (project / "pyproject.toml").write_text('[tool.precisionlint]\nignore = ["no-such-rule"]\n')
    analysis = analyse(project / "a.yaml", LEGACY_YAML, ProjectConfigs())
    assert analysis.settings is not None and "no-such-rule" in (analysis.settings.error or "")


def test_only_verified_fixes_are_offered(project: Path) -> None:
    analysis = analyse(project / "a.yaml", LEGACY_YAML, ProjectConfigs())
    [finding] = analysis.findings
    assert verified_fix(analysis, finding) == finding.fix
    # A fix whose edit would break the file is refused, as `check --fix` refuses it.
    assert finding.fix is not None
    broken = finding._replace(fix=finding.fix._replace(edits=(Edit(0, 8, "trainer: [\n"),)))
    assert verified_fix(analysis, broken) is None


def test_fix_all_is_what_check_fix_writes(project: Path) -> None:
    text = ("a:\n  trainer:\n    precision: 16\n    _target_: lightning.pytorch.Trainer\n"
            "b:\n  trainer:\n    precision: bf16  # keep\n    _target_: lightning.pytorch.Trainer\n")
    path = project / "two.yaml"
    new_text = fix_all_text(analyse(path, text, ProjectConfigs()))
    path.write_text(text, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "precisionlint", "check", "--fix", str(path)], cwd=project,
                   capture_output=True)
    assert new_text == path.read_text(encoding="utf-8")


def test_suppressions_silence_exactly_that_finding(project: Path) -> None:
    configs = ProjectConfigs()
    yaml_analysis = analyse(project / "a.yaml", LEGACY_YAML, configs)
    [finding] = yaml_analysis.findings
    edit = line_suppression(yaml_analysis, finding)
    assert edit is not None
    from precisionlint.fix.edits import apply_edits

    assert apply_edits(LEGACY_YAML, [edit]) == (
        "trainer:\n  precision: 16  # precisionlint: ignore[legacy-precision-value]\n  max_epochs: 3\n" + TRAINER)
    # A directive already on the line gets the rule added to it.
    with_directive = "trainer:\n  precision: 16  # precisionlint: ignore[PL101]\n" + TRAINER
    analysis = analyse(project / "b.yaml", with_directive, configs)
    edit = line_suppression(analysis, analysis.findings[0])
    assert edit is not None
    assert apply_edits(with_directive, [edit]) == (
        "trainer:\n  precision: 16  # precisionlint: ignore[PL101, legacy-precision-value]\n" + TRAINER)

    # Python: after a shebang and an encoding line, never above them.
    script = ("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport torch\nscaler = torch.cuda.amp.GradScaler()\n"
              "with torch.cuda.amp.autocast():\n    loss = model(x)\nscaler.scale(loss).backward()\n")
    analysis = analyse(project / "train.py", script, configs)
    assert analysis.findings
    edit = file_suppression(analysis, analysis.findings[0])
    assert edit is not None
    new = apply_edits(script, [edit])
    assert new.splitlines()[2] == f"# precisionlint: file-ignore[{analysis.findings[0].name}]"

    # JSON has no comments, and engine findings cannot be silenced inline.
    json_analysis = analyse(project / "ds.json", '{"fp16": {"enabled": true, "loss_scale": 128}}', configs)
    assert all(line_suppression(json_analysis, f) is None for f in json_analysis.findings)
    broken = analyse(project / "c.yaml", "precision: [16\n", configs)
    assert [f.code for f in broken.findings] == ["PL001"]
    assert line_suppression(broken, broken.findings[0]) is None


def test_a_suppression_that_would_not_work_is_not_offered(project: Path) -> None:
    # The finding's line ends inside a triple-quoted string: a comment there would be text, not a directive.
    script = ('import torch\nscaler = torch.cuda.amp.GradScaler(); doc = """\n"""\n')
    analysis = analyse(project / "t.py", script, ProjectConfigs())
    [finding] = [f for f in analysis.findings if f.span.line == 2]
    assert line_suppression(analysis, finding) is None


def test_minimal_edit() -> None:
    assert minimal_edit("abcdef", "abXYef") == Edit(2, 4, "XY")
    assert minimal_edit("aaa", "aaaa") == Edit(3, 3, "a")
    assert minimal_edit("same", "same") == Edit(4, 4, "")


def test_positions_in_utf16_utf8_and_utf32() -> None:
    pytest.importorskip("lsprotocol")
    from lsprotocol import types

    from precisionlint.server.convert import Positions

    text = "x = '\U0001f680é'; y\n"
    for encoding, column in (("utf-16", 9), ("utf-8", 12), ("utf-32", 8)):
        positions = Positions(text, encoding)
        position = positions.position(1, 9)  # the ";": after an emoji (2 UTF-16 units, 4 bytes) and é (1, 2)
        assert position == types.Position(line=0, character=column)
        assert positions.to_columns(position) == (1, 9)


def test_check_never_imports_the_server_libraries(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(LEGACY_YAML)
    probe = ("import atexit, sys\natexit.register(lambda: print(sorted(m for m in sys.modules "
             "if m.split('.')[0] in ('pygls', 'lsprotocol', 'cattrs', 'precisionlint.server')), file=sys.stderr))\n"
             "sys.argv = ['precisionlint', 'check', 'a.yaml']\nfrom precisionlint.cli.entry import main\nmain()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_server_command_is_listed_and_documented() -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["--help"])
    assert "server" in listed.output
    helped = runner.invoke(main, ["server", "--help"])
    assert helped.exit_code == 0 and "language server" in helped.output


def test_a_superseded_analysis_leaves_no_cyclic_garbage(project: Path) -> None:
    """The server analyses a buffer at every change: what it lets go must be freed at once, not left in reference
    cycles for the garbage collector (the script model's scopes and regions, ast.literal_eval's closures), or its
    memory climbs with every change. Its fixes are still verified after the model is let go."""
    import gc

    script = ("import torch\nSTEPS = 10\nLR = (1e-3, -2)\nscaler = torch.cuda.amp.GradScaler()\n"
              "def train(model, optimizer, data):\n    for x in data:\n        with torch.autocast('cuda'):\n"
              "            loss = model(x)\n        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n"
              "        scaler.update()\n")
    path = project / "train.py"
    path.write_text(script)
    configs = ProjectConfigs()
    analyse(path, script, configs)  # the first: imports, caches
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        for number in range(5):
            analysis = analyse(path, script + f"# change {number}\n", configs)
            assert analysis.findings
            assert any(verified_fix(analysis, finding) for finding in analysis.findings if finding.fix)
        del analysis
        assert gc.collect() == 0
    finally:
        if collecting:
            gc.enable()


def _training_script() -> str:
    """The real-shaped 2,000-line training script of benchmarks/server_latency.py (the corpus' training loops,
    then ordinary functions and classes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("server_latency", ROOT / "benchmarks" / "server_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.training_script())


def _typing(project: Path, changes: int) -> Iterator[Any]:
    """`changes` edits of the training script as typing sends them (a comment at the end of a line each time),
    each as the server's snapshot of the buffer."""
    pytest.importorskip("pygls")
    from precisionlint.server.precision_server import Snapshot

    script = _training_script()
    path = project / "train.py"
    path.write_text(script)
    lines = script.split("\n")
    for number in range(changes):
        lines[len(lines) // 2 + number * 7] += f"  # edit {number}"
        yield Snapshot(path.as_uri(), number + 1, "\n".join(lines), "python")


def test_the_servers_superseded_analyses_of_a_training_script_leave_no_cyclic_garbage(project: Path) -> None:
    """The server keeps a script's last few analyses and lets older ones go as the user types; each must be
    freed by reference counting alone, over many changes of a real-shaped script (the server freezes what a
    check leaves alive, collection.py: a cycle among those objects would stay until its next sweep)."""
    import gc

    from precisionlint.server.precision_server import PrecisionServer

    server = PrecisionServer()
    snapshots = list(_typing(project, 12))
    server.analyse(snapshots[0])  # the first: imports, caches
    gc.unfreeze()
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        for snapshot in snapshots[1:]:
            analysis = server.analyse(snapshot)
            assert analysis is not None and analysis.findings and analysis.document is not None
        del analysis
        gc.unfreeze()  # the frozen objects too
        assert gc.collect() == 0
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()


def test_no_collection_walks_what_a_check_left_alive(project: Path) -> None:
    """A check makes ~100,000 objects (tree, script model) with the collector off; the first allocation after
    it used to start a collection walking all of those that the server keeps (the parsed document), and again
    as they aged: about 40% of a change's CPU time. They are frozen instead, and still freed when superseded."""
    import gc
    import weakref

    from precisionlint.server.precision_server import RECENT_PER_DOCUMENT, PrecisionServer

    server = PrecisionServer()
    snapshots = list(_typing(project, RECENT_PER_DOCUMENT + 2))
    try:
        first = server.analyse(snapshots[0])
        assert first is not None and first.document is not None
        tree = first.document.tree
        assert tree is not None
        walked = {id(obj) for obj in gc.get_objects()}  # every generation that collections walk
        assert id(tree) not in walked
        gone = weakref.ref(tree)
        del first, tree, walked
        for snapshot in snapshots[1:]:
            server.analyse(snapshot)
        assert gone() is None  # superseded: freed by reference counting, frozen or not
    finally:
        gc.unfreeze()


def test_a_keystroke_outside_import_lines_does_not_read_the_folders_files_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-project packages a folder's code imports are read from the disk (project.vendored: up to 400 files
    per folder): the server forgets them when the file is saved or its import lines change, not at every
    keystroke of the buffer."""
    from precisionlint.project import model, vendored
    from precisionlint.server.precision_server import PrecisionServer, Snapshot

    (tmp_path / ".git").mkdir()
    package = tmp_path / "app" / "ImageBind"
    package.mkdir(parents=True)
    (package / "requirements.txt").write_text("torch==1.13.0\n")
    (package / "__init__.py").write_text("")
    path = tmp_path / "app" / "train.py"
    text = "import torch\nfrom ImageBind import models\nwith torch.cuda.amp.autocast():\n    pass\n"
    path.write_text(text, encoding="utf-8")
    reads: list[str] = []
    real_imported_packages = vendored.imported_packages

    def counting(folder: str, names: frozenset[str]) -> list[str]:
        reads.append(folder)
        return real_imported_packages(folder, names)

    monkeypatch.setattr(vendored, "imported_packages", counting)
    monkeypatch.setattr(model, "_CURRENT", [])
    monkeypatch.chdir(tmp_path)
    server = PrecisionServer()
    server.project_model.tops = (str(tmp_path),)
    model.use(server.project_model)
    uri, real = path.as_uri(), str(path.resolve())

    def keystroke(version: int, new: str) -> str:
        snapshot = Snapshot(uri, version, new, "python")
        server.forget_changes(snapshot, real)
        analysis = server.analyse(snapshot)
        assert analysis is not None
        [finding] = analysis.findings
        return finding.described()

    assert "does not warn yet" in keystroke(1, text)
    read_at_open = len(reads)
    assert read_at_open >= 1
    for version in range(2, 6):  # typing in the with block: the same import lines
        assert "does not warn yet" in keystroke(version, text.replace("pass", "pass" + "  # x" * version))
    assert len(reads) == read_at_open
    keystroke(6, text.replace("from ImageBind import models", "from ImageBind import data"))
    assert len(reads) > read_at_open  # an import line changed: read again
    read_before_save = len(reads)
    server.saved.add(real)  # didSave
    keystroke(7, text.replace("from ImageBind import models", "from ImageBind import data"))
    assert len(reads) > read_before_save
