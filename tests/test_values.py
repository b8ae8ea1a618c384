"""The value layer: candidate values of an expression with where each was written, and findings reported there."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from precisionlint.core.model import Document
from precisionlint.values.candidate import Candidates
from precisionlint.values.settings import document_finder


def _candidates(source: str, expression_line: int) -> Candidates:
    """The candidates of the value of the last keyword of the call on `expression_line` (1-based)."""
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    document = Document("t.py", text, "python", tree=tree)
    finder = document_finder(document)
    assert finder is not None
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == expression_line
                and n.keywords)
    node = call.keywords[-1].value
    return finder.candidates(node, finder.scope_at(node))


def test_conditional_arms_carry_their_condition() -> None:
    found = _candidates("""\
        import lightning as L
        L.Trainer(precision=16 if args.fp16 else "bf16" if args.bf16 else 32)
        """, 2)
    assert [(c.value, c.kind, c.conditions, c.every_path) for c in found.items] == [
        (16, "conditional arm", ("`args.fp16`",), False),
        ("bf16", "conditional arm", ("not `args.fp16`", "`args.bf16`"), False),
        (32, "conditional arm", ("not `args.fp16`", "not `args.bf16`"), False),
    ]
    assert found.complete


def test_argparse_default_through_type_and_store_true() -> None:
    found = _candidates("""\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", type=int, default="16")
        parser.add_argument("--fp16", action="store_true")
        args = parser.parse_args()
        f(precision=args.precision, fp16=args.fp16)
        """, 6)
    assert [(c.value, c.kind) for c in found.items] == [(False, "argparse default")]
    precision = _candidates("""\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", type=int, default="16")
        args = parser.parse_args()
        f(precision=args.precision)
        """, 5)
    # argparse converts a string default through type=
    assert [(c.value, c.kind, c.every_path) for c in precision.items] == [(16, "argparse default", False)]
    assert not precision.complete  # the launch may pass any value


def test_reaching_assignments_and_dead_branches() -> None:
    found = _candidates("""\
        DEBUG = False
        def build(flag):
            value = "a"
            if DEBUG:
                value = "debug"
            value = "b" if flag else value
            return f(x=value)
        """, 7)
    assert [c.value for c in found.items] == ["b", "a"]


def test_table_lookup_through_a_helper_and_its_parameter() -> None:
    found = _candidates("""\
        import torch
        DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
        def dtype_of(name):
            return DTYPES[name]
        def pick():
            return "bf16"
        f(x=dtype_of(pick()))
        """, 7)
    # the key is a parameter, which callers elsewhere may pass: every entry, none on every path
    assert [(c.value.name, c.kind, c.every_path) for c in found.items] == [
        ("float16", "table entry", False), ("bfloat16", "table entry", False)]
    assert found.items[1].conditions == ("`name` is 'bf16'",)


def test_a_name_bound_to_something_else_is_not_an_option() -> None:
    found = _candidates("""\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="16")
        cfg = load_config()
        f(precision=cfg.precision)
        """, 5)
    assert found.items == ()


def test_reached_finding_names_its_origin_and_relates_the_call(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import argparse
        from lightning import Trainer
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="fp16")
        args = parser.parse_args()
        trainer = Trainer(precision=args.precision)
        """))
    result = subprocess.run([sys.executable, "-m", "precisionlint", "check", "--output-format", "json",
                             "--select", "PL101", str(script)], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    (finding,) = json.loads(result.stdout)
    # where the user wrote the value, at most a warning (the launch may override a default), no fix
    assert (finding["line"], finding["column"], finding["severity"]) == (4, 44, "warning")
    assert "the default of a command-line option, when `--precision` is not given" in finding["message"]
    assert finding["fix"] is None
    (related,) = finding["related"]
    assert (related["line"], related["column"]) == (6, 29)
    assert related["message"] == "read by `Trainer(precision=...)` at line 6"


def test_strings_built_from_candidates() -> None:
    found = _candidates("""\
        bits = "16" if half else "32"
        f(precision=f"{bits}-mixed")
        """, 2)
    assert [(c.value, c.conditions, c.every_path) for c in found.items] == [
        ("16-mixed", ("`half`",), False), ("32-mixed", ("not `half`",), False)]
    joined = _candidates("""\
        PREFIX = "bf16"
        f(precision=PREFIX + "-true")
        """, 2)
    assert [(c.value, c.every_path) for c in joined.items] == [("bf16-true", True)]


def test_options_through_the_scripts_own_parse_args_helper() -> None:
    found = _candidates("""\
        import argparse
        def parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])
            return parser.parse_args()
        def main():
            args = parse_args()
            f(mixed_precision=args.mixed_precision)
        """, 8)
    assert [(c.value, c.kind) for c in found.items] == [
        ("fp16", "argparse default"), ("no", "argparse choice"), ("fp16", "argparse choice"),
        ("bf16", "argparse choice")]
    assert found.complete


def test_the_ecosystem_report_counts_findings_reached_through_a_value(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    repo = tmp_path / "eco" / "owner__repo"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text(textwrap.dedent("""\
        import argparse
        import torch
        from accelerate import Accelerator
        from lightning import Trainer
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="16")
        args = parser.parse_args()
        trainer = Trainer(precision=args.precision)
        accelerator = Accelerator(mixed_precision="fp16")
        for batch in []:
            accelerator.backward(batch)
            torch.nn.utils.clip_grad_norm_([], 1.0)
        """))
    wrapper = tmp_path / "precisionlint"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{root}" exec "{sys.executable}" -m precisionlint "$@"\n')
    wrapper.chmod(0o755)
    result = subprocess.run([sys.executable, str(root / "benchmarks" / "ecosystem.py"), str(tmp_path / "eco"),
                             "--precisionlint", str(wrapper), "--no-cache"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    counts = result.stdout.split("Findings reached through a value (2), by kind:")[1].split("\n\n")[0]
    assert sorted(line.split()[0] for line in counts.strip().splitlines()) == ["argparse", "framework"]


def test_a_config_reader_hands_in_the_key_of_a_loaded_file() -> None:
    """The API a reader of config files uses: a candidate with `path`, `key_path` and `span`, no node."""
    from precisionlint.core.model import Span
    from precisionlint.values.candidate import CONFIG_KEY, Candidate
    from precisionlint.values.settings import reached_settings

    text = textwrap.dedent("""\
        import yaml
        from lightning import Trainer
        cfg = yaml.safe_load(open("train.yaml"))
        trainer = Trainer(precision=cfg["trainer"]["precision"])
        """)
    from precisionlint.frameworks.python_calls import python_settings

    document = Document("train.py", text, "python", tree=ast.parse(text))
    python_settings(document)
    finder = document_finder(document)
    assert finder is not None
    key = Span(2, 14, 2, 16)
    finder.config_readers.append(lambda expr, scope: Candidates(
        (Candidate(16, None, CONFIG_KEY, (), True, "train.yaml", ("trainer", "precision"), key),), True))
    (setting,) = reached_settings(document)
    assert (setting.value, setting.span.line, setting.origin.every_path) == (16, 4, True)
    assert setting.origin.note() == "a key of a config file (`trainer.precision` of train.yaml)"
    assert (setting.origin.call.path, setting.origin.call.span) == ("train.yaml", key)
