"""Requests about a checked document: code actions (each verified fix, fix-all, suppressions) and the hover that
shows a rule's documentation. Each runs on the checks' thread, on the analysis of the text the request was
made for."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from lsprotocol import types

from precisionlint.core.model import Finding
from precisionlint.server.analysis import (
    Analysis,
    can_suppress,
    file_suppression,
    fix_all_text,
    line_suppression,
    minimal_edit,
    verified_fix,
)
from precisionlint.server.convert import Positions, diagnostic

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.precisionlint"


def covers(span: types.Range, position: types.Position) -> bool:
    """Whether a position lies in a range (its end included, so that a cursor just after a value counts)."""
    at = (position.line, position.character)
    return (span.start.line, span.start.character) <= at <= (span.end.line, span.end.character)


def hover_of(findings: list[Finding], where: types.Range) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=rule_docs(findings)),
                       range=where)


def kind_matches(kind: str | None, only: Sequence[str]) -> bool:
    """Whether an action of `kind` answers a request for the kinds `only` (a kind covers its sub-kinds)."""
    if kind is None:
        return False
    name = str(getattr(kind, "value", kind))  # lsprotocol's kinds are str enums; compare their values
    wanted_names = [str(getattr(wanted, "value", wanted)) for wanted in only]
    return any(name == wanted or name.startswith(f"{wanted}.") for wanted in wanted_names)


def rule_docs(findings: list[Finding]) -> str:
    from precisionlint.checks import find_rule

    parts = []
    seen: set[str] = set()
    for finding in findings:
        if finding.code in seen:
            continue
        seen.add(finding.code)
        rule = find_rule(finding.code)
        header = f"**{finding.code} `{finding.name}`** ({finding.severity.label}): {finding.described()}"
        if rule is None:
            parts.append(header)
            continue
        parts.append(f"{header}\n\n{rule.doc}\n\n(`precisionlint rule {rule.name}` prints this page)")
    return "\n\n---\n\n".join(parts)


def workspace_edit(versioned: bool, uri: str, version: int | None,
                   edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    if versioned:
        # Versioned: a client refuses the edit if the buffer changed since, instead of applying stale offsets.
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=list(edits),
        )])
    return types.WorkspaceEdit(changes={uri: edits})


def code_actions(encoding: str, versioned: bool, uri: str, version: int | None, analysis: Analysis,
                 placed: Sequence[tuple[Finding, types.Range]],
                 params: types.CodeActionParams) -> Iterator[types.CodeAction]:
    """The actions for the findings whose ranges (`placed`: where the editor shows each finding) meet the
    requested range. Fix edits are offsets into the document's text (a notebook's: its JSON text), placed in
    the client's position `encoding`; `versioned`: the client takes versioned document changes."""
    positions = Positions(analysis.text, encoding)
    wanted = params.range

    def meets(where: types.Range) -> bool:
        return (where.start.line, where.start.character) <= (wanted.end.line, wanted.end.character) \
            and (where.end.line, where.end.character) >= (wanted.start.line, wanted.start.character)

    touched = [(finding, where) for finding, where in placed if meets(where)]
    fixable = False

    def edit(*edits: types.TextEdit) -> types.WorkspaceEdit:
        return workspace_edit(versioned, uri, version, list(edits))

    for finding, where in touched:
        diag = diagnostic(finding, where)
        fix = verified_fix(analysis, finding)
        if fix is not None:
            safe = fix.applicability == "safe"
            fixable = fixable or safe
            marker = "" if safe else " (unsafe fix: may change behaviour, review it)"
            yield types.CodeAction(
                title=f"{fix.description} ({finding.code}){marker}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=safe,
                edit=edit(*[positions.text_edit(e) for e in fix.edits]),
            )
        if can_suppress(analysis, finding):
            for scope, suppression in (("on this line", line_suppression(analysis, finding)),
                                       ("in this file", file_suppression(analysis, finding))):
                if suppression is not None:
                    yield types.CodeAction(
                        title=f"Suppress {finding.name} {scope}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        edit=edit(positions.text_edit(suppression)),
                    )
    wants_fix_all = params.context.only and kind_matches(FIX_ALL_KIND, params.context.only)
    if fixable or wants_fix_all:
        new_text = fix_all_text(analysis)
        if new_text is not None:
            whole = edit(positions.text_edit(minimal_edit(analysis.text, new_text)))
            title = "Fix all safe precisionlint findings in this file"
            yield types.CodeAction(title=title, kind=FIX_ALL_KIND, edit=whole)
            if fixable:  # also next to the diagnostic, where the quick fixes are listed
                yield types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, edit=whole)
