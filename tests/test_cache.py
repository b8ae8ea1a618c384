"""Each file read once, each content analysed once, and results kept between runs: on real files and the real
CLI. No finding may be lost or changed by the deduplication or the cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from precisionlint.checks import Rule, all_rules
from precisionlint.cli.commands import main
from precisionlint.core.model import Severity, SourceFile
from precisionlint.core.racy_stat import RACY_SECONDS
from precisionlint.engine.options import EngineOptions
from precisionlint.run import parallel
from precisionlint.run.cache import ResultCache, _read, open_cache
from precisionlint.run.parallel import check_all

ROOT = Path(__file__).resolve().parent.parent
# legacy-precision-value (PL102) on line 2
LEGACY = "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
SCRIPT = (
    "import torch\n"
    "scaler = torch.cuda.amp.GradScaler()\n"
    "with torch.autocast('cuda', dtype=torch.float16):\n"
    "    loss = model(x)\n"
    "    loss.backward()\n"
)


def _settle() -> None:
    """Wait until the files written so far are old enough for their stat to show any later write (see
    precisionlint.core.racy_stat.settled): before that, the cache trusts neither them nor what was computed from
    them."""
    time.sleep(RACY_SECONDS + 0.05)


def _counting_rule(calls: list[str]) -> Rule:
    def count(ctx):  # type: ignore[no-untyped-def]
        calls.append(ctx.document.path)
        return []

    return Rule(code="PL990", name="counting-rule", severity=Severity.WARNING, summary="s", doc="d",
                target="settings", needs_gpu=False, fixable=False, func=count)


def _tree(tmp_path: Path) -> list[SourceFile]:
    (tmp_path / "a.yaml").write_text(LEGACY)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yaml").write_text(LEGACY)  # a copy in another folder
    (tmp_path / "linked").mkdir()
    os.symlink("../a.yaml", tmp_path / "linked" / "a.yaml")  # a symbolic link of the same name
    (tmp_path / "hard").mkdir()
    os.link(tmp_path / "a.yaml", tmp_path / "hard" / "a.yaml")  # a hard link of the same name
    # The same content under another name is analysed on its own: the analysis may read the file's name.
    os.symlink("a.yaml", tmp_path / "link.yaml")
    (tmp_path / "other.yaml").write_text(LEGACY)
    names = ["a.yaml", "hard/a.yaml", "link.yaml", "linked/a.yaml", "other.yaml", "sub/a.yaml"]
    return [SourceFile(str(tmp_path / name), name, "yaml") for name in names]


def test_each_content_is_analysed_once_and_reported_for_every_path(tmp_path: Path) -> None:
    sources = _tree(tmp_path)
    calls: list[str] = []
    rules = [*all_rules(), _counting_rule(calls)]
    results = check_all(sources, EngineOptions(rules=rules), jobs=1)
    assert sorted(calls) == ["a.yaml", "link.yaml", "other.yaml"]  # one analysis per (content, file name)
    for source, result in zip(sources, results, strict=True):
        assert result.display == source.display
        assert [(f.code, f.path, f.span.line) for f in result.findings] == [("PL102", source.display, 2)]


def test_per_file_ignores_apply_to_each_path_of_a_shared_content(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precisionlint]\nper-file-ignores = { "sub/*" = ["legacy-precision-value"] }\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--output-format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    paths = sorted({line.split('"')[3] for line in result.stdout.splitlines() if '"path"' in line})
    assert paths == ["a.yaml", "hard/a.yaml", "link.yaml", "linked/a.yaml", "other.yaml"]


def test_a_warm_cache_analyses_nothing_and_changes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sources = _tree(project)
    calls: list[str] = []
    options = EngineOptions(rules=[*all_rules(), _counting_rule(calls)])
    cache = open_cache(tmp_path, None, options)
    cold = check_all(sources, options, jobs=1, cache=cache)
    cache.save()
    assert len(calls) == 3
    assert (tmp_path / ".precisionlint_cache" / ".gitignore").read_text().endswith("*\n")

    calls.clear()
    warm_cache = open_cache(tmp_path, None, options)
    warm = check_all(sources, options, jobs=1, cache=warm_cache)
    assert calls == []
    assert warm_cache.hits == 3 and warm_cache.misses == 0
    assert [r.findings for r in warm] == [r.findings for r in cold]

    # A changed file is a miss, and only that file is analysed again.
    (project / "other.yaml").write_text(LEGACY + "# changed\n")
    check_all(sources, options, jobs=1, cache=open_cache(tmp_path, None, options))
    assert calls == ["other.yaml"]


def test_other_settings_do_not_share_results(tmp_path: Path) -> None:
    sources = _tree(tmp_path)
    everything = EngineOptions(rules=all_rules())
    cache = open_cache(tmp_path, "cache", everything)
    check_all(sources, everything, jobs=1, cache=cache)
    cache.save()
    fewer = EngineOptions(rules=[r for r in all_rules() if r.code != "PL102"])
    other = open_cache(tmp_path, "cache", fewer)
    assert other.file != cache.file
    results = check_all(sources, fewer, jobs=1, cache=other)
    assert other.hits == 0 and all(not r.findings for r in results)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_torn_or_damaged_cache_file_is_never_read(tmp_path: Path, damage: str) -> None:
    sources = _tree(tmp_path)
    options = EngineOptions(rules=all_rules())
    cache = open_cache(tmp_path, None, options)
    expected = check_all(sources, options, jobs=1, cache=cache)
    cache.save()
    raw = cache.file.read_bytes()
    # A result that reads "no findings": if a damaged file were read, the findings would vanish.
    tampered = raw.replace(b'"PL102"', b'"PL103"')
    damaged = {
        "truncate": raw[: len(raw) // 2],
        "flip": tampered,
        "garbage": b"\x00\xff" * 50,
        "empty": b"",
    }[damage]
    cache.file.write_bytes(damaged)
    again = open_cache(tmp_path, None, options)
    results = check_all(sources, options, jobs=1, cache=again)
    assert again.hits == 0
    assert [r.findings for r in results] == [r.findings for r in expected]
    again.save()
    assert _read(cache.file)  # rewritten whole


def test_an_unwritable_cache_folder_only_costs_the_cache(tmp_path: Path) -> None:
    sources = _tree(tmp_path)
    (tmp_path / "blocked").write_text("a file where the cache folder would be")
    options = EngineOptions(rules=all_rules())
    cache = ResultCache(tmp_path / "blocked" / "cache", options)
    results = check_all(sources, options, jobs=1, cache=cache)
    cache.save()  # must not raise
    assert all(r.findings for r in results)


def _copy_cases(tmp_path: Path) -> Path:
    """A tree made of the rule book's cases, with symbolic links and copies, as real repositories have."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "rules", tree / "rules", symlinks=True)  # a broken link stays one (io-error)
    shutil.copytree(ROOT / "rules", tree / "copy", symlinks=True)
    (tree / "links").mkdir()
    for index, case in enumerate(sorted((tree / "rules").glob("*/bad.*"))):
        if case.suffix in (".py", ".yaml", ".toml", ".json"):
            os.symlink(os.path.relpath(case, tree / "links"), tree / "links" / f"{index}-{case.name}")
    (tree / "pyproject.toml").write_text("[tool.precisionlint]\nexclude = []\n")
    return tree


def test_cached_uncached_and_single_process_runs_print_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parallel.can_fork():  # let the pool start on a small tree, so that the pooled path is compared too
        monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 2)
        monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)
        monkeypatch.setattr(parallel, "CHUNK_BYTES", 2_000)
    tree = _copy_cases(tmp_path)
    _settle()  # so that the warm runs take results and files from the cache
    monkeypatch.chdir(tree)
    base = ["check", "--no-progress", "--exit-zero", "--output-format", "json", "--gpu", "V100"]
    runs = {
        "cold, cached, 2 jobs": [*base, "--jobs", "2", "."],
        "warm, cached, 2 jobs": [*base, "--jobs", "2", "."],
        "warm, cached, 1 job": [*base, "--jobs", "1", "."],
        "no cache, 1 job": [*base, "--no-cache", "--jobs", "1", "."],
        "no cache, 2 jobs": [*base, "--no-cache", "--jobs", "2", "."],
    }
    outputs = {}
    for name, args in runs.items():
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (name, result.output)
        outputs[name] = result.stdout
    assert len(set(outputs.values())) == 1, {name: len(out) for name, out in outputs.items()}
    assert outputs["no cache, 1 job"].count('"path": "links/') > 10  # the links are reported, each by its name
    [index] = (tree / ".precisionlint_cache" / "1").glob("*.files")  # the warm runs read no unchanged file
    assert len(_read(index)) > 100


def test_no_cache_writes_nothing_and_cache_dir_moves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(LEGACY)
    monkeypatch.chdir(tmp_path)
    CliRunner().invoke(main, ["check", "--no-progress", "--no-cache", "a.yaml"])
    assert not (tmp_path / ".precisionlint_cache").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.precisionlint]\ncache-dir = "build/lint-cache"\n')
    _settle()  # results that read a file written a moment ago (the pins) are not stored
    result = CliRunner().invoke(main, ["check", "--no-progress", "a.yaml"])
    assert result.exit_code == 1 and "PL102" in result.output
    assert (tmp_path / "build" / "lint-cache" / ".gitignore").is_file()
    assert not (tmp_path / ".precisionlint_cache").exists()
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\ncache-dir = 3\n")
    result = CliRunner().invoke(main, ["check", "--no-progress", "a.yaml"])
    assert result.exit_code == 2 and "cache-dir" in result.output


def test_concurrent_runs_leave_a_readable_cache(tmp_path: Path) -> None:
    for index in range(40):
        (tmp_path / f"f{index}.yaml").write_text(LEGACY + f"# {index}\n")
    _settle()
    command = [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--exit-zero", "-j", "1", "."]
    runs = [subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL) for _ in range(4)]
    assert [run.wait() for run in runs] == [0, 0, 0, 0]
    [cache_file] = (tmp_path / ".precisionlint_cache" / "1").glob("*.results")
    assert len(_read(cache_file)) == 40
    [index] = (tmp_path / ".precisionlint_cache" / "1").glob("*.files")
    assert len(_read(index)) == 40
    assert not list((tmp_path / ".precisionlint_cache").rglob("*.tmp"))


DEPRECATED = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"  # deprecated-amp-api: fix safety reads the pins
LINKING = (
    "from transformers import TrainingArguments\n"
    "args = TrainingArguments(output_dir='out', bf16=True, deepspeed='ds.json')\n"
)


def _json_check(folder: Path, *args: str) -> list[dict]:
    import json

    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--exit-zero", "--output-format", "json",
         "--no-cache", *args, "."],
        cwd=folder, capture_output=True, text=True, check=True,
    )
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_a_script_in_two_folders_of_one_project_is_analysed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """icefall's recipes are symbolic links to one shared file in dozens of folders: the project rules read
    the project's pins, not the folder, so one analysis serves every folder of one project; a nested project
    with pins of its own gets its own analysis, and so does a script that names a file (resolved from its
    folder)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n')
    for folder in ("a", "b", "c", "nested"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(DEPRECATED)
        (tmp_path / folder / "hf.py").write_text(LINKING)
    (tmp_path / "nested" / "pyproject.toml").write_text('[project]\nname = "n"\ndependencies = ["torch>=1.13"]\n')
    (tmp_path / "a" / "ds.json").write_text('{"fp16": {"enabled": true}}\n')  # disagrees with bf16=True
    (tmp_path / "b" / "ds.json").write_text('{"bf16": {"enabled": true}}\n')
    os.symlink("../a/train.py", tmp_path / "c" / "link.py")

    findings = _json_check(tmp_path)
    safety = {f["path"]: f["fix"]["applicability"] for f in findings if f["code"] == "PL207"}
    assert safety == {"a/train.py": "safe", "b/train.py": "safe", "c/train.py": "safe", "c/link.py": "safe",
                      "nested/train.py": "unsafe"}
    assert sorted(f["path"] for f in findings if f["code"] == "PL402") == ["a/hf.py"]

    from precisionlint.engine import check as engine_check

    analysed: list[str] = []
    real = engine_check.check_bytes

    def counting(display: str, *args: object, **kwargs: object) -> object:
        analysed.append(display)
        return real(display, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_check, "check_bytes", counting)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-progress", "--no-cache", "--jobs", "1", "."])
    assert result.exit_code == 1
    scripts = sorted(path for path in analysed if path.endswith(".py"))
    # link.py has another name (the analysis may read it); hf.py names ds.json, so each folder is its own.
    assert scripts == ["a/hf.py", "a/train.py", "b/hf.py", "c/hf.py", "c/link.py", "nested/hf.py",
                       "nested/train.py"]


def test_the_same_content_in_a_test_folder_is_analysed_on_its_own(tmp_path: Path) -> None:
    """Rules read some folder names (test suites are quiet for legacy-precision-value): a copy there never
    shares the findings of a copy elsewhere, whatever rules are selected."""
    true_half = (ROOT / "rules" / "true-half-precision-training" / "bad.yaml").read_text()
    for folder in ("tests", "conf", "inference"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "trainer.yaml").write_text(LEGACY)
        (tmp_path / folder / "half.yaml").write_text(true_half)
    for select in ([], ["--select", "legacy-precision-value,true-half-precision-training"]):
        findings = _json_check(tmp_path, *select)
        assert [f["path"] for f in findings if f["code"] == "PL102"] == ["conf/trainer.yaml", "inference/trainer.yaml"]
    # true-half-precision-training is no project rule: without one selected, no context key names the folder
    findings = _json_check(tmp_path, "--select", "true-half-precision-training")
    assert [f["path"] for f in findings] == ["conf/half.yaml"]


def test_every_folder_name_the_analysis_reads_is_part_of_the_identity() -> None:
    from precisionlint.checks import _attribution
    from precisionlint.checks import true_half_precision_training as true_half
    from precisionlint.engine.identity import FOLDER_WORDS

    assert _attribution._TEST_FOLDERS <= FOLDER_WORDS
    assert true_half._NOT_TRAINING_FOLDERS <= FOLDER_WORDS
    lightning = (ROOT / "precisionlint" / "frameworks" / "lightning.py").read_text()
    assert '"trainer" in facts.folder_names' in lightning and "trainer" in FOLDER_WORDS
    for module in (ROOT / "precisionlint").rglob("*.py"):  # no other reader of folder names
        if module.name in ("base.py", "_attribution.py", "true_half_precision_training.py", "lightning.py"):
            continue
        assert ".folder_names" not in module.read_text(), module


@pytest.mark.parametrize(("text", "reads"), [
    ("import torch\nwith torch.autocast('cuda'):\n    initialize_weights(model)\n", False),
    ("args = TrainingArguments(deepspeed='ds.json')\n", True),
    ("from lightning.pytorch.strategies import DeepSpeedStrategy\n", True),
    ("engine, *_ = ds.initialize(config='ds.json')\nwith torch.autocast('cuda'):\n    engine(x)\n", True),
    ("# -*- coding: latin-1 -*-\nx = 1\n", True),
    ("x = 1  # ünïcode, no link\n", False),
    ("model = AutoModel.from_pretrained('checkpoints/base')\n", True),  # its config.json: fp16-on-bf16-checkpoint
])
def test_a_script_names_its_folder_in_the_key_only_when_a_rule_may_follow_its_links(text: str, reads: bool) -> None:
    from precisionlint.run.context_key import ProjectContext

    source = SourceFile("train.py", "train.py", "python")
    assert ProjectContext([source]).reads_folder(source, text.encode()) is reads
    assert ProjectContext([source]).reads_folder(SourceFile("a.yaml", "a.yaml", "yaml"), b"x: 1\n")


# ---------------------------------------------------------------------------------------------------------------
# The file index: unchanged files are neither read, hashed nor prefiltered again; a changed one always is.
# ---------------------------------------------------------------------------------------------------------------

QUIET = LEGACY.replace("precision: 16", "precisian: 16")  # the same size, and no finding
assert len(QUIET) == len(LEGACY)


@pytest.fixture(autouse=True)
def _index_small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file index serves runs of at least parallel.MIN_FILES_FOR_INDEX files; these trees are smaller."""
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_INDEX", 1)


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from precisionlint.engine import reading

    reads: list[str] = []
    real = reading.read_source

    def counting(source: SourceFile, *args: object, **kwargs: object) -> object:
        reads.append(source.display)
        return real(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_source", counting)
    return reads


def _cached_run(cache_root: Path, sources: list[SourceFile], options: EngineOptions) -> tuple[list, ResultCache]:
    cache = open_cache(cache_root, None, options)
    results = check_all(sources, options, jobs=1, cache=cache)
    cache.save()
    return results, cache


def _codes(results: list) -> list[list[tuple[str, str, int, str]]]:
    return [[(f.code, f.path, f.span.line, f.message) for f in r.findings] for r in results]


def test_an_unchanged_file_is_neither_read_nor_analysed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sources = _tree(project)  # copies, a hard link and symbolic links of one content
    (project / "plain.py").write_text("x = 1\n")  # the prefilter's verdict is kept too
    sources.append(SourceFile(str(project / "plain.py"), "plain.py", "python"))
    _settle()
    calls: list[str] = []
    options = EngineOptions(rules=[*all_rules(), _counting_rule(calls)])
    cold, cache = _cached_run(tmp_path, sources, options)
    assert cache.files is not None and cache.files.recorded == len(sources)  # links included, each by its path

    reads = _counting_reads(monkeypatch)
    calls.clear()
    warm, again = _cached_run(tmp_path, sources, options)
    assert reads == [] and calls == []
    assert again.files is not None and again.files.hits == len(sources)
    assert _codes(warm) == _codes(cold)
    assert [r.skipped for r in warm] == [r.skipped for r in cold] == [False] * 6 + [True]


@pytest.mark.parametrize("change", ["rewritten", "replaced", "relinked", "resized"])
def test_a_changed_file_is_read_again_even_with_its_old_size_and_modification_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """A rewrite that keeps the size and puts the modification time back (os.utime, `cp -p`, `touch -r`), a
    same-size file renamed over the old one, a symbolic link pointed at another file: stat still tells, by
    the change time (which no program can set) or the inode."""
    project = tmp_path / "project"
    project.mkdir()
    sources = _tree(project)
    (project / "quiet.yaml").write_text(QUIET)
    _settle()
    options = EngineOptions(rules=all_rules())
    _cached_run(tmp_path, sources, options)

    target = project / ("link.yaml" if change == "relinked" else "other.yaml")
    before = os.stat(target)
    if change == "rewritten":
        target.write_text(QUIET)
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif change == "replaced":
        (project / "new.tmp").write_text(QUIET)
        os.utime(project / "new.tmp", ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(project / "new.tmp", target)
    elif change == "relinked":  # link.yaml led to a.yaml; now to a file of the same size and times
        os.utime(project / "quiet.yaml", ns=(before.st_atime_ns, before.st_mtime_ns))
        target.unlink()
        os.symlink("quiet.yaml", target)
    else:
        target.write_text(LEGACY + "\n")
    after = os.stat(target)
    if change != "resized":
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    reads = _counting_reads(monkeypatch)
    results, _ = _cached_run(tmp_path, sources, options)
    assert reads == [next(s.display for s in sources if s.fs_path == str(target))]
    assert _codes(results) == _codes(check_all(sources, options, jobs=1))  # as if there were no cache
    changed = next(r for s, r in zip(sources, results, strict=True) if s.fs_path == str(target))
    assert bool(changed.findings) is (change == "resized")


def test_a_file_written_a_moment_ago_is_not_trusted_until_it_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Racy git: a file written again within the same timestamp tick as the read would keep its stat, so a
    file younger than that margin is read by every run until it is older."""
    (tmp_path / "a.yaml").write_text(LEGACY)
    sources = [SourceFile(str(tmp_path / "a.yaml"), "a.yaml", "yaml")]
    options = EngineOptions(rules=all_rules())
    _, first = _cached_run(tmp_path, sources, options)
    assert first.files is not None and first.files.recorded == 0
    reads = _counting_reads(monkeypatch)
    _cached_run(tmp_path, sources, options)
    assert reads == ["a.yaml"]
    _settle()
    _, settled_run = _cached_run(tmp_path, sources, options)
    assert settled_run.files is not None and settled_run.files.recorded == 1
    reads.clear()
    _cached_run(tmp_path, sources, options)
    assert reads == []


def test_a_torn_or_damaged_file_index_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.yaml").write_text(LEGACY)
    (project / "b.yaml").write_text(QUIET)
    sources = [SourceFile(str(project / name), name, "yaml") for name in ("a.yaml", "b.yaml")]
    _settle()
    options = EngineOptions(rules=all_rules())
    expected, cache = _cached_run(tmp_path, sources, options)
    assert cache.files is not None
    raw = cache.files.file.read_bytes()
    entries = _read(cache.files.file)
    digest_a, digest_b = (entries[str(project / name)][5] for name in ("a.yaml", "b.yaml"))
    # a.yaml's entry claiming b.yaml's quiet content: if the damaged file were read, a finding would vanish
    cache.files.file.write_bytes(raw.replace(digest_a.encode(), digest_b.encode()))
    reads = _counting_reads(monkeypatch)
    results, again = _cached_run(tmp_path, sources, options)
    assert sorted(reads) == ["a.yaml", "b.yaml"]
    assert _codes(results) == _codes(expected) and results[0].findings
    assert again.files is not None and again.files.hits == 0
    assert len(_read(again.files.file)) == 2  # rewritten whole


def test_a_pin_file_rewritten_with_its_old_size_and_time_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    """The results of a file whose findings read the pins are keyed on the pin files' stat, change time
    included."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.4"]\n')
    (tmp_path / "train.py").write_text(DEPRECATED)
    _settle()

    def safety() -> str:
        result = subprocess.run(
            [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--exit-zero", "--output-format",
             "json", "."], cwd=tmp_path, capture_output=True, text=True, check=True)
        import json

        [finding] = [f for f in json.loads(result.stdout) if f["code"] == "PL207"]
        return str(finding["fix"]["applicability"])

    assert safety() == "safe"
    assert safety() == "safe"  # from the cache
    before = os.stat(tmp_path / "pyproject.toml")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=1.9"]\n')
    os.utime(tmp_path / "pyproject.toml", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(tmp_path / "pyproject.toml").st_size == before.st_size
    _settle()  # a young pin file is never trusted anyway: this is about the change time
    assert safety() == "unsafe"


def test_a_checkpoint_config_changed_between_runs_changes_the_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fp16-on-bf16-checkpoint reads the config.json of the checkpoint folder a script loads: a cached result
    must not outlive an edit of that file."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ft'\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckpt").mkdir()
    config = tmp_path / "ckpt" / "config.json"
    config.write_text('{"torch_dtype": "bfloat16"}\n')
    (tmp_path / "train.py").write_text(
        "from transformers import AutoModelForCausalLM, TrainingArguments\n"
        "model = AutoModelForCausalLM.from_pretrained('ckpt')\n"
        "args = TrainingArguments(output_dir='o', fp16=True)\n")
    _settle()
    command = [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--select", "fp16-on-bf16-checkpoint",
               "--output-format", "concise", "."]
    first = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 1 and "PL405" in first.stdout, first.stdout + first.stderr
    config.write_text('{"torch_dtype": "float16"}\n')
    _settle()
    second = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
