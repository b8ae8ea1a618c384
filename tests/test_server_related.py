"""A finding's related locations in the editor: `relatedInformation` on its diagnostic, placed in the client's
position encoding (UTF-16 here), for clients that declare they show it; driven over stdio by a real LSP
client (pytest-lsp)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.lsp_session import ROOT, client, diagnostics_where, open_document, project, quiet  # noqa: E402
from tests.test_server_notebooks import cell_uri, notebook  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="function")
__all__ = ["client", "project"]  # fixtures, used by name

# A repeated key in a flow mapping, after a character outside the Basic Multilingual Plane (two UTF-16 units):
# the earlier `precision` is at character column 22, UTF-16 column 22 (0-based 21, plus one for the emoji).
REPEATED = 'trainer: {note: "\N{FIRE}", precision: 16-mixed, precision: bf16-mixed}\n'
# The DeepSpeed JSON that the Hugging Face arguments name, with `bf16.enabled` after an emoji as well.
DS_JSON = '{\n  "fp16": {"enabled": true},\n  "bf16": {"note": "\N{FIRE}", "enabled": false}\n}\n'


def _span(where: types.Range) -> tuple[int, int, int, int]:
    return where.start.line, where.start.character, where.end.line, where.end.character


def _hf_case(project: Path) -> Path:
    """The cross-file case of Hugging Face arguments (bf16) against the DeepSpeed JSON they name (bf16 off)."""
    case = project / "hf"
    shutil.copytree(ROOT / "rules" / "cross-file-precision-conflict" / "bad_hf_yaml", case)
    (case / "configs" / "ds.json").write_text(DS_JSON, encoding="utf-8")
    return case


async def test_repeated_key_shows_the_earlier_occurrence(client: LanguageClient, project: Path) -> None:
    uri = open_document(client, project / "config.yaml", REPEATED)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL004"
    assert _span(found.range) == (0, 43, 0, 52)
    [earlier] = found.related_information or []
    assert earlier.location.uri == uri  # the document's own URI, not an empty path
    assert _span(earlier.location.range) == (0, 22, 0, 31)
    assert earlier.message == "an earlier 'precision', ignored by PyYAML and OmegaConf"


async def test_cross_file_finding_names_the_other_file(client: LanguageClient, project: Path) -> None:
    case = _hf_case(project)
    path = case / "args.yaml"
    uri = open_document(client, path, path.read_text(encoding="utf-8"))
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL402"
    [other] = found.related_information or []
    assert other.location.uri == (case / "configs" / "ds.json").as_uri()
    # Line 3, characters 36-41 of the JSON: UTF-16 columns 36-41 (0-based 35-40, plus one for the emoji).
    assert _span(other.location.range) == (2, 36, 2, 41)
    assert other.message == "DeepSpeed `bf16.enabled=false`"


async def test_an_open_linked_buffer_places_the_other_file(client: LanguageClient, project: Path) -> None:
    """The DeepSpeed JSON is open with unsaved text that moves the setting: the place follows the buffer."""
    case = _hf_case(project)
    ds = case / "configs" / "ds.json"
    moved = DS_JSON.replace('"fp16"', '"comment": "\N{FIRE}\N{FIRE}",\n  "fp16"')
    open_document(client, ds, moved, save=False)
    path = case / "args.yaml"
    uri = open_document(client, path, path.read_text(encoding="utf-8"))
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0 and bool(d[0].related_information))
    [other] = found.related_information or []
    assert other.location.uri == ds.as_uri()
    assert _span(other.location.range) == (3, 36, 3, 41)


@pytest.mark.parametrize("related_information", [False])
async def test_a_client_without_the_capability_gets_none(client: LanguageClient, project: Path,
                                                        related_information: bool) -> None:
    uri = open_document(client, project / "config.yaml", REPEATED)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL004"
    assert found.related_information is None
    case = _hf_case(project)
    path = case / "args.yaml"
    cross = open_document(client, path, path.read_text(encoding="utf-8"))
    [other] = await diagnostics_where(client, cross, lambda d: len(d) > 0)
    assert other.code == "PL402"
    await quiet(client, 0.2)
    assert all(d.related_information is None for d in client.diagnostics[uri])
    assert all(d.related_information is None for d in client.diagnostics[cross])


async def test_a_notebook_keeps_the_other_file_in_both_views(client: LanguageClient, project: Path) -> None:
    """TrainingArguments in a notebook's code cell against the DeepSpeed JSON they name: the JSON's place is
    sent whether the notebook is open as text or as notebook cells (places in the notebook itself, counted in
    its cells' joined program, would be left out)."""
    case = project / "nb"
    shutil.copytree(ROOT / "rules" / "cross-file-precision-conflict" / "bad_hf_script", case)
    script = (case / "train.py").read_text(encoding="utf-8")
    cells = [("markdown", "# Fine-tune\n"), ("code", "x = 1\n"), ("code", script)]
    path = case / "train.ipynb"
    text = notebook(cells)
    ds = (case / "ds_config.json").as_uri()

    as_text = open_document(client, path, text)
    [found] = await diagnostics_where(client, as_text, lambda d: len(d) > 0)
    assert found.code == "PL402"
    [other] = found.related_information or []
    assert other.location.uri == ds
    assert _span(other.location.range) == (4, 15, 4, 19)  # "bf16": {"enabled": false} in ds_config.json

    path = case / "cells.ipynb"  # the same notebook, open in a notebook editor
    path.write_text(text, encoding="utf-8")
    kinds = {"markdown": types.NotebookCellKind.Markup, "code": types.NotebookCellKind.Code}
    uris = [cell_uri(path, index) for index in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=path.as_uri(), notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kinds[kind], document=uri)
                   for (kind, _), uri in zip(cells, uris, strict=True)],
        ),
        cell_text_documents=[
            types.TextDocumentItem(uri=uri, language_id="python" if kind == "code" else "markdown", version=1,
                                   text=source)
            for (kind, source), uri in zip(cells, uris, strict=True)
        ],
    ))
    [on_cell] = await diagnostics_where(client, uris[2], lambda d: len(d) > 0)
    assert on_cell.code == "PL402"
    [other] = on_cell.related_information or []
    assert other.location.uri == ds
    assert _span(other.location.range) == (4, 15, 4, 19)
