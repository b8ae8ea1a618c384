"""Linked files in the language server: when a file another one reads changes, on the disk or as an unsaved
buffer, the open documents that read it are checked again (and only those), from the buffers' text."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")

from pytest_lsp import LanguageClient  # noqa: E402

from tests.lsp_session import (  # noqa: E402
    LEGACY_YAML,
    assert_same_as_check,
    change_document,
    client,
    close_document,
    diagnostics_where,
    open_document,
    project,
    quiet,
    watched_change,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")
__all__ = ["client", "project"]  # fixtures, used by name

BF16_DS = '{"bf16": {"enabled": true}, "fp16": {"enabled": false}}\n'
FP16_DS = '{"bf16": {"enabled": false}, "fp16": {"enabled": true}}\n'
# per_device_train_batch_size: the evidence that TrainingArguments read this file.
ARGUMENTS = "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed: configs/ds.json\n"


def _deepspeed_project(project: Path) -> Path:
    (project / "pyproject.toml").write_text('[project]\nname = "case"\ndependencies = ["transformers>=4.40"]\n')
    ds_config = project / "configs" / "ds.json"
    ds_config.parent.mkdir()
    ds_config.write_text(BF16_DS)
    return ds_config


async def test_an_unsaved_deepspeed_buffer_rechecks_the_config_that_names_it(client: LanguageClient,
                                                                              project: Path) -> None:
    ds_config = _deepspeed_project(project)
    args = project / "args.yaml"
    args_uri = open_document(client, args, ARGUMENTS)
    await diagnostics_where(client, args_uri, lambda d: len(d) == 0)
    unrelated_uri = open_document(client, project / "lightning.yaml", LEGACY_YAML)
    unrelated = await diagnostics_where(client, unrelated_uri, lambda d: len(d) == 1)

    # The DeepSpeed JSON is opened and edited to fp16, never saved: the arguments now disagree with the buffer.
    ds_uri = open_document(client, ds_config, BF16_DS, save=False)
    change_document(client, ds_uri, FP16_DS, version=2)
    [found] = await diagnostics_where(client, args_uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    assert found.range.start.line == 2
    assert ds_config.read_text() == BF16_DS  # the disk was not touched
    # What check says once the buffer is saved.
    ds_config.write_text(FP16_DS)
    assert_same_as_check([found], args)
    ds_config.write_text(BF16_DS)

    # A file that reads nothing of it was not checked again: its diagnostics were not even sent again.
    await quiet(client)
    assert client.diagnostics[unrelated_uri] is unrelated

    # Closed without saving: the disk's bf16 applies again.
    close_document(client, ds_uri)
    assert list(await diagnostics_where(client, args_uri, lambda d: len(d) == 0)) == []


async def test_typing_in_the_linked_buffer_is_followed_to_the_last_version(client: LanguageClient,
                                                                           project: Path) -> None:
    ds_config = _deepspeed_project(project)
    args_uri = open_document(client, project / "args.yaml", ARGUMENTS)
    await diagnostics_where(client, args_uri, lambda d: len(d) == 0)
    ds_uri = open_document(client, ds_config, BF16_DS, save=False)
    texts = [FP16_DS, BF16_DS, FP16_DS, BF16_DS, FP16_DS]
    for version, text in enumerate(texts, start=2):
        change_document(client, ds_uri, text, version)
    [found] = await diagnostics_where(client, args_uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    change_document(client, ds_uri, '{"bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}}\n', 10)
    assert list(await diagnostics_where(client, args_uri, lambda d: len(d) == 0)) == []


async def test_an_unsaved_pin_file_rechecks_the_configs_under_it(client: LanguageClient, project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "classifier"\nversion = "0.1.0"\n')
    requirements = project / "requirements.txt"
    requirements.write_text("pytorch-lightning==2.2.0\n")
    config = project / "configs" / "train.yaml"
    config.parent.mkdir()
    uri = open_document(client, config, "trainer:\n  max_epochs: 10\n  precision: bf16-mixed\n")
    await diagnostics_where(client, uri, lambda d: len(d) == 0)

    # The pin is edited to Lightning 1.x, which rejects "bf16-mixed", in the editor, unsaved.
    pins_uri = open_document(client, requirements, "pytorch-lightning==2.2.0\n", save=False)
    change_document(client, pins_uri, "pytorch-lightning==1.9.5\n", version=2)
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert found.code == "PL401"
    requirements.write_text("pytorch-lightning==1.9.5\n")
    assert_same_as_check([found], config)
    requirements.write_text("pytorch-lightning==2.2.0\n")

    close_document(client, pins_uri)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []


async def test_a_deepspeed_json_created_later_is_picked_up(client: LanguageClient, project: Path) -> None:
    ds_config = _deepspeed_project(project)
    ds_config.unlink()  # named by the arguments, but not there yet: no link, no finding
    args_uri = open_document(client, project / "args.yaml", ARGUMENTS)
    await diagnostics_where(client, args_uri, lambda d: len(d) == 0)
    ds_config.write_text(FP16_DS)
    from lsprotocol import types

    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=ds_config.as_uri(), type=types.FileChangeType.Created)]))
    [found] = await diagnostics_where(client, args_uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    ds_config.write_text(BF16_DS)
    watched_change(client, ds_config)
    assert list(await diagnostics_where(client, args_uri, lambda d: len(d) == 0)) == []


async def test_a_config_a_script_loads_is_followed_in_its_unsaved_buffer(client: LanguageClient,
                                                                         project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "case"\ndependencies = ["lightning>=2.2"]\n')
    fp16 = '{"zero_optimization": {"stage": 3}, "fp16": {"enabled": true}, "bf16": {"enabled": false}}\n'
    bf16 = '{"zero_optimization": {"stage": 3}, "fp16": {"enabled": false}, "bf16": {"enabled": true}}\n'
    ds_config = project / "ds_config.json"
    ds_config.write_text(fp16)
    script = project / "train.py"
    text = ("import json\n\nimport lightning as L\nfrom lightning.pytorch.strategies import DeepSpeedStrategy\n\n"
            'with open("ds_config.json") as handle:\n    ds_config = json.load(handle)\n'
            "strategy = DeepSpeedStrategy(stage=3, config=ds_config)\n"
            'trainer = L.Trainer(accelerator="gpu", precision="16-mixed", strategy=strategy)\n')
    script_uri = open_document(client, script, text)
    await diagnostics_where(client, script_uri, lambda d: len(d) == 0)

    # The JSON the script loads is switched to bf16 in the editor, unsaved: the script's 16-mixed disagrees.
    ds_uri = open_document(client, ds_config, fp16, save=False)
    change_document(client, ds_uri, bf16, version=2)
    [found] = await diagnostics_where(client, script_uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    ds_config.write_text(bf16)
    assert_same_as_check([found], script)
    ds_config.write_text(fp16)
    close_document(client, ds_uri)
    assert list(await diagnostics_where(client, script_uri, lambda d: len(d) == 0)) == []


async def test_a_hydra_composition_is_followed_to_the_deepspeed_json_it_reaches(client: LanguageClient,
                                                                                project: Path) -> None:
    import shutil

    case = Path(__file__).resolve().parent.parent / "rules" / "cross-file-precision-conflict" / "bad_lightning_hydra"
    shutil.copytree(case, project, dirs_exist_ok=True)
    config = project / "configs" / "train_bf16_true.yaml"
    uri = open_document(client, config, config.read_text())
    [found] = await diagnostics_where(client, uri, lambda d: len(d) == 1)
    assert found.code == "PL402"
    assert_same_as_check([found], config, cwd=project)  # the server runs from the workspace root

    # train_bf16_true.yaml -> trainer/deepspeed.yaml -> ds_fp16.json: the JSON, two links away, is switched to
    # bf16 in the editor (unsaved), and the composed config agrees with it again.
    ds_config = project / "configs" / "ds_fp16.json"
    ds_uri = open_document(client, ds_config, ds_config.read_text(), save=False)
    change_document(client, ds_uri, '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}\n', 2)
    assert list(await diagnostics_where(client, uri, lambda d: len(d) == 0)) == []
