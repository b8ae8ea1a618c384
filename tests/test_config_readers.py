"""The scripts of a project name the reader of the configs they load (project/config_readers.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from precisionlint.project.config_readers import readers
from precisionlint.project.model import current

CONFIG = "train:\n  precision: 16\n  batch_size: 8\n"
SCRIPT = """import yaml
from lightning import Trainer

cfg = yaml.safe_load(open("configs/train.yaml"))
trainer = Trainer(precision=cfg["train"]["precision"])
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", "check", "--no-progress", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(autouse=True)
def _fresh():
    current().forget()
    yield
    current().forget()


def test_the_reading_call_is_the_evidence_and_the_related_location(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "configs/train.yaml": CONFIG,
                      "train.py": SCRIPT})
    shown = _check(tmp_path, "--show-frameworks", "configs")
    assert "train at line 2: lightning (certain) - read by train.py:5 into lightning.Trainer" in shown.stdout
    [finding] = json.loads(_check(tmp_path, "--no-cache", "--output-format", "json", ".").stdout)
    assert (finding["path"], finding["line"], finding["code"]) == ("configs/train.yaml", 2, "PL102")
    assert [(r["path"], r["line"]) for r in finding["related"]] == [("train.py", 5)]


def test_a_folder_with_no_project_boundary_is_its_own_project(tmp_path: Path) -> None:
    """No pyproject.toml, setup.py, setup.cfg or .git above the files: the scripts of the folder named on the
    command line are the config's readers (before, the file system's root was walked for them, and the standard
    library filled the walk's limit before this folder was reached: the reader was missed)."""
    project, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    _write(project, {"configs/train.yaml": CONFIG, "tools/train.py": SCRIPT})
    elsewhere.mkdir()
    [finding] = json.loads(_check(elsewhere, "--no-cache", "--output-format", "json", str(project)).stdout)
    assert (finding["line"], finding["code"]) == (2, "PL102")
    assert [Path(r["path"]).name for r in finding["related"]] == ["train.py"]


def test_a_project_with_no_boundary_ends_at_the_folder_named(tmp_path: Path) -> None:
    from precisionlint.project.model import ProjectModel

    (tmp_path / "a" / "b").mkdir(parents=True)
    named = ProjectModel(tops=(str(tmp_path / "a"),))
    assert named.project_of_folder(str(tmp_path / "a" / "b")).root == str(tmp_path / "a")
    assert ProjectModel().project_of_folder(str(tmp_path / "a" / "b")).root == str(tmp_path / "a" / "b")
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert ProjectModel(tops=(str(tmp_path / "a" / "b"),)).project_of_folder(str(tmp_path / "a" / "b")).root == \
        str(tmp_path / "a")  # a boundary wins over the folder named


def test_an_edited_script_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "configs/train.yaml": CONFIG,
                      "train.py": SCRIPT})
    assert [f["code"] for f in json.loads(_check(tmp_path, "--output-format", "json", ".").stdout)] == ["PL102"]
    (tmp_path / "train.py").write_text(SCRIPT.replace('precision=cfg["train"]["precision"]', 'precision="32-true"'))
    assert json.loads(_check(tmp_path, "--output-format", "json", ".").stdout) == []


@pytest.mark.parametrize("load", [
    'cfg = OmegaConf.load(os.path.join("configs", "train.yaml"))',
    'with open(args.config) as handle:\n        cfg = yaml.safe_load(handle)',
    'cfg = json.load(open(CONFIG))',
])
def test_loads_and_the_paths_they_name(tmp_path: Path, load: str) -> None:
    config = "configs/train.json" if "json.load" in load else "configs/train.yaml"
    script = f"""import argparse, json, os
import yaml
from omegaconf import OmegaConf
import pytorch_lightning as pl

CONFIG = "{config}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", default="configs/train.yaml")
    args = parser.parse_args()
    {load}
    section = cfg.get("trainer")
    return pl.Trainer(**section)
"""
    _write(tmp_path, {"pyproject.toml": "", config: "{}", "src/train.py": script})
    [read] = readers(current().project_for(str(tmp_path / config)), str(tmp_path / config))
    assert (read.section, read.keys, read.framework, read.target) == (("trainer",), None, "lightning",
                                                                     "pytorch_lightning.Trainer")
    line = script.splitlines().index("    return pl.Trainer(**section)") + 1
    assert read.evidence() == f"read by {read.script}:{line} into pytorch_lightning.Trainer"


def test_a_path_that_cannot_be_known_names_no_reader(tmp_path: Path) -> None:
    script = SCRIPT.replace('"configs/train.yaml"', "sys.argv[1]")
    _write(tmp_path, {"pyproject.toml": "", "configs/train.yaml": CONFIG, "train.py": "import sys\n" + script})
    assert readers(current().project_for(str(tmp_path / "train.py")), str(tmp_path / "configs/train.yaml")) == []


def test_a_script_is_walked_once_for_all_its_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The passes over a script that may read a config (its argparse defaults, the attributes it assigns, the
    names bound to a loaded config in each function, HfArgumentParser files) share one walk of its tree: ast.walk
    is not called on the whole tree at all (it was 8 times for this script), and the read is found as before."""
    import ast

    whole: list[ast.AST] = []
    walk = ast.walk

    def counting(node: ast.AST):  # type: ignore[no-untyped-def]
        if isinstance(node, ast.Module):
            whole.append(node)
        return walk(node)

    monkeypatch.setattr(ast, "walk", counting)  # the module config_readers uses (imported where a script is parsed)
    script = SCRIPT.replace('"configs/train.yaml"', "args.config").replace(
        "import yaml\n", "import argparse\nimport yaml\nparser = argparse.ArgumentParser()\n"
        'parser.add_argument("--config", default="configs/train.yaml")\nargs = parser.parse_args()\n')
    _write(tmp_path, {"pyproject.toml": "", "configs/train.yaml": CONFIG, "train.py": script})
    [read] = readers(current().project_for(str(tmp_path / "train.py")), str(tmp_path / "configs/train.yaml"))
    assert read.framework == "lightning"
    assert whole == []


def test_a_script_is_searched_for_load_words_in_its_bytes_as_in_its_text() -> None:
    """The index searches a script's bytes before decoding them: every load word is found there exactly where the
    decoded text holds it (ASCII words; a BOM, invalid UTF-8 or Windows line ends around them change nothing)."""
    from precisionlint.project.config_readers import LOAD_WORDS, _holds_load_word

    for word in LOAD_WORDS:
        for text in (word, f"x = {word}(f)\n", f"\ufeff# é\r\n{word}\r\n"):
            assert _holds_load_word(text.encode()), text
        assert _holds_load_word(b"\xc3" + word.encode() + b"\xff")
        assert not _holds_load_word(word[:-1].encode() + b"\r\n" + word[-1:].encode())
    assert not _holds_load_word(b"loader = DataLoader(load_state_dict(torch.load(p)))\nhydra = 1\n")


def test_the_first_worker_scans_the_scripts_once_for_all_workers(tmp_path: Path, monkeypatch) -> None:
    """A run's first worker finds, before it forks the others, which scripts of a config's project may load a
    config, and what those read; each worker's index of the project then reads no script again, and finds the
    same readers."""
    from precisionlint.project import config_readers, pins
    from precisionlint.run import parallel

    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "configs/train.yaml": CONFIG,
                      "train.py": SCRIPT, "tools/other.py": "import torch\nx = torch.load('m.pt')\n",
                      "tools/plot.py": "print(1)\n"})
    config = str(tmp_path / "configs" / "train.yaml")
    expected = readers(current().project_for(config), config)
    current().forget()
    parallel._warm_up([], {"yaml"}, [], [(config, "yaml")], 1 << 20)
    assert current().load_scripts == {str(tmp_path): frozenset({str(tmp_path / "train.py")}),
                                      str(tmp_path / "tools"): frozenset()}
    read: list[str] = []
    monkeypatch.setattr(pins, "read_text", lambda path, real=pins.read_text: read.append(path) or real(path))
    monkeypatch.setattr(config_readers, "_may_load", lambda path: pytest.fail(f"{path} searched again"))
    assert readers(current().project_for(config), config) == expected != []
    assert read == []  # the reads of train.py, found before the fork, are reused (its paths resolve alike)
    current().forget_file(str(tmp_path / "tools" / "plot.py"))  # edited (the language server): searched again
    assert str(tmp_path / "tools") not in current().load_scripts


def test_a_script_s_reads_are_reused_only_where_its_paths_resolve_alike(tmp_path: Path) -> None:
    """A script's reads found through one project are reused for another project of the same files only where
    each path the script names resolves to the same file: `train.yaml` from tools/train.py is a/train.yaml for
    a config in a/ and b/train.yaml for one in b/ (the project's folders are searched), as a fresh run finds."""
    from precisionlint.project.config_readers import _index
    from precisionlint.project.model import ProjectModel

    script = SCRIPT.replace("configs/train.yaml", "train.yaml")
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "a/train.yaml": CONFIG, "b/train.yaml": CONFIG,
                      "tools/train.py": script, "tools/other.py": "import json\nx = json.load(open('x.json'))\n"})
    scripts = [str(tmp_path / "tools" / "other.py"), str(tmp_path / "tools" / "train.py")]
    model = current()
    in_a = _index(model.project_of_folder(str(tmp_path / "a")), scripts)
    in_b = _index(model.project_of_folder(str(tmp_path / "b")), scripts)
    assert list(in_a) == [os.path.realpath(tmp_path / "a" / "train.yaml")]
    assert list(in_b) == [os.path.realpath(tmp_path / "b" / "train.yaml")]
    fresh = ProjectModel()
    assert in_b == _index(fresh.project_of_folder(str(tmp_path / "b")), scripts)
    assert set(model.script_reads) == set(scripts)  # kept, with the paths they resolved
