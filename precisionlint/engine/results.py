"""What the engine gives back for one file, and the findings it makes itself."""

from __future__ import annotations

import gc

from precisionlint.checks import Rule
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Edit, Finding, Fix, Related, Span

if TYPE_CHECKING:
    from typing import Any


class FileResult:
    # A run holds one for every file of the tree until it ends, most of them skipped: no __dict__ each.
    __slots__ = ("display", "findings", "document", "internal_error", "skipped", "unread")

    def __init__(
        self,
        display: str,
        findings: list[Finding],
        document: Document | None = None,
        internal_error: bool = False,
        skipped: bool = False,  # the prefilter showed it cannot hold a finding
        unread: bool = False,  # a config with precision keys that no framework was identified to read
    ) -> None:
        self.display = display
        self.findings = findings
        self.document = document
        self.internal_error = internal_error
        self.skipped = skipped
        self.unread = unread


def engine_finding(rule: Rule, path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        path=path,
        span=Span.point(line, column),
        message=message,
    )


# The documents of a process that ends without freeing them (keep_until_exit), else None.
_KEPT: list[Document] | None = None


def keep_until_exit() -> None:
    """This process ends without the interpreter's teardown once its run is over (a one-file check: cli.entry):
    release() keeps what it would free. Freeing a parsed tree object by object is work done for nothing there:
    a 5 MB script's tree and model took 0.3 s, a twentieth of its check."""
    global _KEPT
    _KEPT = []


def release(result: FileResult) -> None:
    """Drop the parsed document of a result whose findings are all a run keeps (thousands of trees would not
    fit in memory), breaking the cycles of what rules built on it, so that it is freed now rather than walked
    by the cyclic garbage collector (a tenth of a run's time over a large repository)."""
    document = result.document
    result.document = None
    if document is None:
        return
    if _KEPT is not None:
        _KEPT.append(document)  # freed with the process (keep_until_exit)
        return
    # The collector is held off meanwhile: an allocation here would start a collection that walks the whole
    # tree (the analysis allocated it with the collector off), just before it is freed anyway.
    collecting = gc.isenabled()
    gc.disable()
    try:
        document.drop_back_references()
        model = document.script_model
        if model is not None:
            model.release()
        del document, model
    finally:
        if collecting:
            gc.enable()


def share_text(result: FileResult, texts: dict[Any, Any]) -> None:
    """Make the findings of `result` hold the texts that earlier findings hold already (`texts`: each text as
    first met, by value), not copies of them. A rule says the same thing on every line it reports (icefall,
    speechbrain, pytorch-image-models and pytorch-lightning: 414 findings, 14 distinct messages), and each result
    a worker sends back is unpickled into fresh strings: the findings of a check of four copies of those four
    repositories held 0.9 MB of repeated text in the process that reports them."""
    if not result.findings:
        return
    same = texts.setdefault
    shared = []
    for finding in result.findings:
        fix = finding.fix
        if fix is not None:
            fix = Fix(same(fix.description, fix.description), fix.applicability,
                      tuple(Edit(edit.start, edit.end, same(edit.replacement, edit.replacement))
                            for edit in fix.edits))
        related = finding.related
        if related:
            related = tuple(Related(same(place.path, place.path), place.span,
                                    same(place.message, place.message)) for place in related)
        shared.append(finding._replace(
            code=same(finding.code, finding.code), name=same(finding.name, finding.name),
            path=same(finding.path, finding.path), message=same(finding.message, finding.message),
            notes=same(finding.notes, finding.notes), fix=fix, related=related))
    result.findings = shared


def relocate(result: FileResult, display: str) -> FileResult:
    """The result of one analysis as it reads for another path that holds the same content."""
    if result.display == display:
        return result
    findings = [f._replace(path=display) if f.path == result.display else f for f in result.findings]
    return FileResult(display, findings, internal_error=result.internal_error, skipped=result.skipped,
                      unread=result.unread)
