"""Which files of a directory declare versions, by name alone: a run whose cache knows every file asks this of
each folder (the signature of what its results' versions came from) without reading a pin, so this module
imports nothing (the readers, project.pins, cost a run that reads no pin 2 ms to import)."""

from __future__ import annotations

from collections.abc import Iterable


def is_requirements(name: str) -> bool:
    """requirements.txt, requirements-dev.txt, requirements_gpu.txt, and a project part's own list named after
    it: vim_requirements.txt, det-requirements.txt (Vision Mamba's parts each pin their torch so)."""
    stem, dot, suffix = name.lower().rpartition(".")
    return bool(dot) and suffix in ("txt", "in") and (
        stem.startswith("requirements") or stem.endswith(("_requirements", "-requirements")))


def requirement_files(names: Iterable[str]) -> list[str]:
    """The requirements files of a directory listing."""
    return sorted(n for n in names if is_requirements(n))


def is_dockerfile(name: str) -> bool:
    """Dockerfile, Dockerfile.gpu, train.Dockerfile, Containerfile ..."""
    lower = name.lower()
    return lower in ("dockerfile", "containerfile") or lower.startswith(("dockerfile.", "containerfile.")) \
        or lower.endswith(".dockerfile")


def dockerfiles(names: Iterable[str]) -> list[str]:
    """The Dockerfiles of a directory listing."""
    return sorted(name for name in names if is_dockerfile(name))


def is_conda_environment(name: str) -> bool:
    """environment.yml, environment-gpu.yaml, <name>_env.yml, conda.yaml, conda_cuda118.yml: the names conda
    environment files are kept under. The reader takes only a `dependencies:` list from them, so a config that
    happens to match (a reinforcement-learning `env.yaml`) declares nothing."""
    stem, dot, suffix = name.lower().rpartition(".")
    return bool(dot) and suffix in ("yml", "yaml") and ("env" in stem or stem.startswith("conda"))


# Lock files: the versions a resolver chose (uv, Poetry) or the ranges of a pixi workspace.
LOCK_FILES = ("uv.lock", "poetry.lock", "pixi.toml")


def other_pin_files(names: Iterable[str]) -> list[str]:
    """The conda environment files and lock files of a directory listing."""
    return sorted(name for name in names if is_conda_environment(name) or name in LOCK_FILES)


# Folders directly under a project's root that hold the environment of the whole project rather than of one of
# its parts (docker/environment.yml, requirements/base.txt, requirements/pytorch/base.txt, .devcontainer/
# Dockerfile). Their pins count for every file of the project that declares nothing nearer. An example's own
# folder (examples/x/requirements.txt) is not among them: it pins what that example needs, not the project.
PROJECT_PIN_FOLDERS = frozenset({
    "docker", "dockerfiles", "dockerfile", "requirements", "reqs", "env", "envs", "environment", "environments",
    "conda", ".devcontainer", "devcontainer", "container", "containers", "install", "installation", "deps",
    "dependencies", "ci", ".ci",
})


def is_project_pin_file(folder: str, name: str) -> bool:
    """Whether a file of one of PROJECT_PIN_FOLDERS (or a folder inside one) declares versions: a conda
    environment, a Dockerfile, a lock file, a requirements list, and any .txt of a requirements folder."""
    if is_conda_environment(name) or is_dockerfile(name) or is_requirements(name) or name in LOCK_FILES:
        return True
    return folder.lower() in ("requirements", "reqs", "deps", "dependencies") and name.lower().endswith(".txt")
