"""The engine on real files: one file's failure is that file's finding, the run goes on, and the order of the
results never depends on how many processes did the work."""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from precisionlint import checks
from precisionlint.checks import Rule, all_rules
from precisionlint.cli.commands import main
from precisionlint.core.model import Severity, SourceFile
from precisionlint.engine.check import check_bytes, check_source
from precisionlint.engine.options import EngineOptions
from precisionlint.engine.prefilter import CONFIG_KEYWORDS, PYTHON_KEYWORDS, might_hold_findings
from precisionlint.run import parallel
from precisionlint.run.discover import discover
from precisionlint.run.parallel import check_all
from precisionlint.sources import Limits, format_of

sys.path.insert(0, str(Path(__file__).parent))
from rule_cases import load_cases  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# legacy-precision-value (PL102) on line 2
LEGACY = "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"


def _rule(func, name: str = "test-rule", code: str = "PL990", target: str = "settings") -> Rule:  # type: ignore[no-untyped-def]
    return Rule(code=code, name=name, severity=Severity.WARNING, summary="s", doc="d", target=target,
                needs_gpu=False, fixable=False, func=func)


def _boom(ctx):  # type: ignore[no-untyped-def]
    raise KeyError("a bug in a rule")


def _deep(ctx):  # type: ignore[no-untyped-def]
    def down(n: int) -> int:
        return down(n + 1)

    return down(0)


def _spin(ctx):  # type: ignore[no-untyped-def]
    """Burns CPU, and swallows what it can, as a hung rule would."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            sum(range(1000))
        except Exception:
            pass
    return []


def _write(folder: Path, files: dict[str, str]) -> list[SourceFile]:
    sources = []
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        fmt = format_of(name)
        assert fmt is not None
        sources.append(SourceFile(str(path), name, fmt))
    return sources


def _codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in result.findings]


# ---------------------------------------------------------------------------------------------------------------
# A crash inside a rule
# ---------------------------------------------------------------------------------------------------------------


def test_a_rule_that_raises_is_an_internal_error_for_that_file_only(tmp_path: Path) -> None:
    sources = _write(tmp_path, {"a.yaml": LEGACY, "b.yaml": LEGACY})
    legacy = checks.find_rule("legacy-precision-value")
    options = EngineOptions(rules=[legacy, _rule(_boom)])
    results = check_all(sources, options, jobs=1)
    for result in results:
        assert sorted(_codes(result)) == ["PL009", "PL102"]  # the other rule's finding is kept
        assert result.internal_error
        internal = next(f for f in result.findings if f.code == "PL009")
        assert "internal error in test-rule: KeyError" in internal.message
        assert "please report it" in internal.message
        assert internal.severity == Severity.ERROR


def test_internal_error_through_the_cli_exits_2_and_checks_the_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(LEGACY)
    (tmp_path / "b.toml").write_text('[trainer_config]\nprecision = "16"\n')
    registry = {rule.code: rule for rule in all_rules()}
    flaky = _rule(lambda ctx: [] if ctx.document.format == "toml" else _boom(ctx))
    monkeypatch.setattr(checks, "_RULES", {**registry, flaky.code: flaky})
    result = CliRunner().invoke(main, ["check", "--no-progress", "--jobs", "1", "a.yaml", "b.toml"])
    assert result.exit_code == 2, result.output
    assert "a.yaml:1:1: PL009" in result.output
    assert "internal error in test-rule: KeyError" in result.output
    assert "a.yaml:2:14: PL102" in result.output  # other rules on the same file still ran
    assert "b.toml:2:13: PL102" in result.output  # and the other file was checked


def test_recursion_in_rules_is_one_limit_finding_not_a_crash(tmp_path: Path) -> None:
    sources = _write(tmp_path, {"a.yaml": LEGACY})
    legacy = checks.find_rule("legacy-precision-value")
    rules = [_rule(_deep, "deep-one", "PL991"), _rule(_deep, "deep-two", "PL992"), legacy]
    before = sys.getrecursionlimit()
    [result] = check_all(sources, EngineOptions(rules=rules), jobs=1)
    assert sorted(_codes(result)) == ["PL003", "PL102"]
    limit = next(f for f in result.findings if f.code == "PL003")
    assert "nesting too deep" in limit.message and "deep-one, deep-two" in limit.message
    assert not result.internal_error
    assert sys.getrecursionlimit() == before  # the deeper limit is for the file's analysis only


def test_max_parse_time_stops_a_runaway_file(tmp_path: Path) -> None:
    if not hasattr(__import__("signal"), "setitimer"):
        pytest.skip("no CPU timer on this platform")
    sources = _write(tmp_path, {"slow.yaml": LEGACY, "fine.yaml": LEGACY})
    legacy = checks.find_rule("legacy-precision-value")
    spin = _rule(lambda ctx: _spin(ctx) if ctx.document.path == "slow.yaml" else [])
    options = EngineOptions(rules=[legacy, spin], limits=Limits(max_parse_time=0.2))
    slow, fine = check_all(sources, options, jobs=1)
    assert _codes(slow) == ["PL003"]
    assert "max-parse-time" in slow.findings[0].message
    assert _codes(fine) == ["PL102"]
    import signal

    assert signal.getsignal(signal.SIGVTALRM) in (signal.SIG_DFL, None)  # the handler is put back
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


def test_time_limit_hitting_anywhere_leaves_no_timer_behind(tmp_path: Path) -> None:
    """The timer may fire at any point of a file's analysis, cleanup included: nothing may leak out of it."""
    import signal

    if not hasattr(signal, "setitimer"):
        pytest.skip("no CPU timer on this platform")
    entries = "".join(f"  k{i}: {{a: [1, 2, {{b: c}}]}}\n" for i in range(300))
    text = ("trainer:\n" + entries + "  precision: 16\n").encode()
    options = EngineOptions(rules=all_rules(), limits=Limits(max_parse_time=0.002))
    codes = set()
    for _ in range(60):
        codes.update(_codes(check_bytes("a.yaml", text, "yaml", options)))
    assert "PL003" in codes  # the limit was hit, and every time it became a finding
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:  # a leaked timer would raise in here
        sum(range(100))
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGVTALRM) in (signal.SIG_DFL, None)
    assert gc.isenabled() and sys.getrecursionlimit() < 8000


def test_max_parse_time_from_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-parse-time = 0.25\nmax-depth = 3\n")
    (tmp_path / "deep.yaml").write_text("trainer:\n  a:\n    b:\n      c:\n        precision: 16\n")
    result = CliRunner().invoke(main, ["check", "--no-progress", "deep.yaml"])
    assert "deep.yaml:1:1: PL003" in result.output and "max-depth" in result.output
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-parse-time = -1\n")
    result = CliRunner().invoke(main, ["check", "--no-progress", "deep.yaml"])
    assert result.exit_code == 2 and "max-parse-time" in result.output


# ---------------------------------------------------------------------------------------------------------------
# Files that cannot be read
# ---------------------------------------------------------------------------------------------------------------


def test_a_file_that_disappears_after_discovery(tmp_path: Path) -> None:
    _write(tmp_path, {"a.yaml": LEGACY, "gone.yaml": LEGACY, "z.yaml": LEGACY})
    found = discover([str(tmp_path)], tmp_path, respect_gitignore=False)
    (tmp_path / "gone.yaml").unlink()
    results = check_all(found.files, EngineOptions(rules=all_rules()), jobs=1)
    assert [_codes(r) for r in results] == [["PL102"], ["PL002"], ["PL102"]]
    assert "No such file or directory" in results[1].findings[0].message


def test_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    [source] = _write(tmp_path, {"big.json": '{"fp16": {"enabled": true}}' + " " * 5000})
    result = check_source(source, EngineOptions(rules=all_rules(), limits=Limits(max_file_size=1000)))
    assert _codes(result) == ["PL003"]
    assert "max-file-size" in result.findings[0].message


# ---------------------------------------------------------------------------------------------------------------
# The prefilter
# ---------------------------------------------------------------------------------------------------------------


def test_every_bad_rule_case_passes_the_prefilter() -> None:
    """Whoever adds a rule that can fire without one of the prefilter's words must add the word."""
    for case in load_cases():
        for path in case.bad:
            fmt = format_of(path.name)
            if path.is_symlink() and not path.exists():
                continue
            assert might_hold_findings(path.read_bytes(), fmt), f"{path} would be skipped by the prefilter"


def test_prefilter_skips_only_files_without_findings() -> None:
    """For every case file: a file the prefilter would skip yields nothing when checked without it."""
    rules = all_rules()
    from precisionlint.hardware.targets import resolve_targets

    options = EngineOptions(rules=rules, gpus=resolve_targets(["V100", "A100"]), prefilter=False)
    for path in sorted(ROOT.glob("rules/*/*")) + sorted(ROOT.glob("examples/**/*.*")):
        fmt = format_of(path.name)
        if fmt is None or not path.is_file():
            continue
        data = path.read_bytes()
        if not might_hold_findings(data, fmt):
            findings = check_bytes(path.name, data, fmt, options).findings
            assert [f for f in findings if not f.code.startswith("PL00")] == [], path


def test_prefilter_keywords_are_bytes() -> None:
    assert all(isinstance(word, bytes) and word for word in (*CONFIG_KEYWORDS, *PYTHON_KEYWORDS))


# Pieces of every keyword (and the keywords whole), so that random texts often hold parts of several of them.
_KEYWORD_PIECES = sorted({word[i:j] for word in (*CONFIG_KEYWORDS, *PYTHON_KEYWORDS)
                          for i in range(len(word)) for j in (i + 1, i + 2, i + 4, len(word)) if j <= len(word)})


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_KEYWORD_PIECES), max_size=8), st.sampled_from(["python", "notebook", "yaml", "json"]))
def test_prefilter_is_exactly_a_search_for_its_words(pieces: list[bytes], fmt: str) -> None:
    """The prefilter's scan plan (words found through shared pieces) passes exactly the files that hold one of
    the format's words."""
    data = b"".join(pieces)
    words = PYTHON_KEYWORDS if fmt in ("python", "notebook") else CONFIG_KEYWORDS
    assert might_hold_findings(data, fmt) == any(word in data for word in words)  # type: ignore[arg-type]


def test_python_settings_guard_is_sound() -> None:
    """load_document skips python_settings() when no framework module is named: never when it finds one."""
    from precisionlint.frameworks import python_settings
    from precisionlint.frameworks.documents import load_document
    from precisionlint.frameworks.python_calls import may_import_a_framework
    from precisionlint.sources.decoding import decode_source

    for path in sorted(ROOT.glob("rules/*/*.py")) + sorted(ROOT.glob("examples/**/*.py")):
        try:
            document = load_document(path.name, decode_source(path.read_bytes(), path.name), "python")
        except Exception:
            continue
        if not may_import_a_framework(document.text):
            assert python_settings(document) == [], path


def test_python_files_no_pass_reads_hold_no_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """python_tree_is_read() says no only where every pass would stop at its own test of the text: every rule
    case and example, checked with every Python file parsed and analysed, gives the same output."""
    from precisionlint.engine import check as engine_check

    paths = [str(p) for p in sorted(ROOT.glob("rules/*"))] + [str(ROOT / "examples")]
    unread = [p for p in sorted(ROOT.glob("rules/*/*.py")) + sorted(ROOT.glob("examples/**/*.py"))
              if might_hold_findings(p.read_bytes(), "python") and not engine_check.python_tree_is_read(p.read_text())]
    assert unread, "no case exercises a file that no pass reads"

    def run() -> str:
        arguments = ["check", "--no-cache", "--no-progress", "--output-format", "json", "--jobs", "1",
                     "--gpu", "V100", "--gpu", "A100", *paths]
        return CliRunner().invoke(main, arguments).output

    gated = run()
    monkeypatch.setattr(engine_check, "python_tree_is_read", lambda text: True)
    assert run() == gated


def test_a_python_file_no_pass_reads_is_not_parsed(tmp_path: Path) -> None:
    """A syntax error is reported where a rule would read the file, not in a file that only mentions a
    precision word (a metric, prose): precisionlint checks mixed precision, not Python syntax."""
    (tmp_path / "metrics.py").write_text('"""precision and recall"""\ndef f(:\n')
    (tmp_path / "train.py").write_text("import torch\nscaler = torch.amp.GradScaler()\ndef f(:\n")
    (tmp_path / "fit.py").write_text("from lightning import Trainer\nTrainer(precision=16)\ndef f(:\n")
    # DeepSpeed's name alone: no config is linked that cross-file-precision-conflict could compare
    (tmp_path / "engine_setup.py").write_text(
        "import deepspeed\nimport torch\nengine = deepspeed.initialize(config=cfg)\ndtype = torch.float16\ndef f(:\n")
    (tmp_path / "hf.py").write_text("from transformers import TrainingArguments\n"
                                    "args = TrainingArguments('out', deepspeed='ds.JSON')\ndef f(:\n")
    # not ASCII: a typographic apostrophe is no word; a fullwidth identifier the parser reads as `autocast` is
    (tmp_path / "notes.py").write_text("# the model’s precision…\ndef f(:\n", encoding="utf-8")
    (tmp_path / "wide.py").write_text("import torch\nwith torch.ａｕｔｏｃａｓｔ('cuda'):  # fp16\n    pass\ndef f(:\n",
                                      encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--no-cache", "--no-progress", str(tmp_path)])
    assert result.exit_code == 1
    for read in ("train.py:3:7", "fit.py:3:7", "hf.py:3:7", "wide.py:4:7"):
        assert f"{read}: PL001" in result.output, read
    for unread in ("metrics.py", "engine_setup.py", "notes.py"):
        assert unread not in result.output


# ---------------------------------------------------------------------------------------------------------------
# Processes: deterministic order, every file once, a dead worker does not lose files
# ---------------------------------------------------------------------------------------------------------------


def _many(tmp_path: Path, count: int = 40) -> list[SourceFile]:
    files = {}
    for index in range(count):
        kind = index % 4
        if kind == 0:
            files[f"f{index:03}.yaml"] = LEGACY
        elif kind == 1:
            files[f"f{index:03}.py"] = "import torch\nwith torch.autocast('cuda'):\n    y = m(x)\ny.backward()\n"
        elif kind == 2:
            files[f"f{index:03}.json"] = '{"fp16": {"enabled": true, "loss_scale": 128}}\n'
        else:
            files[f"f{index:03}.toml"] = "[data]\nroot = '/x'\n"  # skipped by the prefilter
    return _write(tmp_path, files)


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the pool start on a handful of small files, so that tests exercise it cheaply."""
    if not parallel.can_fork():
        pytest.skip("no fork pool on this platform")
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 2)
    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 200)


def _summary(results) -> list[tuple[str, list[tuple[str, int, int]], bool]]:  # type: ignore[no-untyped-def]
    return [(r.display, [(f.code, f.span.line, f.span.column) for f in r.findings], r.skipped) for r in results]


def test_pool_results_equal_serial_results_in_order(tmp_path: Path, small_pool: None) -> None:
    sources = _many(tmp_path)
    options = EngineOptions(rules=all_rules())
    done: list[int] = []
    serial = check_all(sources, options, jobs=1)
    pooled = check_all(sources, options, jobs=3, progress=done.append)
    assert _summary(pooled) == _summary(serial)
    # in the order of `sources`: each result with something to say is the file's own (the files with nothing to
    # report share one result, which names no file)
    assert [(r.display, s.display) for r, s in zip(pooled, sources, strict=True) if r.findings or r.internal_error] \
        == [(s.display, s.display) for r, s in zip(pooled, sources, strict=True) if r.findings or r.internal_error]
    assert all(r.display in ("", s.display) for r, s in zip(pooled, sources, strict=True))
    assert sum(done) == len(sources)
    assert all(r.document is None for r in pooled)  # trees are not kept for a whole run
    assert any(r.skipped for r in pooled) and any(r.findings for r in pooled)


def test_pool_with_a_rule_that_raises(tmp_path: Path, small_pool: None) -> None:
    sources = _many(tmp_path, 12)
    options = EngineOptions(rules=[*all_rules(), _rule(lambda ctx: _boom(ctx))])
    results = check_all(sources, options, jobs=2)
    checked = [r for r in results if not r.skipped]
    assert checked and all("PL009" in _codes(r) and r.internal_error for r in checked)


def test_a_dead_worker_loses_no_file(tmp_path: Path, small_pool: None) -> None:
    sources = _many(tmp_path, 16)
    parent = os.getpid()

    def die_in_worker(ctx):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os._exit(3)  # a worker killed mid-file (out of memory, a signal)
        return []

    options = EngineOptions(rules=[*all_rules(), _rule(die_in_worker)])
    results = check_all(sources, options, jobs=2)
    expected = check_all(sources, EngineOptions(rules=all_rules()), jobs=1)
    assert _summary(results) == _summary(expected)


def test_pool_is_not_used_for_small_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = _many(tmp_path, 8)

    def no_pool(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a pool for 8 small files")

    monkeypatch.setattr(parallel, "_start_pool", no_pool)
    options = EngineOptions(rules=all_rules())
    assert _summary(check_all(sources, options, jobs=4)) == _summary(check_all(sources, options, jobs=1))


def test_cli_output_is_the_same_with_any_number_of_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_pool: None
) -> None:
    _many(tmp_path, 30)
    monkeypatch.chdir(tmp_path)
    outputs = {
        jobs: CliRunner().invoke(main, ["check", "--no-progress", "--output-format", "json", "--jobs", jobs, "."])
        for jobs in ("1", "2", "4")
    }
    assert {r.exit_code for r in outputs.values()} == {1}
    assert outputs["1"].output == outputs["2"].output == outputs["4"].output
