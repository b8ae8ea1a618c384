"""Notebooks in the language server: findings at the positions `check` reports (code cell, line, column), on
notebook cells (the protocol's notebook synchronization, as VS Code's notebook editor sends them) and inside
the `.ipynb` text when the file is opened as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.lsp_session import (  # noqa: E402
    CLIP_SCRIPT,
    apply_text_edits,
    assert_same_as_check,
    change_document,
    check_json,
    client,
    code_actions,
    described,
    diagnostics_where,
    edits_of,
    open_document,
    project,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")
__all__ = ["client", "project"]  # fixtures, used by name

# A markdown cell, a cell of IPython magics (not Python: read as `pass`), then the training loop with a clip
# before unscale_, and a string with characters JSON escapes, so that columns in the file differ from the cell's.
CELLS = [
    ("markdown", "# Fine-tune\n"),
    ("code", "%pip install torch\nnote = \"caf\u00e9 \\\"quoted\\\" \\t\"\n"),
    ("code", CLIP_SCRIPT),
]


def notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
                   **({"execution_count": None, "outputs": []} if kind == "code" else {})}
                  for kind, source in cells],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n"


def position_in_file(text: str, cells: list[tuple[str, str]], cell: int, line: int, column: int) -> tuple[int, int]:
    """Where (code cell, line, column) is written in the notebook's JSON text: (0-based line, character)."""
    code = [source for kind, source in cells if kind == "code"]
    cell_line = code[cell - 1].splitlines(keepends=True)[line - 1]
    literal = json.dumps(cell_line)
    at = text.index(literal) + 1 + len(json.dumps(cell_line[: column - 1])) - 2
    before = text[:at]
    return before.count("\n"), at - (before.rfind("\n") + 1)


async def test_a_notebook_opened_as_text_shows_findings_inside_its_cells(client: LanguageClient,
                                                                         project: Path) -> None:
    path = project / "train.ipynb"
    text = notebook(CELLS)
    uri = open_document(client, path, text)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    [expected] = check_json(path)
    assert (found.code, found.message) == (expected["code"], described(expected))
    assert expected["cell"] == 2
    start = position_in_file(text, CELLS, expected["cell"], expected["line"], expected["column"])
    end = position_in_file(text, CELLS, expected["cell"], expected["end_line"], expected["end_column"])
    assert (found.range.start.line, found.range.start.character) == start
    assert (found.range.end.line, found.range.end.character) == end

    # The call moved after `scaler.unscale_(optimizer)`: the finding goes away while typing.
    fixed = CLIP_SCRIPT.replace("        torch.nn.utils.clip_grad_norm_",
                                "        scaler.unscale_(optimizer)\n        torch.nn.utils.clip_grad_norm_")
    change_document(client, uri, notebook([*CELLS[:2], ("code", fixed)]), version=2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


def cell_uri(path: Path, index: int) -> str:
    return f"vscode-notebook-cell:{path.as_posix()}#cell{index}"


async def test_notebook_cells_get_the_findings_of_check(client: LanguageClient, project: Path) -> None:
    assert client.initialize_result.capabilities.notebook_document_sync is not None  # type: ignore[attr-defined]
    path = project / "train.ipynb"
    path.write_text(notebook(CELLS), encoding="utf-8")  # what check reads
    kinds = {"markdown": types.NotebookCellKind.Markup, "code": types.NotebookCellKind.Code}
    uris = [cell_uri(path, index) for index in range(len(CELLS))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kinds[kind], document=uri)
                   for (kind, _), uri in zip(CELLS, uris, strict=True)],
        ),
        cell_text_documents=[
            types.TextDocumentItem(uri=uri, language_id="python" if kind == "code" else "markdown", version=1,
                                   text=source)
            for (kind, source), uri in zip(CELLS, uris, strict=True)
        ],
    ))
    [found] = await diagnostics_where(client, uris[2], lambda d: len(d) > 0)
    [expected] = check_json(path)
    assert expected["cell"] == 2  # the second code cell: the notebook's third cell
    got = (found.code, found.range.start.line + 1, found.range.start.character + 1, found.range.end.line + 1,
           found.range.end.character + 1, found.message)
    assert got == (expected["code"], expected["line"], expected["column"], expected["end_line"],
                   expected["end_column"], described(expected))
    assert list(await diagnostics_where(client, uris[1], lambda d: True)) == []
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uris[2]), position=found.range.start))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "PL204 `clip-before-unscale`" in hover.contents.value

    # The cell is edited: its finding goes away.
    suppressed = CLIP_SCRIPT.replace("clip_grad_norm_(model.parameters(), 1.0)",
                                     "clip_grad_norm_(model.parameters(), 1.0)  # precisionlint: ignore[PL204]")
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=path.as_uri(), version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text=suppressed)],
            )],
        )),
    ))
    assert list(await diagnostics_where(client, uris[2], lambda d: len(d) == 0)) == []

    # Closing the notebook clears what its cells showed.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=path.as_uri(), version=3),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=uris[2], version=3),
                changes=[types.TextDocumentContentChangeWholeDocument(text=CLIP_SCRIPT)],
            )],
        )),
    ))
    await diagnostics_where(client, uris[2], lambda d: len(d) == 1)
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=path.as_uri()),
        cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in uris],
    ))
    assert list(await diagnostics_where(client, uris[2], lambda d: len(d) == 0)) == []


async def test_a_broken_notebook_is_a_diagnostic_and_the_server_stays_up(client: LanguageClient,
                                                                         project: Path) -> None:
    broken = project / "broken.ipynb"
    uri = open_document(client, broken, '{"cells": [{"cell_type": "code", "source": "torch.autocast"},, ]}\n')
    [parse_error] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert parse_error.code == "PL001"
    assert_same_as_check([parse_error], broken)
    good = project / "good.ipynb"
    good_uri = open_document(client, good, notebook(CELLS))
    [found] = await diagnostics_where(client, good_uri, lambda d: len(d) > 0)
    assert found.code == "PL204"


async def test_a_notebook_fix_edits_the_cell_source_in_the_json_text(client: LanguageClient, project: Path) -> None:
    case = Path(__file__).resolve().parent.parent / "rules" / "deprecated-amp-api"
    text = (case / "bad_notebook.ipynb").read_text(encoding="utf-8")
    path = project / "bad_notebook.ipynb"
    uri = open_document(client, path, text)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL207"
    actions = await code_actions(client, uri, found)
    [fix] = [a for a in actions if "unsafe fix" in a.title]
    assert not fix.is_preferred
    fixed = apply_text_edits(text, edits_of(fix, uri))
    assert fixed == (case / "bad_notebook.ipynb.fixed").read_text(encoding="utf-8")  # what check --fix writes
    assert not any(a.title.startswith("Suppress") for a in actions)  # no comment goes into the JSON
    change_document(client, uri, fixed, version=2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []
