"""The server's state and its work: open documents, their analyses and where their findings are shown,
publishing, and the checks scheduled on the worker (the main thread, scheduler.py). The editor's events that
drive it are registered in language_server.py; the requests about a checked document are in actions.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import traceback
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from precisionlint import __version__
from precisionlint.core.model import Finding
from precisionlint.project.model import ProjectModel
from precisionlint.server.analysis import Analysis, ProjectConfigs, analyse
from precisionlint.server.collection import Collector
from precisionlint.server.convert import Positions, diagnostic
from precisionlint.server.dependencies import Dependencies
from precisionlint.server.notebooks import cell_of, cell_offset, code_cells, notebook_json
from precisionlint.server.related import RelatedPlaces, wants_related
from precisionlint.server.reparse import import_lines_differ
from precisionlint.server.scheduler import Scheduler

logger = logging.getLogger(__name__)

RECENT_PER_DOCUMENT = 4
# Jupyter notebooks, whatever the cells' language (check reads every code cell as Python).
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook=types.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook"),
        cells=[types.NotebookCellLanguage(language="python")],
    )],
    save=True,
)


class Snapshot(NamedTuple):
    """An open document as it was when its check was asked for (taken on the protocol's thread)."""

    uri: str
    version: int | None
    text: str
    language_id: str | None


class Placed(NamedTuple):
    """A finding and where the editor shows it."""

    finding: Finding
    uri: str
    range: types.Range
    related: list[types.DiagnosticRelatedInformation] | None = None  # for clients that accept them


class PrecisionServer(LanguageServer):
    def __init__(self) -> None:
        from precisionlint.server.framing import SafeProtocol

        super().__init__("precisionlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=SafeProtocol)
        self.configs = ProjectConfigs()
        self.debounce_s = 0.0
        self.scheduler = Scheduler()
        self.collector = Collector()  # the cyclic collector around checks (collection.py)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.timers: dict[str, asyncio.TimerHandle] = {}  # uri -> a delayed check (debounceMs only)
        self.shut_down = False
        self.watching = False  # the client sends workspace/didChangeWatchedFiles for our patterns
        # The protocol thread's view: the newest version of each document, and the text of open files by real
        # path (what the project model reads instead of the disk).
        self.versions: dict[str, int | None] = {}
        self.buffers: dict[str, str] = {}
        # The worker's (main thread's) state.
        self.analyses: dict[str, Analysis] = {}  # uri -> the last check of its buffer
        self.recent: dict[str, list[Analysis]] = {}  # uri -> its last few checks, reused for the same text
        self.published: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}  # uri -> what the client has
        self.notebook_cells: dict[str, list[str]] = {}  # notebook uri -> the cell uris it last published to
        # uri -> (analysis, encoding, where its findings are shown): publishing, hovers and code actions on one
        # version place them once (for a notebook's JSON text, one reading of its strings).
        self.placements: dict[str, tuple[Analysis, str, list[Placed]]] = {}
        self.dependencies = Dependencies()
        # Project state read from the disk that a buffer's keystroke does not change (project.vendored reads the
        # folder's Python files from the disk): forgotten when the file is saved (real paths saved since their
        # last check: the protocol thread adds, the worker takes) or when its import lines change.
        self.saved: set[str] = set()
        self.forgotten_at: dict[str, str] = {}  # uri -> the text of its last check (import lines compared with it)
        # What the checks learnt of the projects on disk (pins, links, linked files, config readers, launch
        # lines), reading an open file from its buffer: `check` learns it once per run; the server keeps it warm
        # and forgets what a change touches. Made the current one when the client initializes
        # (language_server.initialize).
        self.project_model = ProjectModel(open_buffer=self.buffers.get)
        self.reported: set[str] = set()  # configuration errors already shown

    # -- talking to the client from any thread -------------------------------------------------------------------

    def soon(self, func: Callable[..., Any], *args: Any) -> None:
        """Run `func(*args)` on the protocol's thread (which owns the connection)."""
        loop = self.loop
        if loop is None or threading.current_thread() is getattr(self, "_protocol_thread", None):
            func(*args)
        else:
            loop.call_soon_threadsafe(func, *args)

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        def send() -> None:
            try:
                self.window_log_message(types.LogMessageParams(type=kind, message=message))
            except Exception:  # the connection is gone: nothing left to tell
                logger.exception("cannot log to the client")

        self.soon(send)

    def internal_error(self, where: str, exc: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.log(f"precisionlint: internal error while {where}: {type(exc).__name__}: {exc}. This is a bug in "
                 f"precisionlint; please report it.\n{detail}", types.MessageType.Error)

    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def versioned_edits(self) -> bool:
        """Whether the client takes versioned document changes in a workspace edit (it then refuses an edit
        made for a version of the buffer that changed since, instead of applying stale offsets)."""
        capabilities = self.client_capabilities.workspace
        workspace_edit = capabilities.workspace_edit if capabilities is not None else None
        return bool(workspace_edit is not None and workspace_edit.document_changes)

    def publish(self, uri: str, version: int | None, diagnostics: list[types.Diagnostic], always: bool) -> None:
        """Send a document's diagnostics, unless the client already has exactly these for this version."""
        if not always and self.published.get(uri) == (version, diagnostics):
            return
        self.published[uri] = (version, diagnostics)
        params = types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        self.soon(self.text_document_publish_diagnostics, params)

    # -- the protocol's thread: what to check --------------------------------------------------------------------

    def snapshot(self, uri: str) -> Snapshot | None:
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        return Snapshot(uri, document.version, document.source, document.language_id)

    def is_cell(self, uri: str) -> bool:
        return self.workspace.get_notebook_document(cell_uri=uri) is not None

    def open_files(self) -> list[str]:
        """The open text documents that are files (not notebook cells)."""
        return [uri for uri in list(self.workspace.text_documents) if not self.is_cell(uri)]

    def follow_buffer(self, uri: str) -> str | None:
        """Record the open file's text for the project model (linked files are read from it)."""
        path = path_of(uri)
        snapshot = self.snapshot(uri)
        if path is None or snapshot is None:
            return None
        real = os.path.realpath(path)
        self.buffers[real] = snapshot.text
        self.versions[uri] = snapshot.version
        return real

    def check_soon(self, uri: str, changed_file: str | None = None) -> None:
        """Check an open document's current text on the worker; `changed_file`: its text changed, so the
        documents that read it are checked again after it."""
        snapshot = self.snapshot(uri)
        if snapshot is None:
            return
        self.versions[uri] = snapshot.version
        self.submit(("check", uri), lambda: self.run_check(snapshot, changed_file=changed_file))

    def check_later(self, uri: str, changed_file: str | None) -> None:
        if self.debounce_s <= 0 or self.loop is None:
            self.check_soon(uri, changed_file)
            return
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.timers[uri] = self.loop.call_later(self.debounce_s, self.check_soon, uri, changed_file)

    def submit(self, key: Hashable, job: Callable[[], Any]) -> None:
        self.scheduler.submit(key, job)

    async def on_worker(self, func: Callable[[], Any]) -> Any:
        """Run `func` on the worker after the checks already in line; its result (or exception) here."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)

        def job() -> None:
            try:
                result = func()
            except Exception as exc:
                loop.call_soon_threadsafe(settle, None, exc)
                return
            loop.call_soon_threadsafe(settle, result, None)

        self.submit(("request", object()), job)
        return await future

    # -- the worker (main thread): checking ----------------------------------------------------------------------

    def stale(self, snapshot: Snapshot) -> bool:
        return self.versions.get(snapshot.uri, snapshot.version) != snapshot.version

    def run_check(self, snapshot: Snapshot, changed_file: str | None = None, always: bool = True) -> None:
        """Check one open document and publish its diagnostics (`always`: even if they did not change)."""
        try:
            self.forget_changes(snapshot, changed_file)  # before anything reads it again, its own check too
            if not self.stale(snapshot):  # a newer version is in line: checking this one helps nobody
                analysis = self.analyse(snapshot)
                if analysis is not None and not self.stale(snapshot):
                    self.publish_analysis(snapshot, analysis, always)
        except Exception as exc:  # a bug: log it, keep serving, keep the last diagnostics
            self.internal_error(f"checking {snapshot.uri}", exc)
        if changed_file is not None:
            self.recheck_dependents(changed_file, skip=snapshot.uri)

    def forget_changes(self, snapshot: Snapshot, changed_file: str | None) -> None:
        """What the project model learnt from the document's file, forgotten when its text changed
        (`changed_file`) or it was saved; the in-project packages its folders import (read from the disk) only
        when it was saved or its import lines changed (a file changed on the disk, reloaded by the editor), not at
        every keystroke: on a repository with such packages that re-read costs several milliseconds a change."""
        path = path_of(snapshot.uri)
        real = os.path.realpath(path) if path is not None else None
        saved = False
        if real is not None and real in self.saved:
            self.saved.discard(real)
            saved = True
        imports = True
        if real is not None and real.endswith(".py"):
            imports = import_lines_differ(self.forgotten_at.get(snapshot.uri), snapshot.text)
            self.forgotten_at[snapshot.uri] = snapshot.text
        if changed_file is not None:
            self.project_model.forget_file(changed_file, imports=imports or saved)
        elif saved and real is not None:
            self.project_model.forget_file(real)
        if saved:
            self.recent.pop(snapshot.uri, None)  # checked with what the disk held before

    def analyse(self, snapshot: Snapshot) -> Analysis | None:
        path = path_of(snapshot.uri)
        if path is None:
            return None
        for analysis in self.recent.get(snapshot.uri, ()):
            if analysis.text == snapshot.text:  # an undo, a save of checked text, a request after a check
                break
        else:
            with self.collector.check():
                analysis = analyse(path, snapshot.text, self.configs, snapshot.language_id,
                                   previous=self.analyses.get(snapshot.uri))
                recent = self.recent.setdefault(snapshot.uri, [])
                recent.append(analysis)
                del recent[:-RECENT_PER_DOCUMENT]  # freed here, with no collection walking it first
            if self.collector.sweep_due():  # after the check's diagnostics: in line behind it
                self.submit(("sweep",), self.collector.sweep)
        self.analyses[snapshot.uri] = analysis
        self.dependencies.record(snapshot.uri, str(path), analysis.reads)
        self.report_configuration(analysis)
        return analysis

    def report_configuration(self, analysis: Analysis) -> None:
        settings = analysis.settings
        if settings is None or not settings.error or settings.error in self.reported:
            return
        self.reported.add(settings.error)
        message = f"configuration ignored, defaults apply: {settings.error}"
        self.log(message, types.MessageType.Error)
        self.soon(self.window_show_message, types.ShowMessageParams(
            type=types.MessageType.Error, message=f"precisionlint: {message}"))

    def publish_analysis(self, snapshot: Snapshot, analysis: Analysis, always: bool) -> None:
        placed = self.place(snapshot.uri, analysis)
        self.publish(snapshot.uri, snapshot.version, [diagnostic(p.finding, p.range, p.related) for p in placed],
                     always)

    def place(self, uri: str, analysis: Analysis) -> list[Placed]:
        """Where the editor shows each finding of a document's text."""
        encoding = self.encoding()
        cached = self.placements.get(uri)
        if cached is not None and cached[0] is analysis and cached[1] == encoding:
            return cached[2]
        placed = self._place(uri, analysis, encoding)
        if wants_related(self.client_capabilities) and any(p.finding.related for p in placed):
            own = Positions(analysis.text, encoding) if analysis.format != "notebook" else None
            places = self.related_places(uri, str(analysis.path), own, encoding)
            placed = [p._replace(related=places.of(p.finding)) if p.finding.related else p for p in placed]
        self.placements[uri] = (analysis, encoding, placed)
        return placed

    def related_places(self, uri: str, path: str | None, own: Positions | None, encoding: str) -> RelatedPlaces:
        return RelatedPlaces(uri, path, own, encoding, self.buffers.get, self.project_model.loaded_text)

    def _place(self, uri: str, analysis: Analysis, encoding: str) -> list[Placed]:
        positions = Positions(analysis.text, encoding)
        if analysis.format != "notebook":
            return [Placed(f, uri, positions.range(f.span)) for f in analysis.findings]
        cells = code_cells(analysis.text)
        placed = []
        for finding in analysis.findings:
            number = cell_of(finding)
            cell = cells.get(number) if cells is not None and number is not None else None
            if cell is None:  # a position in the file itself (invalid JSON, a limit)
                placed.append(Placed(finding, uri, positions.range(finding.span)))
                continue
            span = finding.span
            start = positions.at_offset(cell_offset(cell, span.line, span.column))
            end = positions.at_offset(cell_offset(cell, span.end_line, span.end_column))
            if (end.line, end.character) < (start.line, start.character):
                end = start
            placed.append(Placed(finding, uri, types.Range(start=start, end=end)))
        return placed

    def recheck_dependents(self, changed_file: str, skip: str | None = None) -> None:
        """Check again, on the worker, the open documents that read `changed_file` (or whose pins it
        declares); their diagnostics go out only if they changed."""
        for uri in self.dependencies.dependents(changed_file):
            if uri != skip:
                self.recent.pop(uri, None)  # checked with the linked file's old text
                self.soon(self.recheck_open_document, uri)

    def recheck_open_document(self, uri: str) -> None:
        """(Protocol thread.) Check an open document or notebook again without a change of its own."""
        if uri in self.workspace.notebook_documents:
            self.notebook_soon(uri, always=False)
            return
        snapshot = self.snapshot(uri)
        if snapshot is not None:
            self.submit(("check", uri), lambda: self.run_check(snapshot, always=False))

    def recheck_everything(self, reload: bool) -> None:
        """(Worker.) After a configuration change (`reload`) or a file created or deleted: forget what was
        learnt from the disk and check every open document again."""
        if reload:
            self.configs.clear()
            self.reported.clear()
        self.project_model.forget()
        self.recent.clear()
        self.soon(self.recheck_all_open)

    def recheck_all_open(self) -> None:
        for uri in self.open_files():
            self.recheck_open_document(uri)
        for uri in list(self.workspace.notebook_documents):
            self.notebook_soon(uri, always=False)

    # -- notebooks (notebook documents: one text document per cell) -----------------------------------------------

    def notebook_soon(self, notebook_uri: str, always: bool = True) -> None:
        """(Protocol thread.) Check a notebook document's cells as `check` reads the saved notebook."""
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
        cells: list[tuple[bool, str, str]] = []  # (is code, cell uri, text)
        for cell in notebook.cells:
            document = self.workspace.text_documents.get(cell.document)
            cells.append((cell.kind == types.NotebookCellKind.Code, cell.document,
                          document.source if document is not None else ""))
        self.versions[notebook_uri] = notebook.version
        snapshot = Snapshot(notebook_uri, notebook.version, notebook_json([(c[0], c[2]) for c in cells]), None)
        code = [(uri, text) for is_code, uri, text in cells if is_code]
        every = [uri for _, uri, _ in cells]
        self.submit(("check", notebook_uri), lambda: self.run_notebook(snapshot, code, every, always))

    def run_notebook(self, snapshot: Snapshot, code: list[tuple[str, str]], every: list[str],
                     always: bool) -> None:
        try:
            if self.stale(snapshot):
                return
            analysis = self.analyse(snapshot)
            if analysis is None or self.stale(snapshot):
                return
            by_cell: dict[str, list[types.Diagnostic]] = {uri: [] for uri in every}
            positions: dict[str, Positions] = {}  # cell uri -> its line starts, read once
            # Places in the notebook itself are counted in its cells' joined program: left out (related.py).
            related = (self.related_places(snapshot.uri, None, None, self.encoding())
                       if wants_related(self.client_capabilities) else None)
            for finding in analysis.findings:
                number = cell_of(finding)
                if number is None or not 1 <= number <= len(code):
                    number = 1  # a position in the notebook file itself: shown on its first code cell
                    if not code:
                        continue
                    finding = finding._replace(span=finding.span.point(1, 1))
                uri, text = code[number - 1]
                if uri not in positions:
                    positions[uri] = Positions(text, self.encoding())
                others = related.of(finding) if related is not None and finding.related else None
                by_cell[uri].append(diagnostic(finding, positions[uri].range(finding.span), others))
            for uri in self.notebook_cells.get(snapshot.uri, []):
                if uri not in by_cell:  # a cell deleted since: clear what it showed
                    self.publish(uri, None, [], always=False)
            self.notebook_cells[snapshot.uri] = list(by_cell)
            for uri, diagnostics in by_cell.items():
                self.publish(uri, None, diagnostics, always)
        except Exception as exc:
            self.internal_error(f"checking the notebook {snapshot.uri}", exc)

    # -- requests (on the worker, after the checks in line) ------------------------------------------------------

    def current(self, uri: str, snapshot: Snapshot | None) -> Analysis | None:
        """The analysis of the buffer as it was when the request came (checked now if it was not yet)."""
        if snapshot is None:
            return None
        analysis = self.analyses.get(uri)
        if analysis is None or analysis.text != snapshot.text:
            analysis = self.analyse(snapshot)
        return analysis


def path_of(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None  # an unsaved buffer (untitled:), a notebook cell (vscode-notebook-cell:): no file
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None
