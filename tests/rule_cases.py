"""Reads the rule book's case folders (rules/<rule-name>/).

A folder holds:
  bad*.<ext>       inputs that must produce exactly the findings of this rule listed in expected.txt
  good*.<ext>      inputs that must produce no finding of this rule
  expected.txt     one line per finding: "<file>:<line>:<column>: <CODE>"; '#' starts a comment
  options.toml     optional: gpus = ["A100", ...] (target GPUs for hardware rules); python-below = "3.12"
                   (the bad cases hold only where the running Python is older than that)
  <file>.fixed     optional: the file after `check --fix` (with `unsafe-fixes = true` in options.toml,
                   after `--unsafe-fixes`)
  bad*/, good*/    small projects (a pin file, a config, a script, a launcher) checked together, for rules that
                   read more than one file: every file in the folder is checked from inside it, and expected.txt
                   lists the bad ones' findings as "<folder>/<file>:<line>:<column>: <CODE>". Give each project
                   its own pyproject.toml (or setup.cfg) so that it ends there and reads no pins from above.
                   A project whose pyproject.toml sets `[tool.precisionlint] gpus = [...]` is checked against those
                   GPUs, as `precisionlint check .` would be, instead of options.toml's.

Folders whose name starts with "_" hold inputs shared by many rules (rules/_correct-training-loops/: correct
code that must give no finding of any rule but those its options.toml `allow`s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import tomlkit

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
INPUT_SUFFIXES = {".toml", ".yaml", ".yml", ".json", ".py", ".sh", ".ipynb"}


@dataclass
class RuleCase:
    rule_name: str
    folder: Path
    bad: list[Path]
    good: list[Path]
    expected: dict[str, list[tuple[int, int, str]]]
    gpus: list[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    bad_projects: list[Path] = field(default_factory=list)
    good_projects: list[Path] = field(default_factory=list)
    python_below: tuple[int, ...] | None = None

    def fixed_for(self, path: Path) -> Path | None:
        candidate = path.with_name(path.name + ".fixed")
        return candidate if candidate.exists() else None


def _inputs(folder: Path, prefix: str) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.name.startswith(prefix) and p.suffix in INPUT_SUFFIXES and (p.is_file() or p.is_symlink())
    )


def _projects(folder: Path, prefix: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(prefix) and p.is_dir())


def project_files(project: Path) -> list[Path]:
    """The files of a project case that precisionlint reads, in a stable order."""
    from precisionlint.sources import format_of

    return sorted(p for p in project.rglob("*") if p.is_file() and format_of(p.name) is not None)


def load_cases() -> list[RuleCase]:
    cases = []
    for folder in sorted(p for p in RULES_DIR.iterdir() if p.is_dir() and not p.name.startswith("_")):
        expected: dict[str, list[tuple[int, int, str]]] = {}
        expected_file = folder / "expected.txt"
        if expected_file.exists():
            for raw in expected_file.read_text().splitlines():
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                location, code = line.rsplit(":", 1)
                name, row, col = location.rsplit(":", 2)
                expected.setdefault(name, []).append((int(row), int(col), code.strip()))
        options = {}
        if (folder / "options.toml").exists():
            options = tomlkit.parse((folder / "options.toml").read_text()).unwrap()
        cases.append(
            RuleCase(
                rule_name=folder.name,
                folder=folder,
                bad=_inputs(folder, "bad"),
                good=_inputs(folder, "good"),
                expected=expected,
                gpus=list(options.get("gpus", [])),
                unsafe_fixes=bool(options.get("unsafe-fixes", False)),
                bad_projects=_projects(folder, "bad"),
                good_projects=_projects(folder, "good"),
                python_below=tuple(int(p) for p in str(options["python-below"]).split("."))
                if "python-below" in options else None,
            )
        )
    return cases


SHARED_CORRECT = RULES_DIR / "_correct-training-loops"


def shared_correct_inputs() -> tuple[list[Path], list[str]]:
    options = tomlkit.parse((SHARED_CORRECT / "options.toml").read_text()).unwrap()
    files = sorted(p for p in SHARED_CORRECT.iterdir() if p.suffix in INPUT_SUFFIXES)
    return files, list(options.get("allow", []))
