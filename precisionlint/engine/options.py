"""What the engine is given besides the files (precisionlint.core.model.SourceFile): the options of a run."""

from __future__ import annotations

import os
from collections.abc import Sequence

from precisionlint.checks import Rule
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import SourceFile
from precisionlint.sources import Limits

# Only annotations name it: typing's Protocol machinery costs every `check` about a millisecond of start-up.
if TYPE_CHECKING:
    from typing import Protocol

    class ContextKey(Protocol):
        """For one file, a string that names everything outside its own bytes that its findings depend on (for a
        rule that reads other files: the pins it reads, and for a file that names others, its folder and the
        files it can name). See precisionlint.run.context_key."""

        def portable(self, source: SourceFile) -> str:
            """The part of the key that holds for any content at this path and does not name the folder."""
            ...

        def reads_folder(self, source: SourceFile, data: bytes) -> bool:
            """Whether the key of this content names its folder (then a copy elsewhere is analysed on its own)."""
            ...

        def key(self, source: SourceFile, reads_folder: bool) -> str:
            """The key of a content at this path, given what reads_folder said of it."""
            ...

        def stat(self, fs_path: str, fmt: str | None = None) -> os.stat_result | None:
            """os.stat of a file of the run, taken once per run for the loop and the keys alike (`fmt`: the
            loop asks, once, for a file of this format)."""
            ...


class EngineOptions:
    """What a run checks with. `context_key`, when set, gives each file's context key. Two files share one
    analysis, and a cached result is reused, only when their content, format, file name, the folder names the
    analysis reads (FOLDER_WORDS) and context key all agree."""

    def __init__(
        self,
        rules: Sequence[Rule],
        gpus: tuple = (),
        limits: Limits | None = None,
        prefilter: bool = True,
        context_key: ContextKey | None = None,
    ) -> None:
        self.rules = rules
        self.gpus = gpus
        self.limits = limits if limits is not None else Limits()
        self.prefilter = prefilter
        self.context_key = context_key
