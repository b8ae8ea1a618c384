"""What a whole-tree run holds per file in the process that reads the files: it must not grow with the tree
beyond the file list itself (the findings aside)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

from precisionlint.checks import all_rules
from precisionlint.core.model import SourceFile
from precisionlint.engine.options import EngineOptions
from precisionlint.run.parallel import check_all

_CLEAN = "import torch\nx = torch.float16\n# {index}\n"  # read past the prefilter, analysed, nothing to report
_SKIPPED = "x = {index}\n"  # the prefilter rejects it


def _tree(folder: Path, count: int) -> list[SourceFile]:
    sources = []
    for index in range(count):
        for name, text in ((f"clean{index}.py", _CLEAN), (f"plain{index}.py", _SKIPPED)):
            path = folder / name
            path.write_text(text.format(index=index))
            sources.append(SourceFile(str(path), name, "python"))
    return sources


def test_files_with_nothing_to_report_share_one_result(tmp_path: Path) -> None:
    sources = _tree(tmp_path, 12)
    results = check_all(sources, EngineOptions(all_rules()), 1)
    assert all(not result.findings for result in results)
    clean = {id(result) for source, result in zip(sources, results, strict=True) if "clean" in source.display}
    skipped = {id(result) for source, result in zip(sources, results, strict=True) if "plain" in source.display}
    assert len(clean) == 1  # one object for the run, not one per file
    assert len(skipped) == 1
    assert clean != skipped


class _LongKey:
    """The context key of a project with many pin files: about 8 kB for every file."""

    def portable(self, source: SourceFile) -> str:
        return "p" * 8000

    def reads_folder(self, source: SourceFile, data: bytes) -> bool:
        return False

    def key(self, source: SourceFile, reads_folder: bool) -> str:
        return "k" * 8000 + source.fs_path  # a string of its own for each file, as a folder's key is

    def stat(self, fs_path: str, fmt: str | None = None) -> None:
        return None


def test_the_run_does_not_keep_each_files_context_key(tmp_path: Path) -> None:
    sources = _tree(tmp_path, 150)
    options = EngineOptions(all_rules(), context_key=_LongKey())
    check_all(sources[:4], options, 1)  # imports and first-use tables, not measured
    tracemalloc.start()
    try:
        check_all(sources, options, 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 150 analysed files: their identities (each with its 8 kB key) held to the end would be 1.2 MB.
    assert peak < 600_000


def test_a_folders_listing_is_kept_small_with_names_shared_between_folders(tmp_path: Path) -> None:
    """Every process of a run keeps the listing of each folder it meets (the project around its files)."""
    import sys

    from precisionlint.project.model import ProjectModel

    model = ProjectModel()
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        for file_name in ("__init__.py", "train.py", "requirements.txt", "setup.py"):
            (folder / file_name).write_text("x = 1\n")
    wide = tmp_path / "wide"
    wide.mkdir()
    for index in range(40):
        (wide / f"m{index}.py").write_text("x = 1\n")
    a, b = model.directory(str(tmp_path / "a")), model.directory(str(tmp_path / "b"))
    first = next(name for name in a.names if name == "__init__.py")
    again = next(name for name in b.names if name == "__init__.py")
    assert first is again  # one string for the name in every folder
    assert sys.getsizeof(a.names) < sys.getsizeof(frozenset(a.names)) / 2
    # Read as before: the boundary, the pin files.
    assert a.boundary
    assert a.pin_files() == ["setup.py", "requirements.txt"]
    assert "m7.py" in model.directory(str(wide)).names and "m40.py" not in model.directory(str(wide)).names


def test_the_file_list_of_a_walked_tree_costs_a_name_per_file_not_a_path(tmp_path: Path) -> None:
    """The process that reads the files holds the run's file list to the end: a folder table and each file's
    name (shared between folders), not a path string and a tuple per file."""
    from precisionlint.run.discover import discover

    root = tmp_path / ("a-folder-with-a-long-name-as-checkouts-have-" * 3)
    for folder in range(60):
        inner = root / f"recipes-{folder}" / "train"
        inner.mkdir(parents=True)
        for name in ("__init__.py", "train.py", "model.py", "data.py", "config.yaml", "ds_config.json",
                     "utils.py", "losses.py", "metrics.py", "export.py"):
            (inner / name).write_text("x = 1\n")
    discover([str(root)], root)  # imports and first-use tables, not measured
    tracemalloc.start()
    try:
        found = discover([str(root)], root)
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found.files) == 600
    first = found.files[0]
    assert first == SourceFile(str(root / "recipes-0" / "train" / "__init__.py"),
                               str(root / "recipes-0" / "train" / "__init__.py"), "python")
    assert found.files[-1].format == "python" and found.files[-1].fs_path.endswith("recipes-9/train/utils.py")
    every = list(found.files)  # made while iterating: the same files as by index
    assert every == [found.files[index] for index in range(len(found.files))]
    assert all(type(source) is SourceFile for source in every)
    # As SourceFile tuples of absolute paths: about 350 bytes a file here.
    assert kept / len(found.files) < 120


def _script(index: int, size: int) -> str:
    """A real training script of `size` characters or a few more."""
    body = "".join(f"    loss_{n} = model(batch) * {n}\n" for n in range(size // 32))
    text = f"import torch\n\n\ndef step_{index}(model, batch):\n{body}    return loss_0\n"
    return text + "#" * (size - len(text)) + "\n"


def test_linked_files_kept_loaded_are_bounded_by_their_text_least_recently_used_first(tmp_path: Path) -> None:
    from precisionlint.project.model import LINKED_TEXT_BUDGET, ProjectModel

    size = LINKED_TEXT_BUDGET // 3 + 1  # a third of the budget and more: three do not fit, the third lets one go
    paths = []
    for index in range(6):
        script = tmp_path / f"train_{index}.py"
        script.write_text(_script(index, size))
        paths.append(str(script))
    model = ProjectModel()
    first = model.load_linked(paths[0])
    second = model.load_linked(paths[1])
    assert first is not None and second is not None
    assert model.load_linked(paths[0]) is first  # kept, and now the most recently used
    model.load_linked(paths[2])  # over the budget: the least recently used (the second) goes
    assert model.load_linked(paths[0]) is first
    for later in paths[3:]:
        model.load_linked(later)
    kept = [document for document in model.linked.values() if document is not None]
    assert sum(len(document.text) for document in kept) <= LINKED_TEXT_BUDGET
    assert len(kept) < len(paths)
    # One let go is loaded again when asked for: the same file, the same settings.
    again = model.load_linked(paths[1])
    assert again is not None and again is not second
    assert again.text == second.text and again.settings == second.settings
    assert model.loaded_text(paths[5]) is not None  # the most recent stay loaded


def test_a_linked_file_larger_than_the_budget_is_still_kept_while_it_is_the_latest(tmp_path: Path) -> None:
    from precisionlint.project.model import LINKED_TEXT_BUDGET, ProjectModel

    big = tmp_path / "big_train.py"
    big.write_text(_script(0, LINKED_TEXT_BUDGET + 1024))
    model = ProjectModel()
    document = model.load_linked(str(big))
    assert document is not None and model.load_linked(str(big)) is document


def test_the_json_report_holds_one_files_line_starts_at_a_time() -> None:
    # 200 reported files of 2,000 lines, each with a fix to place: every file's line starts kept to the end of
    # the report, and the whole array encoded at once, peaked at 16.7 MB; one file's at a time, and each object
    # written as it is made, at 1.0 MB.
    import io

    from precisionlint.core.model import Edit, Finding, Fix, Severity, Span
    from precisionlint.output import render

    text = "x = 1\n" * 2000
    sources = {f"train_{index}.py": text for index in range(200)}
    fix = Fix("replace", "safe", (Edit(6000, 6001, "2"),))
    findings = [Finding("PL101", "legacy-precision-value", Severity.WARNING, path, Span(1001, 5, 1001, 6), "m", fix)
                for path in sorted(sources)]
    stream = io.StringIO()
    tracemalloc.start()
    try:
        render("json", findings, stream, rules=all_rules(), sources=sources)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert '"location": {\n' in stream.getvalue()
    assert peak < 4_000_000, peak  # 1.0 MB here (the report's own text included); 16.7 MB before


def test_a_run_keeps_the_checked_contents_digests_only_for_add_noqa(tmp_path: Path, monkeypatch: Any) -> None:
    # --add-noqa compares each file with the content it was checked in; any other run has no use for a digest
    # per analysed file (kept to the end of the run, they grew with the tree).
    from precisionlint.cli import check_command
    from precisionlint.cli.check_options import parse_fast
    from precisionlint.run import runner

    (tmp_path / "train.py").write_text("import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n")
    outcomes: list[Any] = []
    checked = runner.run_check

    def keeping(request: Any) -> Any:
        outcomes.append(checked(request))
        return outcomes[-1]

    monkeypatch.setattr(runner, "run_check", keeping)
    monkeypatch.chdir(tmp_path)
    for options in (["--exit-zero"], ["--add-noqa"]):
        values = parse_fast(["--no-progress", "--no-cache", *options, "train.py"])
        assert values is not None
        assert check_command.execute(values) == 0
    plain, adding = outcomes
    assert plain.findings and plain.digests == {}
    assert list(adding.digests) == ["train.py"]


_DEPRECATED = "import torch\n# file {index}\nwith torch.cuda.amp.autocast():\n    pass\n"  # a finding with a fix


def test_findings_from_the_workers_share_their_texts(tmp_path: Path, monkeypatch: Any) -> None:
    from precisionlint.run import parallel

    monkeypatch.setattr(parallel, "MIN_BYTES_FOR_POOL", 1)  # a pool for a small tree
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 200)  # a few files a chunk: many results, from both workers
    sources = []
    for index in range(40):
        path = tmp_path / f"train{index}.py"
        path.write_text(_DEPRECATED.format(index=index))  # a distinct content each: each is analysed
        sources.append(SourceFile(str(path), path.name, "python"))
    in_process = [result.findings for result in check_all(sources, EngineOptions(all_rules()), 1)]
    pooled = [result.findings for result in check_all(sources, EngineOptions(all_rules()), 2)]
    assert pooled == in_process  # the same findings, value for value
    findings = [finding for found in pooled for finding in found]
    assert len(findings) >= 40
    for field in ("code", "name", "message", "notes"):
        first: dict[Any, Any] = {}
        for finding in findings:
            value = getattr(finding, field)
            assert first.setdefault(value, value) is value, field  # one object for each distinct text
    descriptions = {id(finding.fix.description) for finding in findings if finding.fix is not None}
    assert len(descriptions) == len({finding.fix.description for finding in findings if finding.fix is not None})
