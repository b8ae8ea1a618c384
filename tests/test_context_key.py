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
