"""Which rules and target GPUs apply to the files of one configuration: the configuration's select, ignore and
gpus, with the command line's (or the editor's) options over them, as ruff combines them. Shared by `check`,
`advise` (the default selection) and the language server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.run.config import UsageError

if TYPE_CHECKING:
    from typing import Any


def comma_separated(values: Sequence[str]) -> list[str]:
    """The values of a repeatable option, each of which may list several, comma-separated."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


# Rules that run only when selected by name, code or "ALL" (as ruff's RUF100): the default selection leaves them
# out.
OPT_IN_RULES = frozenset({"unused-suppression"})


def default_rules() -> list[Any]:
    from precisionlint.checks import all_rules

    return [r for r in all_rules() if r.name not in OPT_IN_RULES]


def _expand(selectors: list[str], where: str) -> set[str]:
    from precisionlint.checks import did_you_mean, expand_selector

    codes: set[str] = set()
    for selector in selectors:
        found = expand_selector(selector)
        if not found:
            raise UsageError(f"{where}: unknown rule or code '{selector}'{did_you_mean(selector)}")
        codes.update(r.code for r in found)
    return codes


def resolve_rules(select: list[str], ignore: list[str], extend_select: Sequence[str] = ()) -> list[Any]:
    """The rules of `select` (empty: the default selection) plus `extend_select`, minus `ignore`; raises
    UsageError for an unknown selector (the option is named)."""
    from precisionlint.checks import all_rules

    selected = _expand(select, "--select") if select else {r.code for r in default_rules()}
    selected |= _expand(list(extend_select), "--extend-select")
    selected -= _expand(ignore, "--ignore")
    return [r for r in all_rules() if r.code in selected]


def rules_for(config: Any, values: dict[str, Any]) -> list[Any]:
    """A file's rules: the command line's --select replaces the configuration's select; extend-select and every
    ignore add up (as in ruff). Errors name the option, or the configuration file and its key."""
    from precisionlint.checks import all_rules
    from precisionlint.run.config import ConfigError

    source = config.label
    cli_select = comma_separated(values.get("select", ()))
    try:
        if cli_select:
            selected = _expand(cli_select, "--select")
        elif config.select is not None:
            selected = _expand(config.select, f"{source}: select")
        else:
            selected = {r.code for r in default_rules()}
        selected |= _expand(config.extend_select, f"{source}: extend-select")
        selected |= _expand(comma_separated(values.get("extend_select", ())), "--extend-select")
        selected -= _expand(config.ignore, f"{source}: ignore")
        selected -= _expand(config.extend_ignore, f"{source}: extend-ignore")
        selected -= _expand(comma_separated(values.get("ignore", ())), "--ignore")
        selected -= _expand(comma_separated(values.get("extend_ignore", ())), "--extend-ignore")
    except UsageError as exc:
        if f"{source}: " in str(exc):
            raise ConfigError(str(exc)) from None
        raise
    return [r for r in all_rules() if r.code in selected]


def gpus_for(config: Any, values: dict[str, Any]) -> tuple[Any, ...]:
    """A file's target GPUs: --gpu, else the configuration's gpus; cards from custom-gpus are known by name."""
    names = comma_separated(values.get("gpus", ()))
    from_cli = bool(names)
    if not names:
        names = list(config.gpus)
    if not names:
        return ()  # before any import: a check without GPUs never loads the hardware table
    from functools import partial

    from precisionlint.advise.local_gpus import local_gpus
    from precisionlint.hardware.gpu import UnknownGpuError
    from precisionlint.hardware.targets import resolve_targets
    from precisionlint.run.config import ConfigError

    try:
        targets = _resolve_quietly(partial(resolve_targets, local=local_gpus), names, config.custom_gpus)
    except UnknownGpuError as exc:
        if from_cli:
            raise UsageError(f"--gpu: {exc}") from None
        raise ConfigError(f"{config.label}: gpus: {exc}") from None
    except ValueError as exc:  # a bad custom-gpus entry
        raise ConfigError(f"{config.label}: custom-gpus: {exc}") from None
    if not targets and any(n.lower() == "auto" for n in names) and not _NOTED["auto"]:
        _NOTED["auto"] = True
        sys.stderr.write("precisionlint: warning: --gpu auto found no GPU on this machine (no nvidia-smi and no "
                         "CUDA device visible to PyTorch); the rules that need a target GPU are off\n")
    return targets


_NOTED = {"auto": False}


def _resolve_quietly(resolve: Any, names: list[str], custom: dict[str, Any]) -> Any:
    """Resolve GPU names with torch's warnings (a CUDA initialisation UserWarning on a machine without a driver)
    kept off the user's terminal: `auto` may fall back to asking PyTorch."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve(names, custom=custom)
