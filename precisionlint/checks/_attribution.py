"""How settings rules speak about the framework a setting was attributed to, and how sure that is.

An error and a safe fix need a CERTAIN attribution (the evidence names the framework: a Hydra `_target_`,
an import, a key set only it uses). A LIKELY one lowers an error to a warning, a safe fix to an unsafe one or
none, and says in the message what the attribution rests on.
"""

from __future__ import annotations

from precisionlint.core.model import Confidence, Setting, Severity


def certain(setting: Setting) -> bool:
    return setting.confidence >= Confidence.CERTAIN


def hedge(setting: Setting, title: str) -> str:
    """'' for a certain attribution, else a clause naming the evidence."""
    if certain(setting) or not setting.evidence:
        return ""
    return f"\nread as {title}'s because of {setting.evidence}"  # a note line (CheckContext.report)


def at_most_warning(setting: Setting, severity: Severity) -> Severity:
    return severity if certain(setting) else min(severity, Severity.WARNING)


_TEST_FOLDERS = frozenset({"test", "tests", "testing"})


def is_test_code(path: str) -> bool:
    """A file of a test suite (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`): tests exercise old spellings
    and unusual modes on purpose."""
    parts = path.replace("\\", "/").lower().split("/")
    name = parts[-1]
    return (any(part in _TEST_FOLDERS for part in parts[:-1]) or name.startswith("test_")
            or name.endswith("_test.py") or name == "conftest.py")
