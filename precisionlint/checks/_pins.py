"""Fix safety that follows the project's declared versions: a fix that writes a newer API or spelling is safe
only where every version the project allows has it (its floor); below that floor, or where nothing is
declared, it is unsafe and its description names the version it needs."""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.project.versions import Version, show

if TYPE_CHECKING:
    from precisionlint.checks import CheckContext

# How a framework is named to users, and the distribution name `declared()` shows when nothing else is known.
_TITLES = {"torch": ("torch", "torch"), "lightning": ("Lightning", "lightning"),
           "transformers": ("Transformers", "transformers"), "deepspeed": ("DeepSpeed", "deepspeed"),
           "accelerate": ("Accelerate", "accelerate")}


def floor_has(ctx: CheckContext, framework: str, needed: Version) -> tuple[bool, str]:
    """(whether the project's declared floor of `framework` is `needed` or newer, and when it is not, a note
    for the fix's description: "needs Lightning 2.0 or newer, and this project declares no Lightning
    version")."""
    title, package = _TITLES.get(framework, (framework, framework))
    found = ctx.project.version(framework)
    if found is not None and found.all_at_least(needed):
        return True, ""
    wanted = f"{title} {show(needed)} or newer"
    if found is None:
        return False, f"needs {wanted}, and this project declares no {title} version"
    return False, f"needs {wanted}, and this project declares {found.declared(package)}"
