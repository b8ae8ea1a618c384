"""What one analysis of a file depends on: its content's digest, its format, its name and the folder names the
analysis reads. Files of one identity share one analysis (and one cache entry)."""

from __future__ import annotations

import os

from precisionlint.core.model import SourceFile

# The folder names that an analysis reads from a file's path: test suites (checks/_attribution.py), folders of
# code that trains nothing (checks/true_half_precision_training.py) and Lightning's `trainer/` config groups
# (frameworks/lightning.py). A rule that looks at another folder name must add it here, or copies of one
# content in two folders would share findings (tests/test_cache.py checks the lists against these modules).
FOLDER_WORDS = frozenset({"test", "tests", "testing", "inference", "serving", "deploy", "benchmarks", "trainer"})


def folder_words(display: str) -> str:
    """The FOLDER_WORDS among the folders of a displayed path, as the analysis sees them (lower case)."""
    parts = display.replace("\\", "/").lower().split("/")[:-1]
    return ",".join(sorted({part for part in parts if part in FOLDER_WORDS}))


def identity_of(source: SourceFile, digest: str, context: str) -> str:
    """What one analysis of a content (by its digest) depends on: the content, its format, its file name, the
    folder names the analysis reads and the context key. Files with the same identity get the same findings
    (each under its own path), so the engine analyses one and copies the result to the others, and the cache
    stores results under it.

    The analysis reads a file's path only through its format, its name and FOLDER_WORDS: whoever makes
    findings depend on more of the path, or on other files, must put that into the context key."""
    return f"{digest}:{source.format}:{file_name(source)}:{folder_words(source.display)}:{context}"


def file_name(source: SourceFile) -> str:
    return source.fs_path.replace(os.sep, "/").rsplit("/", 1)[-1]
