"""The files a walk found, kept as a folder table and a name per file rather than a SourceFile per file.

A run holds the list of its files from discovery to the end, in the process that reads them while the workers
check them. As SourceFile tuples each file costs its tuple and its path: about 300 bytes with a long absolute
path (8,000 files: 2.4 MB, and the pages of everything discovery made and dropped around them stay with the
process, since those strings keep them in use). Kept here, a file costs a folder number, a format code and its
name, interned: names recur across folders and copies of a tree (`__init__.py`, `train.py`, `config.yaml`). A
SourceFile is made when one is asked for, equal to the one discovery would have made.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import SourceFile

if TYPE_CHECKING:
    from typing import overload

    from precisionlint.core.model import Format

# SourceFile's fields as tuple.__new__ takes them: what SourceFile(...) does, without its keyword handling in
# Python (a third of the cost of making one).
_tuple = tuple.__new__
_FORMATS: tuple[Format, ...] = ("python", "yaml", "json", "toml", "shell", "notebook")
_CODE = {fmt: code for code, fmt in enumerate(_FORMATS)}
_FORMAT_BITS = 3  # enough for _FORMATS
_ODD = (1 << _FORMAT_BITS) - 1  # the code of a file kept as its SourceFile (one not spelled folder + name)


class ListedFiles(Sequence[SourceFile]):
    """Files in the order added. `folder(fs_prefix, shown_prefix)` numbers a folder (its path on disk and as
    shown, each ending in a separator, or "" for the working directory); `add(folder, name, fmt)` adds the file
    `name` in it, whose path is fs_prefix + name and whose name shown is shown_prefix + name; `append(source)`
    adds any other SourceFile as it is. `links`: the indices of the files that are symbolic links, in order, which
    `mark_link` adds to (discovery knows them: the walk's listing says so, and git's files are looked at with
    lstat)."""

    __slots__ = ("_folders", "_meta", "_names", "links")

    def __init__(self) -> None:
        self._folders: list[tuple[str, str]] = []
        self._meta = array("I")  # folder number << _FORMAT_BITS | format code, per file
        self._names: list[str | SourceFile] = []
        # Indices, in order: 4 bytes each (a set of ints cost 120: 0.5 MB for a tree with 4,400 links).
        self.links = array("I")

    def mark_link(self) -> None:
        """The file added last is a symbolic link."""
        index = len(self._names) - 1
        if not self.links or self.links[-1] != index:
            self.links.append(index)

    def folder(self, fs_prefix: str, shown_prefix: str) -> int:
        # One string for both where they are spelled alike (a folder named by its path).
        self._folders.append((fs_prefix, fs_prefix if shown_prefix == fs_prefix else shown_prefix))
        return len(self._folders) - 1

    def add(self, folder: int, name: str, fmt: Format) -> None:
        code = _CODE.get(fmt)
        if code is None or folder >= 1 << (32 - _FORMAT_BITS):
            fs_prefix, shown_prefix = self._folders[folder]
            self.append(SourceFile(fs_prefix + name, shown_prefix + name, fmt))
            return
        self._meta.append(folder << _FORMAT_BITS | code)
        self._names.append(sys.intern(name))

    def append(self, source: SourceFile) -> None:
        self._meta.append(_ODD)
        self._names.append(source)

    def __len__(self) -> int:
        return len(self._names)

    if TYPE_CHECKING:  # typing.overload: not imported at run time (core/light_typing.py)
        @overload
        def __getitem__(self, index: int) -> SourceFile: ...

        @overload
        def __getitem__(self, index: slice) -> list[SourceFile]: ...

    def __getitem__(self, index: int | slice) -> SourceFile | list[SourceFile]:
        if isinstance(index, slice):
            return [self._make(i) for i in range(*index.indices(len(self._names)))]
        if index < 0:
            index += len(self._names)
        if not 0 <= index < len(self._names):
            raise IndexError("file index out of range")
        return self._make(index)

    def __iter__(self) -> Iterator[SourceFile]:
        # As _make, inline: a run goes through its files several times (grouping, keys, the reading loop).
        folders, meta, formats = self._folders, self._meta, _FORMATS
        for index, name in enumerate(self._names):
            if type(name) is str:
                code = meta[index]
                fs_prefix, shown_prefix = folders[code >> _FORMAT_BITS]
                fs_path = fs_prefix + name
                yield _tuple(SourceFile, (fs_path, fs_path if shown_prefix is fs_prefix else shown_prefix + name,
                                          formats[code & _ODD]))
            else:
                yield name  # type: ignore[misc]

    def _make(self, index: int) -> SourceFile:
        name = self._names[index]
        if type(name) is not str:
            return name  # type: ignore[return-value]
        meta = self._meta[index]
        fs_prefix, shown_prefix = self._folders[meta >> _FORMAT_BITS]
        fs_path = fs_prefix + name
        return _tuple(SourceFile, (fs_path, fs_path if shown_prefix is fs_prefix else shown_prefix + name,
                                   _FORMATS[meta & _ODD]))


def files_of(sources: Sequence[SourceFile]) -> Sequence[SourceFile]:
    """`sources` itself when it is a ListedFiles (kept compact), else a list of them."""
    return sources if isinstance(sources, ListedFiles) else list(sources)
