"""The README's two set-up commands, one after the other in one fresh virtual environment, leave a working tool.

The first command installs the package (`pip install .`), the second installs it again, editable (`pip install -e
".[test]"`). A run of the first must leave nothing behind that shadows the second: a folder written into the
installed package, or a stale copy, once made every `check` after the second command fail with an ImportError.

The environment here is a real virtual environment with the real console script. It reaches the dependencies
(click, tomlkit, ruamel.yaml, setuptools) of the interpreter running the tests through a .pth file, and both installs
run with --no-deps and without build isolation, so the test needs no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _copy_of_the_clone(into: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the clone's file list is unknown")
    clone = into / "clone"
    for name in listed.stdout.splitlines():
        source = ROOT / name
        if source.is_file():
            target = clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return clone


def _fresh_environment(into: Path) -> Path:
    venv = into / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "outer_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def _own_environment() -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH pointing at this checkout (the test run may set one)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["NO_COLOR"] = "1"
    return env


def _pip_install(python: Path, *arguments: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                           "--no-build-isolation", *arguments], capture_output=True, text=True, timeout=600,
                          env=_own_environment())
    assert done.returncode == 0, done.stderr[-2000:]


def _check_example(python: Path, clone: Path) -> subprocess.CompletedProcess[str]:
    script = python.parent / ("precisionlint.exe" if os.name == "nt" else "precisionlint")
    return subprocess.run([str(script), "check", "--no-cache", "examples/project"], cwd=clone, env=_own_environment(),
                          capture_output=True, text=True, timeout=300)


def test_the_two_setup_commands_leave_a_working_tool(tmp_path: Path) -> None:
    clone = _copy_of_the_clone(tmp_path)
    python = _fresh_environment(tmp_path)

    _pip_install(python, str(clone))  # the first command's install
    first = _check_example(python, clone)
    assert first.returncode == 1, first.stderr
    assert "Found 10 findings" in first.stdout and not first.stderr

    _pip_install(python, "-e", str(clone))  # the second command's install, in the same environment
    second = _check_example(python, clone)
    assert second.returncode == 1, second.stderr
    assert second.stdout == first.stdout and not second.stderr
    where = subprocess.run([str(python), "-c", "import precisionlint; print(precisionlint.__file__)"],
                           cwd=tmp_path, env=_own_environment(), capture_output=True, text=True,
                           check=True).stdout.strip()
    assert Path(where).resolve() == (clone / "precisionlint" / "__init__.py").resolve()
    built = sorted(str(path.relative_to(clone)) for path in (clone / "precisionlint").rglob("*")
                   if path.is_file() and path.suffix not in (".py", ".pyc"))
    assert built == [], f"the installs or the runs wrote into the package: {built}"
