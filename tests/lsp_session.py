"""A real LSP session for the server's tests: pytest-lsp (built on pygls' client) starts
`python -m precisionlint server` over stdio in a fresh project folder; helpers open and change documents as an
editor would and compare what comes back with what `precisionlint check` says about the same text."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 30  # generous: the machine that runs the suite may be loaded

# The `_target_` names the reader (Lightning's Trainer): precisionlint reports a config only on such evidence.
TRAINER = "  _target_: lightning.pytorch.Trainer\n"
LEGACY_YAML = "trainer:\n  precision: 16\n  max_epochs: 3\n" + TRAINER
CLIP_SCRIPT = """import torch


def train(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
"""


def _capabilities(related_information: bool = True) -> types.ClientCapabilities:
    """What an editor declares (`related_information`: it shows a diagnostic's related locations, as VS Code and
    Neovim do)."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, related_information=related_information),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities(),
        ),
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()  # the project root: configuration is not looked for above it
    # Lightning 2.x declared: the fix of a 1.x precision spelling is safe only with a 2.x floor.
    (tmp_path / "requirements.txt").write_text("lightning>=2.2\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "precisionlint", "server", "--stdio"]),
)
async def client(lsp_client: LanguageClient, project: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    # A test parametrized with `related_information` (False) gets a client that does not declare it.
    callspec = getattr(request.node, "callspec", None)
    related_information = bool(callspec.params.get("related_information", True)) if callspec else True
    registrations: list[types.RegistrationParams] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.append(params)

    lsp_client.registrations = registrations  # type: ignore[attr-defined]
    # Every publication, in order (pytest-lsp keeps only the latest per document): its own handler, recording.
    published: list[types.PublishDiagnosticsParams] = []
    features = lsp_client.protocol.fm.features
    keeps_latest = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(*args: Any) -> Any:
        published.append(args[-1])
        return keeps_latest(*args)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    lsp_client.published = published  # type: ignore[attr-defined]
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=_capabilities(related_information),
        root_uri=project.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
        initialization_options={},  # the defaults: every change checked at once
    ))
    lsp_client.initialize_result = result  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------


def _language(path: Path) -> str:
    return {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json", ".ipynb": "json",
            ".txt": "pip-requirements"}[path.suffix]


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1, save: bool = True) -> str:
    """Open `text` as the document `path` (also written there, unless `save` is False: an unsaved buffer)."""
    if save:
        path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=_language(path), version=version, text=text)
    ))
    return uri


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    ))


async def diagnostics_where(
    client: LanguageClient, uri: str, predicate: Callable[[Sequence[types.Diagnostic]], bool]
) -> Sequence[types.Diagnostic]:
    """Wait until the latest diagnostics published for `uri` satisfy `predicate`."""

    async def wait() -> Sequence[types.Diagnostic]:
        while True:
            current = client.diagnostics.get(uri)
            if current is not None and predicate(current):
                return current
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), TIMEOUT_S)


async def next_diagnostics(client: LanguageClient, uri: str) -> Sequence[types.Diagnostic]:
    """Wait for the next diagnostics published for `uri`."""

    async def wait() -> Sequence[types.Diagnostic]:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri:
                return params.diagnostics

    return await asyncio.wait_for(wait(), TIMEOUT_S)


def check_json(path: Path, cwd: Path | None = None) -> list[dict[str, Any]]:
    """What `precisionlint check` run from `cwd` (the file's folder) reports for the file on disk."""
    done = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--output-format", "json", str(path)],
                          capture_output=True, text=True, cwd=cwd or path.parent)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def described(finding: dict[str, Any]) -> str:
    """A JSON finding as an editor shows it: its message, its notes in parentheses (Finding.described)."""
    notes = finding.get("notes") or []
    return f"{finding['message']} ({'; '.join(notes)})" if notes else finding["message"]


def assert_same_as_check(diagnostics: Sequence[types.Diagnostic], path: Path, cwd: Path | None = None) -> None:
    """The diagnostics are what `check` says, run from `cwd` (the file's folder; the workspace root where a
    message names another file by its path)."""
    severities = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
                  "info": types.DiagnosticSeverity.Information}
    expected = [
        (f["code"], severities[f["severity"]], f["line"] - 1, f["column"] - 1, f["end_line"] - 1,
         f["end_column"] - 1, described(f))
        for f in check_json(path, cwd)
    ]
    got = [
        (d.code, d.severity, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
         d.message)
        for d in diagnostics
    ]
    assert sorted(got) == sorted(expected), (got, expected)  # type: ignore[type-var]


def apply_text_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    """Apply LSP edits (ASCII text: UTF-16 columns are characters) the way an editor does: last first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None
    assert action.edit.document_changes is not None  # the client said it supports versioned edits
    [change] = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == uri
    return list(change.edits)  # type: ignore[arg-type]


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic,
                       only: list[str] | None = None) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
    ))
    return [a for a in result or [] if isinstance(a, types.CodeAction)]



def watched_change(client: LanguageClient, path: Path) -> None:
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]))


def close_document(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))


async def quiet(client: LanguageClient, seconds: float = 1.0) -> None:
    """Give the server time to send anything it would send (used to show that it sends nothing)."""
    await asyncio.sleep(seconds)
