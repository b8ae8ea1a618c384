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
    def check(ctx: CheckContext) -> Iterable[Finding]: ...

Rules are discovered by listing this package, so adding a rule is adding a module.
Modules whose name starts with "_" are helpers, not rules.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from precisionlint.model import Document, Finding, Fix, Severity, Span

if TYPE_CHECKING:
    from precisionlint.hardware import Gpu
    from precisionlint.script.model import ScriptModel


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    doc: str
    target: str
    needs_gpu: bool
    fixable: bool
    func: Callable[[CheckContext], Iterable[Finding]]


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

    def report(
        self,
        span: Span,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        return Finding(
            code=self.rule.code,
            name=self.rule.name,
            severity=severity if severity is not None else self.rule.severity,
            path=self.document.path,
            span=span,
            message=message,
            fix=fix,
        )


_RULES: dict[str, Rule] | None = None


def _load() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = Rule(
            code=module.CODE,
            name=module.NAME,
            severity=module.SEVERITY,
            summary=module.SUMMARY,
            doc=(module.__doc__ or "").strip(),
            target=module.TARGET,
            needs_gpu=getattr(module, "NEEDS_GPU", False),
            fixable=getattr(module, "FIXABLE", False),
            func=module.check,
        )
        for other in rules.values():
            if other.code == rule.code or other.name == rule.name:
                raise RuntimeError(f"duplicate rule {rule.code} {rule.name} in {info.name}")
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
