"""Symbolic links in the paths a run walks or is given, and how their files are named in the output.

Real repositories commit links that lead nowhere (k2-fsa/icefall has a link into its author's home directory and
links to recipes that were since deleted): met while walking a directory they are skipped, as black skips what it
cannot stat; named on the command line they are an error (exit 2), as a missing path is. Every test runs the real
CLI in its own process on a real tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 120  # seconds: a run this long is a loop, not a slow machine
LIGHTNING = "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX links")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "precisionlint", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=HANG_GUARD,
    )


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, "check", "--no-progress", "--no-cache", "--output-format", "concise", *args)


def tree_with_bad_links(tmp_path: Path, git: bool) -> Path:
    """One real finding, and every kind of link that leads nowhere."""
    tree = tmp_path / "repo"
    (tree / "sub" / "inner").mkdir(parents=True)
    (tree / "sub" / "ok.yaml").write_text(LIGHTNING)
    (tree / "absolute.py").symlink_to("/nonexistent-precisionlint-test/prepare.py")  # into someone's home
    (tree / "sub" / "relative.yaml").symlink_to("../deleted/recipe.yaml")  # a recipe removed since
    (tree / "one.yaml").symlink_to("two.yaml")  # a file loop
    (tree / "two.yaml").symlink_to("one.yaml")
    (tree / "sub" / "self").symlink_to("self")  # a link to itself (no format: never looked at)
    (tree / "sub" / "inner" / "up").symlink_to(tree)  # a directory loop: never followed
    (tree / "sub" / "below_a_file.json").symlink_to("ok.yaml/x.json")  # ENOTDIR
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "add", "-A"], check=True)  # git stores the links as they are
    return tree


@pytest.mark.parametrize("git", [False, True], ids=["walked", "git-listed"])
def test_links_that_lead_nowhere_are_skipped_while_walking(tmp_path: Path, git: bool) -> None:
    tree = tree_with_bad_links(tmp_path, git)
    result = check(tree, ".")
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("sub/ok.yaml:2:14: PL102")
    assert "PL002" not in result.stdout and "io-error" not in result.stdout
    assert "Found 1 finding (0 errors, 1 warning, 0 info) in 1 file checked." in result.stdout
    assert result.stderr == ""  # skipped silently: nothing the user must act on


@pytest.mark.parametrize("git", [False, True], ids=["walked", "git-listed"])
def test_show_files_names_what_was_skipped(tmp_path: Path, git: bool) -> None:
    tree = tree_with_bad_links(tmp_path, git)
    result = run(tree, "check", "--show-files", ".")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["sub/ok.yaml"]
    assert sorted(result.stderr.splitlines()) == [
        "precisionlint: note: skipped absolute.py: broken symbolic link to /nonexistent-precisionlint-test/prepare.py",
        "precisionlint: note: skipped one.yaml: symbolic link loop",
        "precisionlint: note: skipped sub/below_a_file.json: broken symbolic link to ok.yaml/x.json",
        "precisionlint: note: skipped sub/relative.yaml: broken symbolic link to ../deleted/recipe.yaml",
        "precisionlint: note: skipped two.yaml: symbolic link loop",
    ]


def test_a_named_link_that_leads_nowhere_is_an_error_and_the_rest_is_checked(tmp_path: Path) -> None:
    tree = tree_with_bad_links(tmp_path, git=False)
    result = check(tree, "sub/relative.yaml", "one.yaml", "sub/self", "sub/ok.yaml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "precisionlint: error: sub/relative.yaml: broken symbolic link to ../deleted/recipe.yaml",
        "precisionlint: error: one.yaml: symbolic link loop",
        "precisionlint: error: sub/self: symbolic link loop",
    ]
    assert result.stdout.startswith("sub/ok.yaml:2:14: PL102")


def test_a_named_broken_link_that_the_configuration_excludes_is_not_an_error(tmp_path: Path) -> None:
    tree = tree_with_bad_links(tmp_path, git=False)
    (tree / "pyproject.toml").write_text('[tool.precisionlint]\nexclude = ["sub/relative.yaml"]\n')
    result = check(tree, "--force-exclude", "sub/relative.yaml", "sub/ok.yaml")  # as the pre-commit hook runs
    assert result.returncode == 1 and result.stderr == ""


def test_a_link_to_a_real_file_is_still_checked_under_its_own_name(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "trainer.yaml").write_text(LIGHTNING)
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "absolute.yaml").symlink_to(outside / "trainer.yaml")  # absolute, and out of the tree
    (tree / "relative.yaml").symlink_to(Path("..") / "elsewhere" / "trainer.yaml")
    result = check(tree, ".")
    assert result.returncode == 1
    assert [line.split(" ")[0] for line in result.stdout.splitlines() if "PL102" in line] == [
        "absolute.yaml:2:14:", "relative.yaml:2:14:"]
    assert "elsewhere" not in result.stdout


def test_an_absolute_path_inside_the_working_directory_is_shown_relative_to_it(tmp_path: Path) -> None:
    """As ruff shows paths in its text and GitHub formats; the machine formats keep the path as named."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "trainer.yaml").write_text(LIGHTNING)
    tree = tmp_path / "repo"
    (tree / "configs").mkdir(parents=True)
    (tree / "configs" / "link.yaml").symlink_to(outside / "trainer.yaml")
    (tree / "configs" / "own.yaml").write_text(LIGHTNING)

    concise = check(tree, str(tree))
    assert [line.split(" ")[0] for line in concise.stdout.splitlines() if "PL102" in line] == [
        "configs/link.yaml:2:14:", "configs/own.yaml:2:14:"]
    assert "//" not in concise.stdout

    github = run(tree, "check", "--no-cache", "--output-format", "github", str(tree / "configs"))
    assert [line.split(",")[0] for line in github.stdout.splitlines()] == [
        "::warning file=configs/link.yaml", "::warning file=configs/own.yaml"]

    machine = run(tree, "check", "--no-cache", "--output-format", "json", str(tree))
    assert [f["path"] for f in json.loads(machine.stdout)] == [
        str(tree / "configs" / "link.yaml"), str(tree / "configs" / "own.yaml")]

    from_outside = check(outside, str(tree))  # not inside the working directory: shown as named
    assert f"{tree}/configs/link.yaml:2:14: PL102" in from_outside.stdout


def test_the_ecosystem_report_names_linked_files_inside_their_repository(tmp_path: Path) -> None:
    """benchmarks/ecosystem.py printed `repo//abs/path` for a link out of the repository: it resolved the link."""
    eco = tmp_path / "eco"
    repo = eco / "owner__repo"
    (repo / "recipes").mkdir(parents=True)
    outside = tmp_path / "home" / "author"
    outside.mkdir(parents=True)
    (outside / "trainer.yaml").write_text(LIGHTNING)
    (repo / "recipes" / "linked.yaml").symlink_to(outside / "trainer.yaml")
    (repo / "recipes" / "gone.yaml").symlink_to("/nonexistent-precisionlint-test/gone.yaml")
    wrapper = tmp_path / "precisionlint"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m precisionlint "$@"\n')
    wrapper.chmod(0o755)
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ecosystem.py"), str(eco), "--precisionlint", str(wrapper),
         "--no-cache"],
        capture_output=True, text=True, timeout=HANG_GUARD,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    listed = [line.strip() for line in result.stdout.splitlines() if " PL" in line and line.startswith("  ")]
    assert [line.split(" ")[0] for line in listed] == ["owner__repo/recipes/linked.yaml:2:14"]
    assert "//" not in result.stdout


def test_the_ecosystem_report_counts_readers_launch_lines_and_pin_files(tmp_path: Path) -> None:
    repo = tmp_path / "eco" / "owner__repo"
    files = {
        "pyproject.toml": '[project]\nname = "x"\n',
        "docker/environment.yml": "dependencies:\n  - pytorch-lightning=1.8\n",
        "configs/train.yaml": "train:\n  precision: 16\n",
        "configs/other.yaml": "trainer:\n  _target_: lightning.pytorch.Trainer\n  precision: 16\n",
        "train.py": "import yaml\nfrom lightning import Trainer\n\ncfg = yaml.safe_load(open('configs/train.yaml'))\n"
                    "Trainer(precision=cfg['train']['precision'])\n",
        "run.sh": "python train.py --lr 1\ntorchrun missing.py\n",
        # a part with its own requirements and a vendored package it imports; docs/ holds no checked file
        "part/requirements.txt": "gradio\n",
        "part/Vendored/requirements.txt": "torch==1.13.0\n",
        "part/Vendored/encoder.py": "import torch\n",
        "part/model.py": "from Vendored import encoder\n",
        "docs/requirements.txt": "sphinx\n",
        "docs/index.md": "# docs\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    wrapper = tmp_path / "precisionlint"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m precisionlint "$@"\n')
    wrapper.chmod(0o755)
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ecosystem.py"), str(tmp_path / "eco"), "--precisionlint",
         str(wrapper), "--attribution", "--no-cache"],
        capture_output=True, text=True, timeout=HANG_GUARD, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "Config sections attributed by their reader: 1, by their keys: 1;" in result.stdout, result.stdout
    assert "Launch lines: 2 (1 start a script of the repository;" in result.stdout
    assert "owner__repo: docker/environment.yml, part/Vendored/requirements.txt, part/requirements.txt, " \
        "pyproject.toml" in result.stdout


@pytest.mark.parametrize("git", [False, True], ids=["walked", "git-listed"])
def test_each_file_met_through_several_paths_is_read_once_when_discovery_says_which_are_links(
        tmp_path: Path, git: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run keeps the inode of a file it read only where another path can lead to it: a file with other
    names (hard links) or one a symbolic link of the run leads to. Discovery says which files are links."""
    from precisionlint.checks import all_rules
    from precisionlint.engine import reading
    from precisionlint.engine.options import EngineOptions
    from precisionlint.run.discover import discover
    from precisionlint.run.parallel import check_all

    tree = tmp_path / "repo"
    for folder in ("a", "linked", "hard", "sub"):
        (tree / folder).mkdir(parents=True)
    (tree / "sub" / "z.yaml").write_text(LIGHTNING)  # read after the link that leads to it
    (tree / "a" / "z.yaml").symlink_to("../sub/z.yaml")
    (tree / "b.yaml").write_text(LIGHTNING)  # read before the link that leads to it
    (tree / "linked" / "b.yaml").symlink_to("../b.yaml")
    (tree / "c.yaml").write_text(LIGHTNING)
    os.link(tree / "c.yaml", tree / "hard" / "c.yaml")  # another name of the same file
    (tree / "plain.yaml").write_text(LIGHTNING)
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
    found = discover([str(tree)], tree)
    names = [source.fs_path[len(str(tree)) + 1:] for source in found.files]
    assert names == ["a/z.yaml", "b.yaml", "c.yaml", "hard/c.yaml", "linked/b.yaml", "plain.yaml", "sub/z.yaml"]
    links = found.files.links  # type: ignore[attr-defined]
    assert sorted(names[index] for index in links) == ["a/z.yaml", "linked/b.yaml"]

    read: list[str] = []
    real_read = reading.read_source

    def counting(source, *args):  # type: ignore[no-untyped-def]
        read.append(source.fs_path[len(str(tree)) + 1:])
        return real_read(source, *args)

    monkeypatch.setattr(reading, "read_source", counting)
    results = check_all(found.files, EngineOptions(all_rules()), 1)
    # Each file once under the name first met: the links and the other name are copies of its result.
    assert read == ["a/z.yaml", "b.yaml", "c.yaml", "plain.yaml"]
    assert [[(f.code, f.path) for f in result.findings] for result in results] == [
        [("PL102", source.display)] for source in found.files]
