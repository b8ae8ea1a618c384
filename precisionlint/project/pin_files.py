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
