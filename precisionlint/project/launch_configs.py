"""Configs that launch lines name, read by a reader that is certain.

- `accelerate launch --config_file accelerate.yaml train.py`: the file is an Accelerate config, read by the
  launcher; a `--mixed_precision` on the same line replaces the file's value for that run (Accelerate's
  launch command takes a flag given over the config file's value: accelerate/commands/launch.py,
  `_validate_launch_command`).
- `python main.py fit --config run.yaml` where main.py builds a LightningCLI: the config's `trainer:` mapping is
  `lightning.Trainer`'s, and `--trainer.<key>` on the line replaces that key (project/lightning_cli.py).

A path holding a shell variable names no file.
"""

from __future__ import annotations

import os

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.project import Project
    from precisionlint.project.reads import Read

_MAX_LAUNCHERS = 500  # shell files of one project read for the configs their launch lines name


def _accelerate_read(project: Project, launcher: str, shown: str, launch: Any) -> list[Read]:
    from precisionlint.project.reads import Read

    if launch.launcher != "accelerate":
        return []
    flag = launch.launcher_flags.get("config_file")
    if flag is None or not isinstance(flag.value, str) or "$" in flag.value:
        return []
    resolved = project.resolve(launcher, flag.value)
    if resolved is None or not resolved.endswith((".yaml", ".yml", ".json")):
        return []
    overridden = frozenset({"mixed_precision"} if "mixed_precision" in launch.launcher_flags else ())
    real = os.path.realpath(resolved)
    return [Read(real, (), None, "accelerate", "accelerate.Accelerator (accelerate launch)", shown,
                 launch.span.line, overridden)]


def launch_root(project: Project, config: str) -> str | None:
    """The folder whose launch scripts may name the config: the project's root where a boundary (`.git`,
    `pyproject.toml`, ...) marks it; else the working directory when the config is inside it (`precisionlint
    check .` in a checkout without one); else none (the folder chain then ends at `/`, never walked)."""
    if project.chain and project.chain[-1].boundary:
        return project.root
    here = os.getcwd()
    if here != os.path.dirname(here) and config.startswith(os.path.join(os.path.realpath(here), "")):
        return here
    return None


def launch_reads(project: Project, root: str) -> dict[str, list[Read]]:
    """The configs the launch lines under `root` name for a reader that is certain: config -> its reads."""
    from precisionlint.project import display_path
    from precisionlint.project.lightning_cli import builds_cli, config_flags, trainer_flags
    from precisionlint.project.reads import Read, project_files

    found: dict[str, list[Read]] = {}
    for launcher in project_files(root, (".sh",), _MAX_LAUNCHERS):
        from precisionlint.project.pins import read_text

        text = read_text(launcher)
        if text is None or "config" not in text:
            continue
        document = project.document(launcher)
        if document is None or document.format != "shell" or not isinstance(document.tree, list):
            continue
        shown = display_path(launcher)
        for launch in document.tree:
            for read in _accelerate_read(project, launcher, shown, launch):
                found.setdefault(read.config, []).append(read)
            if not isinstance(launch.script, str) or not launch.script.endswith(".py"):
                continue
            configs = config_flags(launch.script_words)
            if not configs:
                continue
            path = project.resolve(launcher, launch.script)
            script = project.document(path) if path is not None else None
            if script is None or script.format != "python" or not builds_cli(script):
                continue
            overridden = frozenset(trainer_flags(launch.script_words))
            target = f"lightning.Trainer (LightningCLI in {display_path(path)})"  # type: ignore[arg-type]
            for literal, section in configs:
                resolved = project.resolve(launcher, literal)
                if resolved is not None:
                    real = os.path.realpath(resolved)
                    found.setdefault(real, []).append(Read(real, section, None, "lightning", target, shown,
                                                           launch.span.line, overridden))
    return found

