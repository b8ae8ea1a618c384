"""--shapes: model configs as real projects write them, and the static alignment check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precisionlint.advise.probe.shapes import ShapeError, alignment_issues, parse_shapes


def _config(tmp_path: Path, data: object) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_a_llama_style_config(tmp_path: Path) -> None:
    shapes = parse_shapes(_config(tmp_path, {
        "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}))
    assert [(s.name, s.m, s.n, s.k) for s in shapes] == [
        ("attention qkv", 4096, 4096 + 2 * 8 * 128, 4096), ("attention out", 4096, 4096, 4096),
        ("mlp up", 4096, 14336, 4096), ("mlp down", 4096, 4096, 14336), ("lm head", 4096, 128256, 4096)]
    assert alignment_issues(shapes) == []


def test_gpt2_vocabulary_is_flagged_with_the_padding_that_helps(tmp_path: Path) -> None:
    shapes = parse_shapes(_config(tmp_path, {"architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_head": 12,
                                             "n_inner": None, "vocab_size": 50257}))
    assert [s.text for s in shapes][2] == "4096x3072x768"  # n_inner null: 4 x n_embd
    (issue,) = alignment_issues(shapes)
    assert (issue.shape, issue.dimension, issue.value, issue.multiple) == ("lm head", "N", 50257, 8)
    assert "pad to 50304" in issue.consequence and "fp8 refuses it" in issue.consequence


def test_a_padded_embedding_is_the_one_checked(tmp_path: Path) -> None:
    # OLMo pads its output layer (embedding_size 50304) beyond the tokenizer's vocabulary (50257).
    shapes = parse_shapes(_config(tmp_path, {"architectures": ["OLMoForCausalLM"], "d_model": 2048, "n_heads": 16,
                                             "mlp_ratio": 8, "mlp_hidden_size": None, "vocab_size": 50257,
                                             "embedding_size": 50304}))
    assert shapes[-1].text == "4096x50304x2048" and shapes[2].text == "4096x16384x2048"
    assert alignment_issues(shapes) == []


@pytest.mark.parametrize("section", ["text_config", "bert_config", "bert_model_config"])
def test_nested_model_sections(tmp_path: Path, section: str) -> None:
    shapes = parse_shapes(_config(tmp_path, {"name": "x", section: {
        "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
        "vocab_size_or_config_json_file": 30522}}))
    assert [s.name for s in shapes] == ["attention qkv", "attention out", "mlp up", "mlp down", "lm head"]
    assert [(a.shape, a.value, a.multiple) for a in alignment_issues(shapes)] == [("lm head", 30522, 8)]


def test_a_model_without_an_output_projection_has_no_lm_head(tmp_path: Path) -> None:
    shapes = parse_shapes(_config(tmp_path, {"architectures": ["CLIPModel"], "text_config": {
        "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 49408}}))
    assert "lm head" not in [s.name for s in shapes]


def test_small_dimensions_are_not_told_to_pad_to_64() -> None:
    assert alignment_issues(parse_shapes("4096x32x48")) == []
    assert [(a.dimension, a.multiple) for a in alignment_issues(parse_shapes("4096x96x4104"))] == [
        ("N", 64), ("K", 16)]


@pytest.mark.parametrize("data,message", [
    ([1, 2], "not a model config"),
    ({"num_layers": 2}, "no hidden_size"),
    ({"hidden_size": 64}, "no heads, intermediate_size or vocab_size"),
])
def test_configs_that_are_not_model_configs(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        parse_shapes(_config(tmp_path, data))
