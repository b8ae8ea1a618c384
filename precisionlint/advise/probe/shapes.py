"""The user's own matmul shapes (`advise --shapes`) and the static alignment check on them.

Shapes come from a Hugging Face `config.json` (the projections of one transformer layer and the LM head, for
DEFAULT_TOKENS tokens per step) or from explicit MxNxK triples. The alignment check needs no GPU: tensor cores
take 16-bit operands in multiples of 8 elements (16 bytes), fp8's scaled matmul refuses dimensions that are not
multiples of 16, and dimensions off the 64 grid leave partly-filled tiles (GPT-2's vocabulary of 50257 runs
faster padded to 50304).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from precisionlint.advise.probe.results import AlignmentIssue

DEFAULT_TOKENS = 4096  # tokens per step (batch x sequence) for shapes derived from a model config
_TRIPLE = re.compile(r"^\s*(\d+)\s*[xX*]\s*(\d+)\s*[xX*]\s*(\d+)\s*$")


class ShapeError(ValueError):
    """--shapes names no readable config and no MxNxK triple. The message says which, for the user."""


@dataclass(frozen=True)
class Shape:
    """An (M, K) x (K, N) matmul."""

    name: str
    m: int
    n: int
    k: int

    @property
    def text(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


def parse_shapes(spec: str, tokens: int | None = None) -> list[Shape]:
    """Shapes from a config.json path or a comma-separated list of MxNxK triples. Raises ShapeError."""
    spec = spec.strip()
    if not spec:
        raise ShapeError("--shapes is empty: give a model's config.json or MxNxK (e.g. 4096x14336x4096)")
    if spec.lower().endswith(".json") or Path(spec).is_file():
        return shapes_from_config(spec, tokens)
    shapes = []
    for part in spec.split(","):
        match = _TRIPLE.match(part)
        if match is None:
            raise ShapeError(f"--shapes: {part.strip()!r} is neither MxNxK (e.g. 4096x14336x4096) nor a config.json")
        m, n, k = (int(g) for g in match.groups())
        if min(m, n, k) < 1:
            raise ShapeError(f"--shapes: {part.strip()!r} has a zero dimension")
        shapes.append(Shape(f"{m}x{n}x{k}", m, n, k))
    return shapes


_HIDDEN = ("hidden_size", "n_embd", "d_model", "dim")
# Sections that hold a language model's figures inside a larger config: multimodal models (text_config), BERT
# training configs (bert_config, bert_model_config), and wrappers (model, model_config).
_SECTIONS = ("text_config", "language_config", "llm_config", "model_config", "model", "bert_config",
             "bert_model_config")


def _model_section(config: dict[str, Any]) -> dict[str, Any] | None:
    if _first(config, *_HIDDEN) is not None:
        return config
    for name in _SECTIONS:
        section = config.get(name)
        if isinstance(section, dict) and _first(section, *_HIDDEN) is not None:
            return section
    return None


def _has_lm_head(config: dict[str, Any]) -> bool:
    """Whether the model projects onto the vocabulary (a causal or masked language model). Unknown: yes.
    A CLIPModel or a BertModel embeds tokens (a lookup, not a matmul) and has no such projection."""
    architectures = config.get("architectures")
    if not isinstance(architectures, list) or not architectures:
        return True
    heads = ("LM", "LMHeadModel", "ForCausalLM", "ForMaskedLM", "ForPreTraining", "ForConditionalGeneration")
    return any(isinstance(a, str) and a.endswith(heads) for a in architectures)


def _first(config: dict[str, Any], *names: str) -> Any:
    for name in names:
        value = config.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def shapes_from_config(path: str, tokens: int | None = None) -> list[Shape]:
    """The matmuls of one transformer layer and the LM head for `tokens` tokens per step (default
    DEFAULT_TOKENS), from a Hugging Face config.json."""
    tokens = tokens or DEFAULT_TOKENS
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except OSError as exc:
        raise ShapeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", 1)
        column = getattr(exc, "colno", 1)
        raise ShapeError(f"{path}:{line}:{column}: not valid JSON") from None
    if not isinstance(config, dict):
        raise ShapeError(f"{path}: not a model config (a JSON object with hidden_size)")
    top = config
    config = _model_section(config)
    if config is None:
        raise ShapeError(f"{path}: no hidden_size (or n_embd / d_model) in this config")
    hidden = _first(config, *_HIDDEN)
    heads = _first(config, "num_attention_heads", "n_head", "num_heads", "n_heads")
    head_dim = _first(config, "head_dim", "d_kv") or (hidden // heads if heads else None)
    kv_heads = _first(config, "num_key_value_heads", "n_kv_heads", "num_kv_heads") or heads
    intermediate = _first(config, "intermediate_size", "n_inner", "ffn_dim", "d_ff", "ffn_hidden_size",
                          "mlp_hidden_size")
    if intermediate is None and isinstance(config.get("mlp_ratio"), (int, float)) and config["mlp_ratio"] > 0:
        intermediate = int(config["mlp_ratio"] * hidden)  # OLMo
    elif intermediate is None and "n_embd" in config:
        intermediate = 4 * hidden  # GPT-2: n_inner null means 4 x n_embd
    # The vocabulary the output layer really has: models that pad it say so (OLMo's embedding_size 50304 for
    # a tokenizer of 50257), and the padded figure is the one to check.
    vocab = _first(config, "padded_vocab_size", "embedding_size", "vocab_size", "vocab_size_or_config_json_file")
    if not _has_lm_head(top):
        vocab = None
    shapes = []
    if heads and head_dim:
        q = heads * head_dim
        shapes.append(Shape("attention qkv", tokens, q + 2 * kv_heads * head_dim, hidden))
        shapes.append(Shape("attention out", tokens, hidden, q))
    if intermediate:
        shapes.append(Shape("mlp up", tokens, intermediate, hidden))
        shapes.append(Shape("mlp down", tokens, hidden, intermediate))
    if vocab:
        shapes.append(Shape("lm head", tokens, vocab, hidden))
    if not shapes:
        raise ShapeError(f"{path}: found hidden_size but no heads, intermediate_size or vocab_size")
    return shapes


def alignment_issues(shapes: list[Shape]) -> list[AlignmentIssue]:
    """The worst alignment problem of each dimension of each shape (none for a well-aligned one)."""
    issues = []
    for shape in shapes:
        for dimension, value in (("M", shape.m), ("N", shape.n), ("K", shape.k)):
            if value % 8:
                issues.append(AlignmentIssue(
                    shape.name, dimension, value, 8, ("bf16", "fp16", "fp8"),
                    f"not a multiple of 8: 16-bit tensor-core kernels need 16-byte aligned rows and fall back to "
                    f"slower ones, and fp8 refuses it; pad to {_round_up(value, 64)}"))
            elif value % 16:
                issues.append(AlignmentIssue(
                    shape.name, dimension, value, 16, ("fp8",),
                    f"not a multiple of 16: the fp8 scaled matmul refuses it; pad to {_round_up(value, 64)}"))
            elif value % 64 and value > 64:  # a dimension below 64 fills one tile whatever it is
                issues.append(AlignmentIssue(
                    shape.name, dimension, value, 64, ("bf16", "fp16", "fp8"),
                    f"not a multiple of 64: the last tile is partly empty; padding to {_round_up(value, 64)} "
                    "usually runs faster"))
    return issues


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def fp8_ready(shape: Shape) -> bool:
    return not (shape.m % 16 or shape.n % 16 or shape.k % 16)
