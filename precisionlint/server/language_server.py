"""The language server: editor events in, `check`'s findings out, over stdio (pygls).

Diagnostics are published when a document is opened, changed or saved. A change is checked at once, without a
fixed delay (as ruff's server does): the protocol runs in its own thread while checks run one at a time on the
main thread (scheduler.py), so while one check runs the newest text of each document waits in line, replacing
older versions, and a result that is stale when it is done is not published. `debounceMs` in the initialization
options adds a delay for those who prefer one.

State stays warm between changes: the configuration per folder, the project model (pins, links, linked
documents), and the last few analyses of each document (an undo or a save of checked text costs nothing).
The text checked is always the editor's: an open document is never read from the disk, and a linked file that
is open (a DeepSpeed JSON being edited) is read from its buffer, saved or not.

What depends on what is recorded as documents are checked (dependencies.py): when a file changes, on the disk
(through the client's file watcher, registered when the client allows it) or in an open buffer, the project
model forgets that file only, and the open documents that read it, or whose pins it declares, are checked
again; their diagnostics are sent only if they changed. A changed `pyproject.toml`, `precisionlint.toml` or
`.precisionlint.toml` reloads the configuration and re-checks every open document.

Notebooks are served both as notebook documents (the protocol's notebook synchronization, VS Code's notebook
editor: diagnostics on each code cell) and as `.ipynb` text (diagnostics inside the cells' JSON strings).

Nothing an editor sends can stop the server: every handler and check reports its own failure to the client's
log and returns, and the document keeps its last diagnostics.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from precisionlint import __version__
from precisionlint.core.model import Finding
from precisionlint.server.actions import FIX_ALL_KIND, code_actions, covers, hover_of, kind_matches
from precisionlint.server.analysis import (
    Analysis,
    ProjectConfigs,
    analyse,
    forget_files_on_disk,
    is_config_file,
)
from precisionlint.server.convert import Positions, diagnostic
from precisionlint.server.dependencies import Dependencies
from precisionlint.server.notebooks import cell_of, cell_offset, code_cells, notebook_json
from precisionlint.server.related import RelatedPlaces, wants_related
from precisionlint.server.scheduler import Scheduler

logger = logging.getLogger(__name__)

RECENT_PER_DOCUMENT = 4
# Configuration files, the formats check reads (a config may name any of them), and the files that declare
# versions or launch a script (pins and launchers that the project's rules read with a file).
WATCHED = ("**/pyproject.toml", "**/precisionlint.toml", "**/.precisionlint.toml", "**/*.json", "**/*.yaml",
           "**/*.yml", "**/*.toml", "**/*.py", "**/*.ipynb", "**/*.sh", "**/requirements*.txt",
           "**/*_requirements.txt", "**/*-requirements.txt", "**/setup.cfg", "**/environment.yml",
           "**/environment.yaml", "**/Dockerfile*", "**/*.Dockerfile", "**/Containerfile*")
# Jupyter notebooks, whatever the cells' language (check reads every code cell as Python).
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook=types.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook"),
        cells=[types.NotebookCellLanguage(language="python")],
    )],
    save=True,
)
F = TypeVar("F", bound=Callable[..., Any])


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
        path = _path_of(uri)
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
            if changed_file is not None:
                from precisionlint.project import forget_file

                forget_file(changed_file)  # before anything reads it again, its own check included
            if not self.stale(snapshot):  # a newer version is in line: checking this one helps nobody
                analysis = self.analyse(snapshot)
                if analysis is not None and not self.stale(snapshot):
                    self.publish_analysis(snapshot, analysis, always)
        except Exception as exc:  # a bug: log it, keep serving, keep the last diagnostics
            self.internal_error(f"checking {snapshot.uri}", exc)
        if changed_file is not None:
            self.recheck_dependents(changed_file, skip=snapshot.uri)

    def analyse(self, snapshot: Snapshot) -> Analysis | None:
        path = _path_of(snapshot.uri)
        if path is None:
            return None
        for analysis in self.recent.get(snapshot.uri, ()):
            if analysis.text == snapshot.text:  # an undo, a save of checked text, a request after a check
                break
        else:
            analysis = analyse(path, snapshot.text, self.configs, snapshot.language_id)
            recent = self.recent.setdefault(snapshot.uri, [])
            recent.append(analysis)
            del recent[:-RECENT_PER_DOCUMENT]
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
        return RelatedPlaces(uri, path, own, encoding, self.buffers.get)

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
        forget_files_on_disk()
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


def _enter_workspace(params: types.InitializeParams) -> None:
    """Work from the workspace root, as `check` is run from a repository's root: paths in messages read
    relative to it, and the project model resolves relative links from it as `check` does."""
    uri = params.root_uri
    if uri is None and params.workspace_folders:
        uri = params.workspace_folders[0].uri
    folder = _path_of(uri) if uri else (Path(params.root_path) if params.root_path else None)
    if folder is not None and folder.is_dir():
        os.chdir(folder)


def _path_of(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None  # an unsaved buffer (untitled:), a notebook cell (vscode-notebook-cell:): no file
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def guarded(where: str) -> Callable[[F], F]:
    """Run a handler so that an exception is logged to the client and answered with nothing, never raised."""

    def wrap(func: F) -> F:
        if asyncio.iscoroutinefunction(func):
            async def async_handler(ls: PrecisionServer, params: Any) -> Any:
                try:
                    return await func(ls, params)
                except Exception as exc:
                    ls.internal_error(where, exc)
                    return None

            async_handler.__name__ = func.__name__
            async_handler.__doc__ = func.__doc__
            return async_handler  # type: ignore[return-value]

        def handler(ls: PrecisionServer, params: Any) -> Any:  # pygls passes the server to a first `ls`
            try:
                return func(ls, params)
            except Exception as exc:
                ls.internal_error(where, exc)
                return None

        handler.__name__ = func.__name__
        handler.__doc__ = func.__doc__
        return handler  # type: ignore[return-value]

    return wrap


def create_server(config_file: str | None = None) -> PrecisionServer:
    server = PrecisionServer()
    if config_file:
        server.configs = ProjectConfigs(config_file)
    _register_lifecycle(server)
    _register_documents(server)
    _register_notebooks(server)
    _register_requests(server)
    return server


def _register_lifecycle(server: PrecisionServer) -> None:
    @server.feature(types.INITIALIZE)
    @guarded("initializing")
    def initialize(ls: PrecisionServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls._protocol_thread = threading.current_thread()  # type: ignore[attr-defined]
        _enter_workspace(params)
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("configuration"), str) and options["configuration"]:
            ls.configs = ProjectConfigs(options["configuration"])
        debounce = options.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 10_000:
            ls.debounce_s = debounce / 1000
        from precisionlint.project.buffers import use_open_buffers

        use_open_buffers(ls.buffers.get)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PrecisionServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities
        workspace = capabilities.workspace
        watched = workspace.did_change_watched_files if workspace is not None else None
        if watched is None or not watched.dynamic_registration:
            ls.log("the client cannot watch files for the server: changes on the disk are followed through open "
                   "documents only")
            return
        registration = types.Registration(
            id="precisionlint-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
            ),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            ls.watching = True
        except Exception as exc:
            ls.log(f"the client refused to watch files ({exc}); following open documents only",
                   types.MessageType.Warning)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PrecisionServer, params: Any) -> None:
        ls.shut_down = True


def _register_documents(server: PrecisionServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded("opening a document")
    def did_open(ls: PrecisionServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.is_cell(uri):
            return
        real = ls.follow_buffer(uri)
        # Documents that read this file read its text from now on: checked again if it differs from the disk.
        changed = real if real is not None and _differs_from_disk(real, params.text_document.text) else None
        ls.check_soon(uri, changed_file=changed)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded("following an edit")
    def did_change(ls: PrecisionServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        cell_of_notebook = ls.workspace.get_notebook_document(cell_uri=uri)
        if cell_of_notebook is not None:
            ls.notebook_soon(cell_of_notebook.uri)
            return
        real = ls.follow_buffer(uri)
        ls.check_later(uri, changed_file=real)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.TextDocumentSaveRegistrationOptions(include_text=False))
    @guarded("following a save")
    def did_save(ls: PrecisionServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = _path_of(uri)
        if path is not None and is_config_file(path):
            ls.submit(("reload",), lambda: ls.recheck_everything(reload=True))
            return
        ls.check_soon(uri)  # usually answered from the analysis of the same text

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded("closing a document")
    def did_close(ls: PrecisionServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.versions.pop(uri, None)
        path = _path_of(uri)
        real = os.path.realpath(path) if path is not None else None
        text = ls.buffers.pop(real, None) if real is not None else None

        def closed() -> None:
            ls.analyses.pop(uri, None)
            ls.recent.pop(uri, None)
            ls.placements.pop(uri, None)
            ls.publish(uri, None, [], always=True)
            if real is not None and text is not None and _differs_from_disk(real, text):
                from precisionlint.project import forget_file

                forget_file(real)  # the documents that read it read the disk again
                ls.recheck_dependents(real)
            ls.dependencies.forget(uri)
            ls.published.pop(uri, None)

        ls.submit(("check", uri), closed)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded("following changed files")
    def did_change_watched(ls: PrecisionServer, params: types.DidChangeWatchedFilesParams) -> None:
        changes = [(_path_of(change.uri), change.type) for change in params.changes]
        if any(path is not None and is_config_file(path) for path, _ in changes):
            ls.submit(("reload",), lambda: ls.recheck_everything(reload=True))
            return
        if any(kind != types.FileChangeType.Changed for _, kind in changes):
            # A file appeared or went away: a link that did not resolve may now, a directory's pins moved.
            ls.submit(("reload",), lambda: ls.recheck_everything(reload=False))
            return
        for path, _ in changes:
            if path is None:
                continue
            real = os.path.realpath(path)
            if real in ls.buffers:
                continue  # open: its buffer is what documents read, and it was followed as it was typed

            def changed(real: str = real) -> None:
                from precisionlint.project import forget_file

                forget_file(real)
                ls.recheck_dependents(real)

            ls.submit(("changed", real), changed)


def _register_notebooks(server: PrecisionServer) -> None:
    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    @guarded("opening a notebook")
    def notebook_open(ls: PrecisionServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.notebook_soon(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    @guarded("following an edit of a notebook")
    def notebook_change(ls: PrecisionServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.notebook_soon(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    @guarded("closing a notebook")
    def notebook_close(ls: PrecisionServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.versions.pop(uri, None)
        cells = [cell.uri for cell in params.cell_text_documents]

        def closed() -> None:
            for cell_uri in {*cells, *ls.notebook_cells.pop(uri, [])}:
                ls.publish(cell_uri, None, [], always=True)
                ls.published.pop(cell_uri, None)
            ls.analyses.pop(uri, None)
            ls.recent.pop(uri, None)
            ls.dependencies.forget(uri)

        ls.submit(("check", uri), closed)


def _register_requests(server: PrecisionServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    @guarded("computing code actions")
    async def code_action(ls: PrecisionServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        snapshot = ls.snapshot(uri)
        if snapshot is None or ls.is_cell(uri):
            return None
        version = snapshot.version

        def compute() -> list[types.CodeAction] | None:
            analysis = ls.current(uri, snapshot)
            if analysis is None or not analysis.findings:
                return None
            placed = [(p.finding, p.range) for p in ls.place(uri, analysis)]
            actions = list(code_actions(ls, uri, version, analysis, placed, params))
            only = params.context.only
            if only:
                actions = [a for a in actions if kind_matches(a.kind, only)]
            return actions or None

        result: list[types.CodeAction] | None = await ls.on_worker(compute)
        return result

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded("showing a rule's documentation")
    async def hover(ls: PrecisionServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        notebook = ls.workspace.get_notebook_document(cell_uri=uri)
        target = notebook.uri if notebook is not None else uri
        published = ls.published.get(uri)

        def compute() -> types.Hover | None:
            if notebook is not None:
                found = [d for d in (published[1] if published else []) if covers(d.range, params.position)]
                analysis = ls.analyses.get(target)
                if not found or analysis is None:
                    return None
                codes = {d.code for d in found}
                matching = [f for f in analysis.findings
                            if f.code in codes and f.described() in {d.message for d in found}]
                return hover_of(matching, found[0].range) if matching else None
            analysis = ls.current(uri, ls_snapshot)
            if analysis is None:
                return None
            hits = [p for p in ls.place(uri, analysis) if covers(p.range, params.position)]
            return hover_of([p.finding for p in hits], hits[0].range) if hits else None

        ls_snapshot = ls.snapshot(uri)
        if notebook is None and ls_snapshot is None:
            return None
        result: types.Hover | None = await ls.on_worker(compute)
        return result


def _differs_from_disk(path: str, text: str) -> bool:
    from precisionlint.core.bounded_read import read_bytes

    try:  # a regular file only: a FIFO under the buffer's name must not block the server
        data = read_bytes(path, 4 * len(text) + 4)
    except (OSError, ValueError):
        return True
    return data.decode("utf-8", "surrogateescape") != text


def serve(config_file: str | None = None) -> None:
    """Serve over stdio until the client says exit (or closes the pipe). The protocol runs in a thread; the
    main thread runs the checks (see scheduler.py)."""
    server = create_server(config_file)
    code = [1]

    def protocol() -> None:
        from precisionlint.server.framing import start_io

        try:
            start_io(server)  # pygls' start_io, resynchronising after bad framing
        except BaseException:  # noqa: BLE001 - whatever ends the protocol ends the server
            logger.exception("the protocol stopped")
        finally:
            code[0] = 0 if server.shut_down else 1
            server.scheduler.stop()

    thread = threading.Thread(target=protocol, name="precisionlint-protocol", daemon=True)
    thread.start()
    try:
        server.scheduler.run(lambda exc: server.internal_error("running a job", exc))
    except KeyboardInterrupt:
        code[0] = 130
    finally:
        # Threads of the protocol may still wait on stdin; the process ends here without waiting for them.
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code[0])
