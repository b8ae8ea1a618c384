"""`precisionlint check --show-frameworks PATHS`: which framework reads each section, and on what evidence.

For every file it prints each attributed section (its key path, the framework, the confidence and the evidence),
the canonical settings found there, and the files that are not read as configs at all, with the reason. A
section that no framework claims is listed too when it holds a precision-looking key, so that a user can see
why no rule looks at it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from precisionlint.core.model import Confidence, Document, Setting
from precisionlint.frameworks.unclaimed import unclaimed_keys


def show(paths: Sequence[str], root: Any, exclude: Sequence[str], respect_gitignore: bool, stream: TextIO) -> int:
    from precisionlint.core.model import Finding
    from precisionlint.engine.reading import read_source
    from precisionlint.frameworks.documents import load_document
    from precisionlint.run.discover import discover
    from precisionlint.sources import DEFAULT_LIMITS, LimitError, SourceError
    from precisionlint.sources.decoding import decode_source
    from precisionlint.sources.not_config import reason

    found = discover(list(paths) or ["."], root, exclude, respect_gitignore)
    status = 0
    for path in found.missing:
        stream.write(f"{path}: no such file or directory\n")
        status = 2
    for source in found.files:
        data = read_source(source, DEFAULT_LIMITS)
        if isinstance(data, Finding):
            stream.write(f"{source.display}: not read ({data.message})\n")
            continue
        why = reason(source.display, data, source.format) if source.format != "python" else None
        if why is not None:
            stream.write(f"{source.display}: not read as a config ({why})\n")
            continue
        try:
            document = load_document(source.display, decode_source(data, source.display), source.format)
        except (SourceError, LimitError) as exc:
            stream.write(f"{source.display}: not parsed ({exc})\n")
            continue
        from precisionlint.project.config_readers import attribute_by_readers
        from precisionlint.project.launch_readers import attribute_launches

        attribute_by_readers(document)  # the scripts that load it name its reader
        attribute_launches(document)  # a launch line's flags that the started script's parser reads
        _write_document(document, stream)
    return status


def _write_document(document: Document, stream: TextIO) -> None:
    by_scope: dict[str, list[Setting]] = {}
    for setting in document.settings:
        by_scope.setdefault(setting.scope, []).append(setting)
    if not by_scope:
        from precisionlint.project.config_readers import overridden_keys

        overridden = overridden_keys(document)
        unclaimed = [key for key in unclaimed_keys(document) if key.split("`")[1] not in overridden]
        for path, read in overridden.items():
            stream.write(f"{document.path}: `{path}` is {read.evidence()}, which replaces its value\n")
        if overridden and not unclaimed:
            return
        if unclaimed:
            stream.write(f"{document.path}: no framework identified; not checked by framework rules "
                         f"(keys {', '.join(unclaimed)})\n")
        else:
            stream.write(f"{document.path}: no precision settings\n")
        return
    stream.write(f"{document.path}:\n")
    for scope, settings in by_scope.items():
        first = settings[0]
        confidence = Confidence(first.confidence).label
        frameworks = sorted({s.framework for s in settings})
        where = "" if first.format == "python" else f" at line {min(s.key_span.line for s in settings)}"
        evidence = first.evidence or "a resolved call"
        stream.write(f"  {scope}{where}: {', '.join(frameworks)} ({confidence}) - {evidence}\n")
        for setting in settings:
            value = setting.value if setting.resolved else "<not a literal>"
            stream.write(f"    {setting.key_text} = {value!r} -> {setting.name}\n")
