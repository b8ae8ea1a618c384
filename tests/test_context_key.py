"""The run's context key keeps per-file state compactly: a run holds it for every file of the tree."""

from __future__ import annotations

import os
from pathlib import Path

from precisionlint.core.model import SourceFile
from precisionlint.project.model import ProjectModel, use
from precisionlint.run.context_key import ProjectContext


def test_the_stat_of_each_file_is_kept_packed_and_read_back_with_the_fields_the_run_uses(tmp_path: Path) -> None:
    use(ProjectModel())
    sources = []
    for index in range(20):
        path = tmp_path / f"f{index}.py"
        path.write_text("x = 1\n" * index)
        sources.append(SourceFile(str(path), path.name, "python"))
    missing = str(tmp_path / "gone.py")
    context = ProjectContext(sources)
    for source in sources:
        first = context.stat(source.fs_path)
        again = context.stat(source.fs_path)  # from what was kept
        real = os.stat(source.fs_path)
        for info in (first, again):
            assert info is not None
            assert (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev, info.st_mode) == (
                real.st_size, real.st_mtime_ns, real.st_ctime_ns, real.st_ino, real.st_dev, real.st_mode)
    assert context.stat(missing) is None
    assert context.stat(missing) is None
    # One small bytes object per file (44 bytes of numbers), not an os.stat_result with 19 number objects.
    kept = list(context._stats.values())
    assert len(kept) == 21
    assert all(isinstance(value, bytes) and len(value) <= 44 for value in kept)


def test_folders_of_one_project_share_one_pins_signature(tmp_path: Path) -> None:
    use(ProjectModel())
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=2.4"]\n')
    sources = []
    for index in range(3):
        folder = tmp_path / f"d{index}"
        folder.mkdir()
        (folder / "a.py").write_text("x = 1\n")
        sources.append(SourceFile(str(folder / "a.py"), f"d{index}/a.py", "python"))
    context = ProjectContext(sources)
    signatures = [context.portable(source) for source in sources]
    assert signatures[0]
    assert signatures[0] is signatures[1] is signatures[2]


def test_the_keys_do_not_keep_the_project_model_of_every_folder(tmp_path: Path) -> None:
    """The process that reads the files builds every file's key: what it keeps for each folder is a signature,
    not the model's Directory and Project (a listing, a chain, caches) for every folder of the tree; the text is
    the model's own."""
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=2.4"]\n')
    (tmp_path / "requirements.txt").write_text("lightning==2.2\n")
    sources = []
    for index in range(12):
        folder = tmp_path / f"d{index}" / "inner"
        folder.mkdir(parents=True)
        if index % 3 == 0:
            (folder.parent / "requirements.txt").write_text(f"transformers=={index}.0\n")
        (folder / "a.py").write_text("x = 1\n")
        sources.append(SourceFile(str(folder / "a.py"), f"d{index}/inner/a.py", "python"))
    model = ProjectModel()
    use(model)
    context = ProjectContext(sources)
    keys = [context.portable(source) for source in sources]
    assert not model.projects and not model.directories
    reference = ProjectModel()
    assert keys == [reference.pins_signature(os.path.dirname(source.fs_path), {}, context._started)
                    for source in sources]
    assert "transformers" not in keys[0] and "requirements.txt" in keys[0] and keys[0] != keys[1]


def test_the_loops_stat_is_not_kept_once_no_key_needs_it(tmp_path: Path) -> None:
    use(ProjectModel())
    sources = []
    for index in range(6):
        path = tmp_path / f"f{index}.py"
        path.write_text("x = 1\n")
        sources.append(SourceFile(str(path), path.name, "python"))
    config = tmp_path / "ds.json"
    config.write_text("{}\n")
    sources.append(SourceFile(str(config), config.name, "json"))
    context = ProjectContext(sources)
    first = context.stat(sources[0].fs_path, "python")  # a script's stat: the scripts' signature is still to come
    assert first is not None and len(context._stats) == 1
    context.key(sources[-1], True)  # a config's key: the signatures of the run's configs and scripts
    assert len(context._stats) + len(context._ahead) == 7
    for source in sources:
        info = context.stat(source.fs_path, source.format)
        assert info is not None and info.st_ino == os.stat(source.fs_path).st_ino
    assert not context._stats and not context._ahead


def test_the_stats_a_signature_takes_ahead_of_the_loop_are_kept_without_a_path_per_file(tmp_path: Path) -> None:
    """A config met first makes the key read the stat of every script and config of the run, which the loop then
    reads back as it reaches each: kept by position, not under a path string of each file (a walked tree's paths
    are made when asked for: run.listed)."""
    import tracemalloc

    from precisionlint.run.discover import discover

    use(ProjectModel())
    root = tmp_path / ("a-folder-with-a-long-name-as-checkouts-have-" * 3)
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "ds.json").write_text("{}\n")  # first in the order of the run
    for folder in range(40):
        inner = root / f"recipe-{folder}"
        inner.mkdir()
        for index in range(10):
            (inner / f"train_{index}.py").write_text("x = 1\n")
    sources = discover([str(root)], root).files
    context = ProjectContext(sources)
    assert context.stat(sources[0].fs_path, "json") is not None
    tracemalloc.start()
    try:
        context.key(sources[0], True)  # the signatures of the run's configs and scripts
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept / len(sources) < 200  # with each file's path as the key: about 450 bytes a file here
    for source in sources[1:]:  # the loop: the same stat the signature took
        info = context.stat(source.fs_path, source.format)
        assert info is not None and info.st_ino == os.stat(source.fs_path).st_ino
    assert not context._ahead and list(context._stats) == [sources[0].fs_path]  # the config's, as the loop took it


def test_the_signature_of_the_runs_scripts_is_hashed_line_by_line(tmp_path: Path) -> None:
    """A config's key names the stat of every script of the run: the same digest as the text of all of them, but
    that text is never made (the process that reads the files peaked when it was: 7 MB for 8,000 scripts)."""
    import tracemalloc

    from precisionlint.core.digest import content_digest
    from precisionlint.core.racy_stat import UNSETTLED
    from precisionlint.project import stat_signature

    use(ProjectModel())
    folder = tmp_path / ("a-long-folder-name-as-real-trees-have" * 3)
    folder.mkdir()
    sources = []
    for index in range(3000):
        path = folder / f"script_number_{index:05}.py"
        path.write_text("")
        sources.append(SourceFile(str(path), path.name, "python"))
    config = folder / "ds.json"
    config.write_text("{}\n")
    sources.append(SourceFile(str(config), config.name, "json"))
    context = ProjectContext(sources)
    for source in sources:
        context.stat(source.fs_path)  # as the run's loop would have
    context.portable(sources[-1])
    tracemalloc.start()
    try:
        key = context.key(sources[-1], True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    lines = []
    for source in sources[:-1]:
        info = context.stat(source.fs_path)
        assert info is not None
        lines.append(f"{source.fs_path}:{stat_signature(info, context._started)}")
    text = "\n".join(lines)  # files just written: their stat is unsettled (core.racy_stat), and the key says so
    assert key.endswith("|" + content_digest(text.encode()) + (UNSETTLED if UNSETTLED in text else ""))
    assert peak < 200_000  # the text of 3,000 lines of ~200 characters, with its list and bytes: 2 MB


def test_a_folder_named_by_its_absolute_path_is_one_string_in_both_tables_of_the_keys(tmp_path: Path) -> None:
    """The keys keep, per folder, its project's pins (by the folder as the path spells it) and what each
    directory declares (by its absolute path). For a run that names absolute paths the two are the same text:
    one string, not two per folder of the tree."""
    sources = []
    for index in range(20):
        folder = tmp_path / ("a-folder-with-a-long-name-as-checkouts-have-" * 2) / f"recipe-{index}"
        folder.mkdir(parents=True)
        (folder / "train.py").write_text("x = 1\n")
        sources.append(SourceFile(str(folder / "train.py"), f"recipe-{index}/train.py", "python"))
    use(ProjectModel())
    context = ProjectContext(sources)
    for source in sources:
        context.portable(source)
    spelled = {id(folder) for folder in context._pins_of_folder}
    assert len(spelled) == len(sources)
    assert spelled <= {id(folder) for folder in context._directories}


def test_the_stats_kept_ahead_of_the_loop_give_back_their_table_as_the_loop_takes_them(tmp_path: Path) -> None:
    """The stats a signature took ahead of the loop are taken out as the loop reaches their files; the table
    that held them shrinks with them rather than staying the size of every script and config of the run until
    the reading ends."""
    import sys

    from precisionlint.run.discover import discover

    use(ProjectModel())
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text("{}\n")  # first in the order of the run
    for folder in range(20):
        inner = tmp_path / f"recipe-{folder}"
        inner.mkdir()
        for index in range(20):
            (inner / f"train_{index}.py").write_text("x = 1\n")
    sources = discover([str(tmp_path)], tmp_path).files
    context = ProjectContext(sources)
    assert context.stat(sources[0].fs_path, "json") is not None
    context.key(sources[0], True)  # the signatures: a stat of every script, ahead of the loop
    full = sys.getsizeof(context._ahead)
    assert len(context._ahead) == len(sources) - 1
    for source in sources[1:-40]:  # the loop, up to its last 40 files
        info = context.stat(source.fs_path, source.format)
        assert info is not None and info.st_ino == os.stat(source.fs_path).st_ino
    assert len(context._ahead) == 40
    assert sys.getsizeof(context._ahead) * 4 < full
    for source in sources[-40:]:
        info = context.stat(source.fs_path, source.format)
        assert info is not None and info.st_ino == os.stat(source.fs_path).st_ino
    assert not context._ahead
