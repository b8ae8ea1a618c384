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

    NEEDS_PROJECT = False                # True: its findings read the project around the file (pins, linked
                                         # files, the accelerator it targets): results are cached per project
    FIXABLE = False                      # True: it offers fixes

and the words without which it has nothing to report (the engine's prefilter and gate are their unions with
the frameworks' own CONFIG_WORDS and PYTHON_WORDS, through the generated catalog; leave out what the frameworks it
reads already declare):

    CONFIG_WORDS = (b"deepspeed_config",)   # a TOML, YAML or JSON file or a launch script it reports on holds one
    PYTHON_WORDS = (b"autocast",)           # a Python file (or notebook) it reports on holds one
    MODEL_WORDS = ("autocast",)             # script rules: a file whose training-step model it reports on holds one
    TREE_WORDS = ("DelayedScaling",)        # settings rules that read a Python tree themselves: a file that holds
                                            # one is parsed for the rule (and passes the prefilter)

Adding a rule is adding a module and running `python -m precisionlint.checks.make_catalog`, which copies the
declarations into catalog.py so that listing the rules imports no rule module (tests/test_catalog.py fails until
the catalog is in step). Modules whose name starts with "_" are helpers, not rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Finding, Fix, Related, Severity, Span

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.hardware.gpu import Gpu
    from precisionlint.project import Project
    from precisionlint.script.model import ScriptModel


class Rule:
    """A rule's identity and metadata. Rules of this package know only their module's name until they run
    or their documentation is asked for: a `check` of a TOML file does not import the script rules."""

    __slots__ = ("code", "name", "severity", "summary", "target", "needs_gpu", "fixable", "module", "reads",
                 "needs_project", "_doc", "_func")

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
        needs_project: bool = False,
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
        self.needs_project = needs_project  # its findings depend on the project around the file (pins, links)
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
                self.reads, self.needs_project)

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
    def reached_settings(self) -> list[Any]:
        """Settings whose value reaches a framework's call through the script (an argparse default, an arm of a
        conditional, a helper's return: precisionlint.values.settings), each at the span where it is written.
        A rule that judges values reads them beside `settings`; report() then names where each comes from."""
        if not self.document.unresolved_values:
            return []
        from precisionlint.checks._attribution import is_test_code

        if is_test_code(self.document.path):
            return []  # a test passes values on purpose (a parametrized precision, a value it expects to fail)
        from precisionlint.values.settings import reached_settings

        return reached_settings(self.document)

    @property
    def judged_settings(self) -> list[Any]:
        """`settings` and the values of `reached_settings` that the program writes (not an option's choices,
        which the launch picks)."""
        reached = self.reached_settings
        if not reached:
            return self.document.settings
        from precisionlint.values.settings import chosen_at_launch

        return self.document.settings + [s for s in reached if not chosen_at_launch(s)]

    @property
    def offered_settings(self) -> list[Any]:
        """`settings` and every value of `reached_settings`, an option's choices included: a choice the framework
        rejects is a value the program offers and then fails on."""
        reached = self.reached_settings
        return self.document.settings + reached if reached else self.document.settings

    @property
    def script(self) -> ScriptModel:
        """The training-step model of a Python document, built once per document and shared by all rules."""
        cached = self.document.script_model
        if cached is None:
            from precisionlint.script.build import build_script_model

            cached = self.document.script_model = build_script_model(self.document)
        return cached  # type: ignore[no-any-return]

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
        origin: Any = None,
    ) -> Finding:
        """A finding of this rule. A message is what is wrong and what to do; each further line of it (after a
        newline: the rule's explanation, the evidence for its reading of the file) becomes a note. `origin`: the
        reported setting's (Setting.origin), needed where values written in other files (several launch lines,
        config keys) are reported at one keyword; a value written in this file is known by `span`."""
        message, *notes = message.split("\n")
        if origin is None or not origin.call.path:  # a value written in this file: its place says it all
            origins = self.document.value_origins
            origin = origins.get(span) if origins else None
        if origin is not None:
            # A value reached through the script (reached_settings): say where it comes from and when; a value on
            # some paths only is at most a warning; the framework's call is a related location; no fix.
            if origin.call.path or origin.call.span != span:
                message = f"{message} ({origin.note()})"
                related = (*related, origin.call)
            elif origin.conditions:  # built at the call itself (`f"{bits}-mixed"`): only the condition is news
                message = f"{message} (when {' and '.join(origin.conditions)})"
            chosen = severity if severity is not None else self.rule.severity
            severity = chosen if origin.every_path else min(chosen, Severity.WARNING)
            fix = None
        return Finding(
            code=self.rule.code,
            name=self.rule.name,
            severity=severity if severity is not None else self.rule.severity,
            path=self.document.path,
            span=span,
            message=message.strip(),
            fix=fix,
            related=related,
            notes=tuple(note.strip() for note in notes if note.strip()),
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
    "rl": "RL trainers' configs (verl, NeMo-RL, OpenRLHF, TRL GRPO)",
    "pins": "version pins",
    "comments": "suppression comments",
    "every-file": "every file",
}


def parse_reads(text: str) -> tuple[str, ...]:
    return tuple(word.strip() for word in text.split(",") if word.strip())


_RULES: dict[str, Rule] | None = None


def _load() -> dict[str, Rule]:
    """The rules the generated catalog lists (precisionlint/checks/make_catalog.py writes it from each module's
    declarations; tests/test_catalog.py keeps the two in step), without importing any rule module."""
    from precisionlint.checks.catalog import ROWS

    rules: dict[str, Rule] = {}
    for module, code, name, severity, summary, target, reads, needs_gpu, needs_project, fixable in ROWS:
        rule = Rule(
            code=code,
            name=name,
            severity=Severity[severity],
            summary=summary,
            doc=None,
            target=target,
            needs_gpu=needs_gpu,
            fixable=fixable,
            func=None,
            module=module,
            reads=parse_reads(reads),
            needs_project=needs_project,
        )
        for other in rules.values():
            if other.code == rule.code or other.name == rule.name:
                raise RuntimeError(f"duplicate rule {rule.code} {rule.name} in {module}")
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


def did_you_mean(selector: str) -> str:
    """'; did you mean X?' for an unknown rule selector, or a pointer to the rule list."""
    import difflib

    names = [r.name for r in all_rules()]
    key = selector.strip().lower()
    close = [n for n in names if n.startswith(key) or key in n][:3] if len(key) >= 3 else []
    close = close or difflib.get_close_matches(key, names + [r.code for r in all_rules()], n=3)
    return f"; did you mean {', '.join(close)}?" if close else "; see `precisionlint rules`"
