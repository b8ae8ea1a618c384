"""Loaders: settings and spans from TOML, YAML, JSON and Python, on real files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from precisionlint.core.model import UNRESOLVED, Confidence, Span
from precisionlint.frameworks.documents import load_document
from precisionlint.sources import LimitError, SourceError


def settings(text: str, fmt: str):
    return {(s.scope, s.name): s for s in load_document(f"x.{fmt}", text, fmt).settings}  # type: ignore[arg-type]


def test_toml_trainer_config_positions() -> None:
    found = settings('[trainer_config]\nprecision = "16-mixed"  # c\ntf32_matmul_precision = "high"\n', "toml")
    precision = found[("trainer_config", "precision")]
    assert precision.value == "16-mixed"
    assert precision.span == Span(2, 13, 2, 23)
    assert precision.key_span == Span(2, 1, 2, 10)
    tf32 = found[("trainer_config", "tf32_matmul_precision")]
    assert tf32.span.line == 3 and tf32.span.column == 25


def test_toml_dotted_keys_inline_tables_and_arrays_of_tables() -> None:
    text = (
        'title = "x"\n'
        'arr = [1, [2, 3], "a]b"]\n'
        '[[runs]]\nname = "a"\n[[runs]]\nname = "b"\n'
        'trainer_config = { precision = "bf16", tf32_matmul_precision = "high" }\n'
    )
    # trainer_config is inside the second [[runs]] table here, so it is not the top-level table: nothing.
    assert settings(text, "toml") == {}
    text = 'trainer_config.precision = "bf16"\n'
    found = settings(text, "toml")
    assert found[("trainer_config", "precision")].span == Span(1, 28, 1, 34)


def test_toml_inline_table_value_positions() -> None:
    text = 'trainer_config = { precision = "bf16", tf32_matmul_precision = "high" }\n'
    found = settings(text, "toml")
    assert found[("trainer_config", "precision")].span.column == 32
    assert found[("trainer_config", "tf32_matmul_precision")].span.column == 64
    assert found[("trainer_config", "precision")].entry is None  # inside an inline table: no line removal


def test_toml_multiline_strings_do_not_confuse_the_scanner() -> None:
    text = 'doc = """\n[trainer_config]\nprecision = 16\n"""\n[trainer_config]\nprecision = "16"\n'
    found = settings(text, "toml")
    assert found[("trainer_config", "precision")].span.line == 6


def test_yaml_lightning_trainer_and_nested_trainer() -> None:
    found = settings("model:\n  x: 1\ntrainer:\n  precision: bf16  # legacy\n", "yaml")
    assert found[("trainer", "precision")].span == Span(4, 14, 4, 18)
    nested = settings("experiment:\n  trainer:\n    precision: '16-mixed'\n    devices: 1\n", "yaml")
    assert nested[("experiment.trainer", "precision")].span == Span(3, 16, 3, 26)


def test_yaml_top_level_precision_needs_lightning_evidence() -> None:
    assert settings("precision: fp16\nbatch: 3\n", "yaml") == {}
    # Neither a Lightning-looking value nor a Trainer-looking sibling names the reader.
    assert settings("precision: fp16\nmax_epochs: 3\n", "yaml") == {}
    assert settings("precision: 16-mixed\n", "yaml") == {}
    assert settings("precision: amp_bf16\ncallbacks: {}\nlogger: x\ndevices: 8\n", "yaml") == {}
    found = settings("_target_: lightning.pytorch.Trainer\nprecision: 16-mixed\n", "yaml")
    assert found[("lightning", "precision")].confidence == Confidence.CERTAIN


def test_yaml_multiple_documents_and_flow_mappings() -> None:
    found = settings("---\na: 1\n---\ntrainer: {precision: 16, devices: 2}\n", "yaml")
    setting = found[("trainer", "precision")]
    assert setting.value == 16 and setting.span == Span(4, 22, 4, 24)


def test_yaml_python_tags_execute_nothing(tmp_path) -> None:
    sentinel = tmp_path / "sentinel"
    text = f"trainer:\n  precision: !!python/object/apply:os.system ['touch {sentinel}']\n"
    load_document("x.yaml", text, "yaml")
    assert not sentinel.exists()


def test_yaml_duplicate_keys_load_last_wins_like_pyyaml() -> None:
    text = "seed_everything: 1\ntrainer:\n  precision: 16\n  devices: 1\n  precision: 32\n"
    document = load_document("x.yaml", text, "yaml")
    [setting] = [s for s in document.settings if s.name == "precision"]
    assert setting.value == 32 and setting.span.line == 5
    assert document.duplicate_keys == [("precision", ((3, 3), (5, 3)))]


@pytest.mark.parametrize("key", ["p", "precision"])
def test_yaml_repeated_merge_keys_apply_every_merge_like_pyyaml(key: str) -> None:
    """PyYAML up to 6.0.3 (and the merge spec inside one list): a later `<<` overrides an earlier one, and in
    `<<: [*a, *b]` the first map wins. The expected mapping is written out rather than asked of the installed
    PyYAML: 6.0.4 decides by the identity of the key's string (yaml/pyyaml#953), so a one-letter key (interned by
    CPython) loads first-wins there and a longer one last-wins; which copy of PyYAML a project's training job
    loads its config with is not known here, and duplicate-key reports merges that disagree either way."""
    text = (f"a: &a {{{key}: 1, q: 1}}\nb: &b {{{key}: 2, r: 2}}\nc: &c {{{key}: 3, s: 3}}\n"
            "m:\n  <<: [*a, *b]\n  <<: *c\n  t: 4\n")
    document = load_document("x.yaml", text, "yaml")
    assert document.duplicate_keys == [("<<", ((5, 3), (6, 3)))]
    from precisionlint.sources.yaml_source import _yaml

    assert dict(_yaml().load(text)["m"]) == {key: 3, "q": 1, "r": 2, "s": 3, "t": 4}
    one_list = f"a: &a {{{key}: 1}}\nb: &b {{{key}: 2}}\nm:\n  <<: [*a, *b]\n"
    assert dict(_yaml().load(one_list)["m"]) == {key: 1}


def test_json_deepspeed_blocks() -> None:
    text = '{\n  "fp16": {"enabled": "auto", "loss_scale": 0},\n  "bfloat16": {"enabled": false}\n}\n'
    found = settings(text, "json")
    assert found[("deepspeed", "fp16")].value == "auto"
    assert found[("deepspeed", "bf16")].span == Span(3, 27, 3, 32)
    assert found[("deepspeed", "loss_scale")].value == 0


def test_json_hf_training_arguments_with_embedded_deepspeed() -> None:
    text = ('{"output_dir": "o", "per_device_train_batch_size": 2, "fp16": true, '
            '"deepspeed": {"fp16": {"enabled": "auto"}}}')
    found = settings(text, "json")
    assert found[("hf", "fp16")].value is True
    assert found[("hf.deepspeed", "fp16")].value == "auto"


def test_json_errors_have_positions() -> None:
    with pytest.raises(SourceError) as info:
        load_document("x.json", '{\n  "a": 1,\n}', "json")
    assert (info.value.line, info.value.column) == (3, 1)


def test_json_stream_of_records_is_data_not_a_broken_config() -> None:
    """CodeGeeX's MindSpore tuning banks hold pretty-printed records one after another ("A_dtype": "float16"):
    not a config, skipped instead of a parse error. Two objects may be a config pasted twice: still an error."""
    from precisionlint.sources import NotCheckable

    record = '{\n  "shape": {"A_dtype": "float16", "B_shape": [1, 16]},\n  "cost_time": 4007\n}\n'
    with pytest.raises(NotCheckable):
        load_document("bank.json", record * 3, "json")
    with pytest.raises(SourceError) as info:
        load_document("ds.json", record * 2, "json")
    assert not isinstance(info.value, NotCheckable) and info.value.line == 5
    with pytest.raises(SourceError) as info:
        load_document("ds.json", record * 2 + "trailing", "json")
    assert not isinstance(info.value, NotCheckable)


def test_json_depth_limit() -> None:
    with pytest.raises(LimitError):
        load_document("x.json", '{"fp16": ' + "[" * 500 + "]" * 500 + "}", "json")


def test_python_keyword_arguments_resolve_through_imports() -> None:
    text = (
        "import pytorch_lightning as pl\n"
        "from transformers import TrainingArguments as TA\n"
        "from accelerate import Accelerator\n"
        "import torch\n"
        "PRECISION = 'bf16-mixed'\n"
        "pl.Trainer(precision=PRECISION)\n"
        "TA(output_dir='o', fp16=True, bf16=flag)\n"
        "Accelerator(mixed_precision='fp16')\n"
        "torch.set_float32_matmul_precision(precision='high')\n"
    )
    found = {s.name: s for s in load_document("t.py", text, "python").settings}
    assert found["precision"].value == "bf16-mixed"
    assert found["precision"].span == Span(6, 22, 6, 31)
    assert found["fp16"].value is True and found["bf16"].value is UNRESOLVED
    assert found["mixed_precision"].value == "fp16"
    assert found["tf32_matmul_precision"].value == "high"


def test_python_columns_count_characters_not_bytes() -> None:
    text = "import lightning as L\nx = 'é'; L.Trainer(precision='16')\n"
    (setting,) = load_document("t.py", text, "python").settings
    assert setting.span.column == text.splitlines()[1].index("'16'") + 1


def test_python_unknown_trainer_is_not_lightning() -> None:
    text = "from mylib import Trainer\nTrainer(precision='fp16')\n"
    assert load_document("t.py", text, "python").settings == []


@pytest.mark.parametrize("text", [
    "1", "-2.5", "+3", "'a'", "b'x'", "None", "True", "(1, 'a', [2, {3: 4}])", "{1, 2}", "set()", "{}",
    "1 + 2j", "-1 - 2j", "{'a': (1, -2)}", "[*a]", "{**d}", "x", "f(1)", "1 + 2", "2j + 1", "- 'a'", "set(1)",
    "(1, x)", "not True", "...",
])
def test_the_cycle_free_literal_eval_gives_what_ast_literal_eval_gives(text: str) -> None:
    import ast

    from precisionlint.sources.literal import literal_eval

    def outcome(evaluate):  # type: ignore[no-untyped-def]
        try:
            return "value", repr(evaluate(ast.parse(text, mode="eval").body))
        except ValueError:
            return "error", None

    assert outcome(literal_eval) == outcome(ast.literal_eval)


@hypothesis_settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab\n\r\u2028é", max_size=40))
def test_line_starts_are_the_offsets_after_each_newline(text: str) -> None:
    """core.lines.line_starts: 0, then the offset after every `\\n` (a lone CR or U+2028 ends no line there)."""
    from precisionlint.core.lines import line_starts

    assert line_starts(text) == [0, *(offset + 1 for offset, character in enumerate(text) if character == "\n")]
