"""The language server, driven over stdio by a real LSP client (pytest-lsp, built on pygls' client).

Each test starts `python -m precisionlint server` as a subprocess in a fresh project folder, opens documents
as an editor would, and compares what comes back with what `precisionlint check` says about the same text.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.lsp_session import (  # noqa: E402
    CLIP_SCRIPT,
    LEGACY_YAML,
    TRAINER,
    apply_text_edits,
    assert_same_as_check,
    change_document,
    check_json,
    client,
    code_actions,
    diagnostics_where,
    edits_of,
    open_document,
    project,
    watched_change,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")
__all__ = ["client", "project"]  # fixtures, used by name


# ---------------------------------------------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------------------------------------------


async def test_open_quick_fix_and_cleared_diagnostics(client: LanguageClient, project: Path) -> None:
    path = project / "config.yaml"
    uri = open_document(client, path, LEGACY_YAML)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL102"
    assert found.severity == types.DiagnosticSeverity.Warning
    assert found.source == "precisionlint"
    assert (found.range.start.line, found.range.start.character) == (1, 13)
    assert (found.range.end.line, found.range.end.character) == (1, 15)
    assert_same_as_check([found], path)

    actions = await code_actions(client, uri, found)
    [fix] = [a for a in actions if a.title.startswith("Replace with")]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.is_preferred
    assert "unsafe" not in fix.title
    fixed = apply_text_edits(LEGACY_YAML, edits_of(fix, uri))
    assert fixed == "trainer:\n  precision: 16-mixed\n  max_epochs: 3\n  _target_: lightning.pytorch.Trainer\n"

    change_document(client, uri, fixed, version=2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []
    path.write_text(fixed, encoding="utf-8")
    assert check_json(path) == []


async def test_diagnostics_follow_the_buffer_not_the_disk(client: LanguageClient, project: Path) -> None:
    path = project / "train.yaml"
    uri = open_document(client, path, "trainer:\n  precision: 16-mixed\n  _target_: lightning.pytorch.Trainer\n")
    await diagnostics_where(client, uri, lambda d: len(d) == 0)
    for version in range(2, 7):  # typing: each change restarts the debounce timer
        change_document(client, uri, "trainer:\n  precision: " + "16"[: version % 2 + 1] + "\n", version)
    change_document(client, uri, "trainer:\n\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n", 7)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1 and d[0].range.start.line == 2)
    assert found.code == "PL102"
    # The disk was never read.
    assert path.read_text(encoding="utf-8") == "trainer:\n  precision: 16-mixed\n" + TRAINER


async def test_unsafe_fix_is_marked_and_suppressions_verified(client: LanguageClient, project: Path) -> None:
    path = project / "train.py"
    uri = open_document(client, path, CLIP_SCRIPT)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert found.code == "PL204"
    assert_same_as_check([found], path)
    actions = await code_actions(client, uri, found)
    titles = [a.title for a in actions]
    [unsafe] = [a for a in actions if "unscale_" in a.title]
    assert "unsafe" in unsafe.title and not unsafe.is_preferred
    assert "Suppress clip-before-unscale on this line" in titles
    assert "Suppress clip-before-unscale in this file" in titles
    # No safe fix here, so no "fix all safe findings".
    assert not any("Fix all" in t for t in titles)

    [suppress] = [a for a in actions if a.title == "Suppress clip-before-unscale on this line"]
    suppressed = apply_text_edits(CLIP_SCRIPT, edits_of(suppress, uri))
    assert "clip_grad_norm_(model.parameters(), 1.0)  # precisionlint: ignore[clip-before-unscale]\n" in suppressed
    change_document(client, uri, suppressed, version=2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []
    path.write_text(suppressed, encoding="utf-8")
    assert check_json(path) == []

    change_document(client, uri, CLIP_SCRIPT, version=3)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    [whole_file] = [a for a in await code_actions(client, uri, found) if a.title.endswith("in this file")]
    silenced = apply_text_edits(CLIP_SCRIPT, edits_of(whole_file, uri))
    assert silenced.startswith("# precisionlint: file-ignore[clip-before-unscale]\nimport torch\n")
    change_document(client, uri, silenced, version=4)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


async def test_fix_all_safe_findings_in_a_file(client: LanguageClient, project: Path) -> None:
    text = ("# two legacy values\ntrainer:\n  precision: 16\n" + TRAINER
            + "baseline:\n  trainer:\n    precision: bf16  # keep\n    _target_: lightning.pytorch.Trainer\n")
    path = project / "two.yaml"
    uri = open_document(client, path, text)
    found = await diagnostics_where(client, uri, lambda d: len(d) == 2)
    assert_same_as_check(found, path)
    actions = await code_actions(client, uri, found[0], only=[types.CodeActionKind.SourceFixAll])
    [fix_all] = actions
    assert fix_all.kind == "source.fixAll.precisionlint"
    fixed = apply_text_edits(text, edits_of(fix_all, uri))
    done = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--fix", str(path)], capture_output=True,
                          text=True, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert fixed == path.read_text(encoding="utf-8")  # exactly what `check --fix` writes
    change_document(client, uri, fixed, version=2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


async def test_hover_shows_the_rule_documentation(client: LanguageClient, project: Path) -> None:
    uri = open_document(client, project / "config.yaml", LEGACY_YAML)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=found.range.start))
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert "PL102 `legacy-precision-value`" in hover.contents.value
    assert "## What it does" in hover.contents.value or "What it does" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert nothing is None


async def test_utf16_columns(client: LanguageClient, project: Path) -> None:
    # An emoji is one character for `check` and two UTF-16 code units for the editor.
    text = 'trainer: {note: "\U0001f680", precision: 16, _target_: lightning.pytorch.Trainer}\n'
    path = project / "rocket.yaml"
    uri = open_document(client, path, text)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    [from_check] = check_json(path)
    assert found.range.start.character == from_check["column"] - 1 + 1  # one extra code unit for the emoji
    assert found.range.end.character - found.range.start.character == 2


async def test_configuration_is_reloaded_when_it_changes(client: LanguageClient, project: Path) -> None:
    uri = open_document(client, project / "config.yaml", LEGACY_YAML)
    await diagnostics_where(client, uri, lambda d: len(d) == 1)
    [registration] = client.registrations  # type: ignore[attr-defined]
    [watchers] = registration.registrations
    assert watchers.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.precisionlint]\nignore = ["legacy-precision-value"]\n', encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)]))
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []

    # A configuration that cannot be used: the defaults apply, and the user is told why.
    pyproject.write_text('[tool.precisionlint]\nignore = ["legacy-precision-value"]\nselec = ["ALL"]\n',
                         encoding="utf-8")
    watched_change(client, pyproject)
    await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert any("unknown key 'selec'" in m.message for m in client.messages)


async def test_a_changed_pin_file_rechecks_the_files_that_depend_on_it(client: LanguageClient, project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "classifier"\nversion = "0.1.0"\n')
    requirements = project / "requirements.txt"
    requirements.write_text("pytorch-lightning==2.2.0\n")
    config = project / "configs" / "train.yaml"
    config.parent.mkdir()
    uri = open_document(client, config, "trainer:\n  max_epochs: 10\n  precision: bf16-mixed\n")
    await diagnostics_where(client, uri, lambda d: len(d) == 0)

    # The pin moves to Lightning 1.x, which rejects "bf16-mixed": the open config is checked again.
    requirements.write_text("pytorch-lightning==1.9.5\n")
    watched_change(client, requirements)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert found.code == "PL401"
    assert_same_as_check([found], config)

    requirements.write_text("pytorch-lightning==2.2.0\n")
    watched_change(client, requirements)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


async def test_a_changed_deepspeed_json_rechecks_the_config_that_names_it(client: LanguageClient,
                                                                           project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "case"\ndependencies = ["transformers>=4.40"]\n')
    ds_config = project / "configs" / "ds.json"
    ds_config.parent.mkdir()
    ds_config.write_text('{"bf16": {"enabled": true}, "fp16": {"enabled": false}}\n')
    args = project / "args.yaml"
    # per_device_train_batch_size: the evidence that TrainingArguments read this file.
    text = "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed: configs/ds.json\n"
    uri = open_document(client, args, text)
    await diagnostics_where(client, uri, lambda d: len(d) == 0)

    # Someone edits the DeepSpeed JSON to fp16: the arguments that name it now disagree with it.
    ds_config.write_text('{"bf16": {"enabled": false}, "fp16": {"enabled": true}}\n')
    watched_change(client, ds_config)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    assert found.range.start.line == 2
    assert_same_as_check([found], args)

    ds_config.write_text('{"bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}}\n')
    watched_change(client, ds_config)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


async def test_bad_input_never_stops_the_server(client: LanguageClient, project: Path) -> None:
    broken = project / "broken.yaml"
    uri = open_document(client, broken, "trainer:\n  precision: [16\n  max_epochs: 3\n" + TRAINER)
    [parse_error] = await diagnostics_where(client, uri, lambda d: len(d) > 0)
    assert parse_error.code == "PL001"
    assert parse_error.severity == types.DiagnosticSeverity.Error
    assert_same_as_check([parse_error], broken)

    script = project / "broken.py"
    script_uri = open_document(client, script, "import torch\nwith torch.autocast('cuda'):\n  x = (\n")
    [syntax] = await diagnostics_where(client, script_uri, lambda d: len(d) > 0)
    assert syntax.code == "PL001"

    binary = project / "nul.toml"
    binary_uri = open_document(client, binary, "precision = '16'\x00\n")
    [nul] = await diagnostics_where(client, binary_uri, lambda d: len(d) > 0)
    assert "NUL" in nul.message

    deep = project / "deep.json"
    deep_uri = open_document(client, deep, '{"precision": ' + "[" * 50_000 + "]" * 50_000 + "}")
    [too_deep] = await diagnostics_where(client, deep_uri, lambda d: len(d) > 0)
    assert too_deep.code in ("PL001", "PL003")

    # Requests about documents the server never saw, and positions past the end of the text.
    missing = (project / "never-opened.yaml").as_uri()
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=missing), position=types.Position(line=0, character=0)))
    assert nothing is None
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=900, character=900)))
    assert hover is None

    # An edit to a document that was never opened, and a message that is not JSON at all.
    change_document(client, (project / "ghost.yaml").as_uri(), "precision: 16\n", version=2)
    assert client._server is not None and client._server.stdin is not None
    client._server.stdin.write(b"Content-Length: 9\r\n\r\n{not json")
    await client._server.stdin.drain()

    # Still serving: a good file gets its findings.
    good_uri = open_document(client, project / "after.yaml", LEGACY_YAML)
    [found] = await diagnostics_where(client, good_uri, lambda d: len(d) > 0)
    assert found.code == "PL102"


async def test_only_the_newest_version_is_published_when_changes_come_faster_than_checks(
        client: LanguageClient, project: Path) -> None:
    # A long script of training loops, so that each check takes a while (a few hundred milliseconds): the changes
    # below all arrive during the first one.
    loop = CLIP_SCRIPT.split("\n", 1)[1]
    body = CLIP_SCRIPT + "".join(loop.replace("def train(", f"def train_{i}(") for i in range(150))
    path = project / "long.py"
    uri = open_document(client, path, body)
    await diagnostics_where(client, uri, lambda d: len(d) == 151)
    for version in range(2, 8):
        change_document(client, uri, body + f"\n# typed {version}\n", version)
    await diagnostics_where(client, uri, lambda d: client.published[-1].version == 7)  # type: ignore[attr-defined]
    await asyncio.sleep(0.5)  # anything still to come
    versions = [p.version for p in client.published if p.uri == uri][1:]  # type: ignore[attr-defined]
    # The newest version last; versions checked while newer ones waited were skipped or not published.
    assert versions[-1] == 7
    assert versions == sorted(versions)
    assert len(versions) <= 2, versions


async def test_typing_inside_lines_of_a_script_gives_what_check_says_at_each_version(
        client: LanguageClient, project: Path) -> None:
    # The server parses again only the top-level statements a change touched (the line count unchanged): each
    # version's diagnostics, a syntax error included, are those of `check` on that text saved.
    helper = ("\n\ndef evaluate(model, loader):\n    with torch.no_grad():\n"
              "        return [model(x) for x, _ in loader]\n")
    text = CLIP_SCRIPT + helper
    clip = "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
    versions = [
        text.replace(clip, clip.replace("1.0)", "1.0")),  # an open bracket: a syntax error
        text.replace(clip, clip.replace("1.0)", "2.0)")),  # closed again
        text.replace(clip, "        scaler.unscale_(optimizer); " + clip.lstrip()),  # unscaled first: no finding
        text.replace(clip, clip.rstrip("\n") + "  # clip\n").replace("[model(x)", "[model(x).float()"),
        text.replace("def evaluate(model, loader):", "def evaluate(model, loader) -> list:"),
    ]
    path = project / "train.py"
    uri = open_document(client, path, text)
    await diagnostics_where(client, uri, lambda d: len(d) == 1)
    for version, new in enumerate(versions, start=2):
        assert new != text and new.count("\n") == text.count("\n")
        change_document(client, uri, new, version)
        await diagnostics_where(client, uri,
                                lambda d, v=version: client.published[-1].version == v)  # type: ignore[attr-defined]
        path.write_text(new, encoding="utf-8")
        assert_same_as_check(client.diagnostics[uri], path)


async def test_saving_an_import_of_an_in_project_package_applies_its_pins(client: LanguageClient,
                                                                          project: Path) -> None:
    # app/ImageBind keeps its own requirements (torch==1.13.0): they count for the files of app/ once one of them
    # imports it, as read from the disk (project.vendored). Typing the import changes nothing on the disk (and the
    # server does not read app/'s files again at each keystroke); saving it does.
    package = project / "app" / "ImageBind"
    package.mkdir(parents=True)
    (package / "requirements.txt").write_text("torch==1.13.0\n")
    (package / "__init__.py").write_text("")
    text = "import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n"
    path = project / "app" / "train.py"
    uri = open_document(client, path, text)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert found.severity == types.DiagnosticSeverity.Warning
    importing = text.replace("\n\n", "\nfrom ImageBind import models\n", 1)
    change_document(client, uri, importing, 2)
    await diagnostics_where(client, uri, lambda d: client.published[-1].version == 2)  # type: ignore[attr-defined]
    path.write_text(importing, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1
                                      and d[0].severity == types.DiagnosticSeverity.Information)
    assert "does not warn yet" in found.message
    assert_same_as_check([found], path)
