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
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types

from precisionlint.server.actions import FIX_ALL_KIND, code_actions, covers, hover_of, kind_matches
from precisionlint.server.analysis import ProjectConfigs, is_config_file
from precisionlint.server.precision_server import PrecisionServer, path_of

logger = logging.getLogger(__name__)

# Configuration files, the formats check reads (a config may name any of them), and the files that declare
# versions or launch a script (pins and launchers that the project's rules read with a file).
WATCHED = ("**/pyproject.toml", "**/precisionlint.toml", "**/.precisionlint.toml", "**/*.json", "**/*.yaml",
           "**/*.yml", "**/*.toml", "**/*.py", "**/*.ipynb", "**/*.sh", "**/requirements*.txt",
           "**/*_requirements.txt", "**/*-requirements.txt", "**/setup.cfg", "**/environment.yml",
           "**/environment.yaml", "**/Dockerfile*", "**/*.Dockerfile", "**/Containerfile*")
F = TypeVar("F", bound=Callable[..., Any])


def _enter_workspace(params: types.InitializeParams) -> None:
    """Work from the workspace root, as `check` is run from a repository's root: paths in messages read
    relative to it, and the project model resolves relative links from it as `check` does."""
    uri = params.root_uri
    if uri is None and params.workspace_folders:
        uri = params.workspace_folders[0].uri
    folder = path_of(uri) if uri else (Path(params.root_path) if params.root_path else None)
    if folder is not None and folder.is_dir():
        os.chdir(folder)


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
        from precisionlint.project.model import use

        # A project with no boundary above a file ends at the workspace, as `check .` run from there would end it.
        ls.project_model.tops = (os.getcwd(),)
        use(ls.project_model)  # the checks of this server read the projects (and its buffers) through it

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
        path = path_of(uri)
        if path is not None and is_config_file(path):
            ls.submit(("reload",), lambda: ls.recheck_everything(reload=True))
            return
        if path is not None:
            ls.saved.add(os.path.realpath(path))  # what was learnt from its text on the disk is forgotten
        ls.check_soon(uri)  # usually answered from the analysis of the same text

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded("closing a document")
    def did_close(ls: PrecisionServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.versions.pop(uri, None)
        path = path_of(uri)
        real = os.path.realpath(path) if path is not None else None
        text = ls.buffers.pop(real, None) if real is not None else None

        def closed() -> None:
            ls.analyses.pop(uri, None)
            ls.recent.pop(uri, None)
            ls.placements.pop(uri, None)
            ls.forgotten_at.pop(uri, None)
            ls.publish(uri, None, [], always=True)
            if real is not None and text is not None and _differs_from_disk(real, text):
                ls.project_model.forget_file(real)  # the documents that read it read the disk again
                ls.recheck_dependents(real)
            ls.dependencies.forget(uri)
            ls.published.pop(uri, None)

        ls.submit(("check", uri), closed)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded("following changed files")
    def did_change_watched(ls: PrecisionServer, params: types.DidChangeWatchedFilesParams) -> None:
        changes = [(path_of(change.uri), change.type) for change in params.changes]
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
                ls.project_model.forget_file(real)
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
            actions = list(code_actions(ls.encoding(), ls.versioned_edits(), uri, version, analysis, placed,
                                        params))
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
