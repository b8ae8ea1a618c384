"""The rule registry.

Every module in this package is one rule. A rule module has a docstring in the ruff style
(## What it does / ## Why is this bad? / ## Example / ## Use instead / ## Fix safety / ## References)
and these module-level names:

    CODE = "PL104"                       # stable code, never reused
    NAME = "tf32-ignored-under-mixed-precision"   # stable public name
    SEVERITY = Severity.WARNING          # default severity
    SUMMARY = "one line shown by `precisionlint rules`"
    TARGET = "settings" | "script"       # settings: runs on every Document's canonical settings;
                                         # script: runs on Python files only, through ctx.script
    NEEDS_GPU = False                    # True: silent unless target GPUs are known (ctx.gpus)
    READS = "lightning, torch"           # what it reads, for `precisionlint rules`: framework names
                                         # (precisionlint/frameworks) and the words of READ_KINDS
    def check(ctx: CheckContext) -> Iterable[Finding]: ...

Rules are discovered by listing this package, so adding a rule is adding a module.
Modules whose name starts with "_" are helpers, not rules.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from precisionlint.model import Document, Finding, Fix, Related, Severity, Span

if TYPE_CHECKING:
    from precisionlint.hardware import Gpu
    from precisionlint.project import Project
    from precisionlint.script.model import ScriptModel


class Rule:
    """A rule's identity and metadata. Rules of this package know only their module's name until they run
    or their documentation is asked for: a `check` of a TOML file does not import the script rules."""

    __slots__ = ("code", "name", "severity", "summary", "target", "needs_gpu", "fixable", "module", "reads", "_doc",
                 "_func")

    def __init__(
        self,
        code: str,
        name: str,
        severity: Severity,
        summary: str,
        doc: str | None,
        target: str,
        needs_gpu: bool,
        fixable: bool,
        func: Callable[[CheckContext], Iterable[Finding]] | None,
        module: str | None = None,
        reads: tuple[str, ...] = (),
    ) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.summary = summary
        self.target = target
        self.needs_gpu = needs_gpu
        self.fixable = fixable
        self.module = module
        self.reads = reads  # framework names and READ_KINDS words: what the rule looks at
        self._doc = doc
        self._func = func

    @property
    def doc(self) -> str:
        if self._doc is None:
            self._doc = (_module(self.module).__doc__ or "").strip()
        return self._doc

    @property
    def func(self) -> Callable[[CheckContext], Iterable[Finding]]:
        if self._func is None:
            self._func = _module(self.module).check
        return self._func

    def __getstate__(self) -> tuple[object, ...]:
        # Worker processes import the module themselves; functions and docs do not travel.
        return (self.code, self.name, self.severity, self.summary, self._doc if self.module is None else None,
                self.target, self.needs_gpu, self.fixable, self._func if self.module is None else None, self.module,
                self.reads)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and (self.code, self.name) == (other.code, other.name)

    def __hash__(self) -> int:
        return hash((self.code, self.name))

    def __repr__(self) -> str:
        return f"Rule({self.code}, {self.name})"


def _module(name: str | None) -> Any:
    if name is None:
        raise LookupError("an engine rule has no module")
    return importlib.import_module(f"{__name__}.{name}")


class CheckContext:
    """What a rule sees: one document, the run's target GPUs, and a way to report."""

    def __init__(self, document: Document, rule: Rule, gpus: tuple[Gpu, ...] = ()) -> None:
        self.document = document
        self.rule = rule
        self.gpus = gpus

    @property
    def settings(self) -> list[Any]:
        return self.document.settings

    @property
    def script(self) -> ScriptModel:
        """The training-step model of a Python document, built once per document and shared by all rules."""
        cached = self.document.__dict__.get("_script_model")
        if cached is None:
            from precisionlint.script.model import build_script_model

            cached = build_script_model(self.document)
            self.document.__dict__["_script_model"] = cached
        return cached

    @property
    def project(self) -> Project:
        """The project around the document (declared versions, linked files), built lazily and shared."""
        from precisionlint.project import project_of

        return project_of(self.document)

    def linked(self, literal: object, base: str | None = None) -> tuple[str, Document] | None:
        """The file a path written in the checked document (or in the file `base`) names, with its document
        (Project.linked)."""
        from precisionlint.project import disk_path

        return self.project.linked(disk_path(self.document) if base is None else base, literal)

    def report(
        self,
        span: Span,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
        related: tuple[Related, ...] = (),
    ) -> Finding:
        return Finding(
            code=self.rule.code,
            name=self.rule.name,
            severity=severity if severity is not None else self.rule.severity,
            path=self.document.path,
            span=span,
            message=message,
            fix=fix,
            related=related,
        )


# What a rule may read besides a framework's settings (READS names frameworks by their NAME in
# precisionlint/frameworks, and these words for the rest), with how `precisionlint rules` shows each.
READ_KINDS = {
    "any-framework": "any framework's precision setting",
    "torch": "PyTorch code",
    "python": "Python files",
    "yaml": "YAML files",
    "json": "JSON files",
    "launchers": "launch scripts",
    "pins": "version pins",
    "comments": "suppression comments",
    "every-file": "every file",
}


def parse_reads(text: str) -> tuple[str, ...]:
    return tuple(word.strip() for word in text.split(",") if word.strip())


_RULES: dict[str, Rule] | None = None


# The metadata a rule module declares at top level, read from its source text so that listing the rules does
# not import them (tests/test_registry.py proves the text and the imported module agree for every rule).
_METADATA = re.compile(
    r'^(CODE|NAME|SUMMARY|TARGET|READS) = "((?:[^"\\\n]|\\.)*)"$|^SEVERITY = Severity\.(ERROR|WARNING|INFO)$'
    r"|^(NEEDS_GPU|FIXABLE) = (True|False)$",
    re.MULTILINE,
)


def _metadata(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    found: dict[str, Any] = {"NEEDS_GPU": False, "FIXABLE": False}
    for match in _METADATA.finditer(text):
        if match.group(1):
            if "\\" in match.group(2):
                return None  # an escape sequence: let the import read it
            found[match.group(1)] = match.group(2)
        elif match.group(3):
            found["SEVERITY"] = Severity[match.group(3)]
        else:
            found[match.group(4)] = match.group(5) == "True"
    required = ("CODE", "NAME", "SUMMARY", "TARGET", "SEVERITY")
    return found if all(key in found for key in required) else None


# The scanned metadata is kept in the package's __pycache__ beside the bytecode, keyed (as Python keys a .pyc,
# and more strictly) on each rule file's name, size, modification and change times in nanoseconds and inode:
# reading 34 sources with a regular expression on every run costs a one-file check a few milliseconds, one
# scandir with a stat per file well under one. Any edit, added, removed or renamed rule file changes the key and
# the sources are scanned again; a file written too recently for its stat to show a later write (racy git, see
# precisionlint.cache.settled) is scanned but not recorded, and a rule whose metadata needed an import (its
# values may be computed from other modules) is never recorded. It is data, not bytecode: it is written even
# under PYTHONDONTWRITEBYTECODE (as the result cache is), and a read-only installation just scans every time.
_REGISTRY_CACHE = "rule-metadata.json"
_REGISTRY_FORMAT = 1


def _rule_files(folder: str) -> list[tuple[str, os.stat_result]] | None:
    try:
        with os.scandir(folder) as entries:
            found = [(entry.name[:-3], entry.stat()) for entry in entries
                     if entry.name.endswith(".py") and not entry.name.startswith("_")]
    except OSError:
        return None
    return sorted(found, key=lambda item: item[0])


def _files_key(files: list[tuple[str, os.stat_result]]) -> list[list[Any]]:
    return [[name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino] for name, info in files]


def _cached_metadata(folder: str, key: list[list[Any]]) -> dict[str, dict[str, Any]] | None:
    import json

    try:
        with open(os.path.join(folder, "__pycache__", _REGISTRY_CACHE), encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("format") != _REGISTRY_FORMAT or stored.get("files") != key:
        return None
    rules = stored.get("rules")
    return rules if isinstance(rules, dict) else None


def _store_metadata(folder: str, files: list[tuple[str, os.stat_result]], key: list[list[Any]],
                    scanned: dict[str, dict[str, Any]]) -> None:
    import json
    import time
    from pathlib import Path

    from precisionlint.cache import USES_INDEX, _replace, settled

    if not USES_INDEX:
        return  # no trustworthy change time (Windows)
    now = time.time_ns()
    if len(scanned) != len(files) or not all(settled(info, now) for _, info in files):
        return
    rows = {name: {**meta, "SEVERITY": meta["SEVERITY"].name} for name, meta in scanned.items()}
    body = json.dumps({"format": _REGISTRY_FORMAT, "files": key, "rules": rows}, sort_keys=True)
    cache_folder = os.path.join(folder, "__pycache__")
    try:
        os.makedirs(cache_folder, exist_ok=True)
        _replace(Path(cache_folder) / _REGISTRY_CACHE, body.encode("utf-8"))
    except OSError:
        pass  # a read-only installation: scan again next time


def _scanned_metadata(folder: str) -> dict[str, dict[str, Any] | None]:
    """Each rule module's metadata as its source text declares it (None: it must be imported to be known)."""
    files = _rule_files(folder)
    if files is None:
        return {}
    key = _files_key(files)
    cached = _cached_metadata(folder, key)
    if cached is not None and set(cached) == {name for name, _ in files}:
        try:
            return {name: {**meta, "SEVERITY": Severity[meta["SEVERITY"]]} for name, meta in cached.items()}
        except (KeyError, TypeError):
            pass  # not a table this code wrote: scan
    found: dict[str, dict[str, Any] | None] = {name: _metadata(os.path.join(folder, f"{name}.py")) for name, _ in files}
    scanned = {name: meta for name, meta in found.items() if meta is not None}
    _store_metadata(folder, files, key, scanned)
    return found


def _load() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    # The package directory, listed directly: pkgutil.iter_modules would import inspect, a sizeable part of
    # a one-file check's start-up.
    folder = __path__[0]
    for name, meta in _scanned_metadata(folder).items():
        if meta is None:  # written some other way (or no source installed): import it to find out
            module = _module(name)
            meta = {key: getattr(module, key) for key in ("CODE", "NAME", "SUMMARY", "TARGET", "SEVERITY")}
            meta["NEEDS_GPU"] = getattr(module, "NEEDS_GPU", False)
            meta["FIXABLE"] = getattr(module, "FIXABLE", False)
            meta["READS"] = getattr(module, "READS", "")
        rule = Rule(
            code=meta["CODE"],
            name=meta["NAME"],
            severity=meta["SEVERITY"],
            summary=meta["SUMMARY"],
            doc=None,
            target=meta["TARGET"],
            needs_gpu=meta["NEEDS_GPU"],
            fixable=meta["FIXABLE"],
            func=None,
            module=name,
            reads=parse_reads(meta.get("READS", "")),
        )
        for other in rules.values():
            if other.code == rule.code or other.name == rule.name:
                raise RuntimeError(f"duplicate rule {rule.code} {rule.name} in {name}")
        rules[rule.code] = rule
    return dict(sorted(rules.items()))


def all_rules() -> list[Rule]:
    global _RULES
    if _RULES is None:
        from precisionlint.checks import _meta  # noqa: F401  (the built-in, non-module rules)

        _RULES = {**_meta.META_RULES, **_load()}
        _RULES = dict(sorted(_RULES.items()))
    return list(_RULES.values())


def find_rule(name_or_code: str) -> Rule | None:
    key = name_or_code.strip()
    for rule in all_rules():
        if rule.code.lower() == key.lower() or rule.name == key.lower():
            return rule
    return None


def expand_selector(selector: str) -> list[Rule]:
    """A selector is a rule name, a code, a code prefix ("PL1", "PL"), or "ALL"."""
    key = selector.strip()
    if key.upper() == "ALL":
        return all_rules()
    exact = find_rule(key)
    if exact is not None:
        return [exact]
    return [r for r in all_rules() if r.code.upper().startswith(key.upper()) and len(key) >= 2]
