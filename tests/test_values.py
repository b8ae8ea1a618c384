"""The value layer: candidate values of an expression with where each was written, and findings reported there."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import time
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
    (repo / "pyproject.toml").write_text("[project]\nname = 'repo'\n")
    # every launch line passes --precision: the default gives way to the launched value, which Lightning refuses
    (repo / "run.sh").write_text("python train.py --precision fp16\n")
    wrapper = tmp_path / "precisionlint"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{root}" exec "{sys.executable}" -m precisionlint "$@"\n')
    wrapper.chmod(0o755)
    result = subprocess.run([sys.executable, str(root / "benchmarks" / "ecosystem.py"), str(tmp_path / "eco"),
                             "--precisionlint", str(wrapper), "--no-cache"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    counts = result.stdout.split("Findings reached through a value (2), by kind:")[1].split("\n\n")[0]
    assert sorted(line.split()[0] for line in counts.strip().splitlines()) == ["framework", "launch"]


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


def _project_candidates(tmp_path: Path, script: str, launchers: dict[str, str], line: int) -> Candidates:
    """The candidates of the last keyword of the call on `line` of train.py, in a project with launch scripts."""
    from precisionlint.project.model import current

    current().forget()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(script))
    for name, text in launchers.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    text = path.read_text()
    tree = ast.parse(text)
    document = Document(str(path), text, "python", tree=tree)
    from precisionlint.engine.check import launch_lines_of

    document.launch_lines = launch_lines_of  # as the engine does for a script it loads
    finder = document_finder(document)
    assert finder is not None
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line and n.keywords)
    node = call.keywords[-1].value
    found = finder.candidates(node, finder.scope_at(node))
    current().forget()
    return found


_ARGPARSE_SCRIPT = """\
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", "-p", default="fp16")
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()
    f(precision=args.precision)
    g(amp=args.amp)
    """


def test_a_default_every_launch_line_overrides_gives_way_to_the_launched_values(tmp_path: Path) -> None:
    found = _project_candidates(tmp_path, _ARGPARSE_SCRIPT, {
        "scripts/a.sh": "torchrun --nproc_per_node 8 train.py --precision bf16-mixed --amp\n",
        "scripts/b.sh": "CUDA_VISIBLE_DEVICES=0 python train.py -p=16-mixed\n"
                        "python train.py --precision 32 --precision=$PREC\n",
    }, 6)
    # the default is gone; each readable value is where the launch line writes it; `$PREC` is unknown
    assert [(c.value, c.kind, os.path.relpath(c.path, tmp_path), c.key_path, c.span.line)
            for c in found.items] == [("bf16-mixed", "launch flag", "scripts/a.sh", ("--precision",), 1),
                                      ("16-mixed", "launch flag", "scripts/b.sh", ("-p",), 1)]
    assert not found.complete
    assert all(not c.every_path for c in found.items)
    # store_true: a launch line that gives the flag sets it; one that does not leaves the default (False)
    (tmp_path / "amp").mkdir()
    amp = _project_candidates(tmp_path / "amp", _ARGPARSE_SCRIPT, {
        "a.sh": "python train.py --amp\n", "b.sh": "python train.py --precision bf16\n"}, 7)
    assert sorted((c.value, c.kind) for c in amp.items) == [(False, "argparse default"), (True, "launch flag")]


def test_a_default_stays_where_a_launch_line_leaves_it_or_no_launch_line_exists(tmp_path: Path) -> None:
    found = _project_candidates(tmp_path, _ARGPARSE_SCRIPT, {
        "run.sh": 'python train.py --precision bf16-mixed\npython train.py "$@"\n'}, 6)
    assert sorted((c.value, c.kind) for c in found.items) == [
        ("bf16-mixed", "launch flag"), ("fp16", "argparse default")]
    (tmp_path / "alone").mkdir()
    alone = _project_candidates(tmp_path / "alone", _ARGPARSE_SCRIPT, {}, 6)
    assert [(c.value, c.kind) for c in alone.items] == [("fp16", "argparse default")]
    # a line that starts another script, or a value argparse refuses (`type=int`), overrides nothing here
    (tmp_path / "typed").mkdir()
    typed = _project_candidates(tmp_path / "typed", """\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--bits", type=int, default=16, choices=[16, 32])
        args = parser.parse_args()
        f(bits=args.bits)
        """, {"run.sh": "python other.py --bits 32\npython train.py --bits 8\n"}, 5)
    assert sorted((c.value, c.kind) for c in typed.items) == [
        (16, "argparse choice"), (32, "argparse choice")]


def test_click_options_and_hf_dataclass_fields_read_launch_lines(tmp_path: Path) -> None:
    clicked = _project_candidates(tmp_path, """\
        import click
        @click.command()
        @click.option("--precision", default="16")
        def main(precision):
            f(precision=precision)
        """, {"launch.sh": "accelerate launch --num_processes 4 train.py --precision 16-mixed\n"}, 5)
    assert [(c.value, c.kind) for c in clicked.items] == [("16-mixed", "launch flag")]
    (tmp_path / "fields").mkdir()
    fields = _project_candidates(tmp_path / "fields", """\
        from dataclasses import dataclass
        from transformers import HfArgumentParser
        @dataclass
        class Args:
            use_bf16: bool = False
        (args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
        f(bf16=args.use_bf16)
        """, {"launch.sh": "deepspeed train.py --use-bf16\n"}, 7)
    assert [(c.value, c.kind) for c in fields.items] == [(True, "launch flag")]


def test_the_shell_loader_keeps_every_option_given_to_the_script() -> None:
    from precisionlint.core.model import UNRESOLVED
    from precisionlint.sources import Limits
    from precisionlint.sources.shell_source import load

    text = "torchrun --nproc_per_node 2 train.py --lr -0.5 --amp -p=bf16 --name $RUN --last\n"
    (launch,) = load("run.sh", text, Limits()).tree
    assert [(o.word, o.value) for o in launch.options] == [
        ("--lr", "-0.5"), ("--amp", None), ("-p", "bf16"), ("--name", UNRESOLVED), ("--last", None)]
    assert text[launch.options[2].span.column - 1:launch.options[2].span.end_column - 1] == "bf16"


def test_a_cached_result_follows_an_edited_launch_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['lightning>=2.1']\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import argparse
        from lightning import Trainer
        parser = argparse.ArgumentParser()
        parser.add_argument("--precision", default="fp16")
        args = parser.parse_args()
        trainer = Trainer(precision=args.precision)
        """))
    launcher = tmp_path / "run.sh"
    launcher.write_text("python train.py --precision bf16-mixed\n")
    for path in tmp_path.iterdir():
        os.utime(path, ns=(1_600_000_000_123_456_789,) * 2)
    time.sleep(0.5)  # settled (precisionlint.core.racy_stat.settled): the cache keeps the results
    command = [sys.executable, "-m", "precisionlint", "check", "--select", "PL101", "--output-format", "json", "."]
    first = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert (first.returncode, json.loads(first.stdout)) == (0, []), first.stderr
    launcher.write_text("python train.py --precision fp16\n")
    os.utime(launcher, ns=(1_600_000_100_123_456_789,) * 2)
    time.sleep(0.5)
    second = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 1, second.stderr
    (finding,) = json.loads(second.stdout)
    assert (finding["path"], finding["line"], finding["related"][0]["path"]) == ("train.py", 6, "run.sh")


def test_without_a_project_file_only_the_scripts_own_folder_is_read(tmp_path: Path) -> None:
    """A folder of scripts with no project file or .git above it: its "project" reaches up to the file system's
    root, which is not walked for launch lines; the script's own folder is."""
    from precisionlint.core.model import Document
    from precisionlint.engine.check import launch_lines_of
    from precisionlint.project.model import current

    current().forget()
    folder = tmp_path / "loose"
    folder.mkdir()
    script = folder / "train.py"
    script.write_text(textwrap.dedent(_ARGPARSE_SCRIPT))
    (tmp_path / "outside.sh").write_text("python loose/train.py --precision bf16-mixed\n")
    text = script.read_text()
    document = Document(str(script), text, "python", tree=ast.parse(text))
    assert launch_lines_of(document) == []
    (folder / "run.sh").write_text("python train.py --precision 16-mixed\n")
    current().forget()
    document.launch_lines = launch_lines_of
    finder = document_finder(document)
    assert finder is not None
    call = next(n for n in ast.walk(document.tree) if isinstance(n, ast.Call) and n.lineno == 6 and n.keywords)
    found = finder.candidates(call.keywords[-1].value, finder.scope_at(call))
    current().forget()
    assert [(c.value, c.kind) for c in found.items] == [("16-mixed", "launch flag")]
