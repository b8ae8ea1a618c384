"""Which branch of a torch version test a range of torch releases takes (script/version_tests.py)."""

from __future__ import annotations

import ast

import pytest

from precisionlint.project.versions import Bound
from precisionlint.script.version_tests import Gate, is_version_test, outcome, taken


def _test(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


WARNS = (2, 4)


@pytest.mark.parametrize(
    ("source", "floor", "ceiling", "expected"),
    [
        ('version.parse(torch.__version__) >= version.parse("1.6")', WARNS, None, True),
        ('LooseVersion(torch.__version__) < LooseVersion("1.6.0")', WARNS, None, False),
        ('Version("1.10") <= Version(torch.__version__)', WARNS, None, True),  # written the other way round
        ('digit_version(TORCH_VERSION) > digit_version("2.0")', WARNS, None, True),
        ('torch_version < version.parse("2.4.0")', WARNS, None, False),
        ('version.parse(torch.__version__) >= version.parse("2.5")', WARNS, None, None),  # 2.4 and 2.5 differ
        ('version.parse(torch.__version__) >= version.parse("2.5")', (2, 5), None, True),  # the project's floor
        ('version.parse(torch.__version__) >= version.parse("2.5")', WARNS, Bound((2, 5), False), False),
        ('not version.parse(torch.__version__) < version.parse("1.6")', WARNS, None, True),
        ("is_torch_greater_or_equal_than_1_10", WARNS, None, True),  # Transformers' flags
        ("pytorch_utils.is_torch_less_than_1_11", WARNS, None, False),
        ("_TORCH_GREATER_EQUAL_2_4", WARNS, None, True),  # Lightning's
        ("_TORCH_GREATER_EQUAL_2_5", WARNS, None, None),
        ("_TORCH_LESS_EQUAL_1_10_2", WARNS, None, False),
        ('version.parse(torch.__version__) >= version.parse("1.6") and version.parse(torch.__version__) '
         '< version.parse("2.5")', WARNS, None, None),
        ('version.parse(torch.__version__) < version.parse("1.6") or version.parse(torch.__version__) '
         '< version.parse("1.8")', WARNS, None, False),
    ],
)
def test_outcome_over_a_range_of_releases(source: str, floor: tuple[int, ...], ceiling: Bound | None,
                                          expected: bool | None) -> None:
    assert outcome(_test(source), floor, ceiling) is expected


@pytest.mark.parametrize(
    "source",
    [
        'torch.__version__ >= "1.6"',  # a string comparison: "2.10" < "2.4"
        'hasattr(torch, "amp")',
        "TORCH_AT_LEAST_TWO",  # a flag computed elsewhere
        "_TORCH_GREATER_EQUAL_2_4x",
        'version.parse(other.__version__) >= version.parse("1.6")',  # not torch
        'version.parse(torch.__version__) >= version.parse(minimum)',  # not a literal
        'version.parse(torch.__version__) >= version.parse("1.6") and cuda_ok',
    ],
)
def test_tests_that_are_not_read(source: str) -> None:
    test = _test(source)
    assert not is_version_test(test)
    assert outcome(test, WARNS, None) is None


def test_a_branch_is_taken_only_when_every_gate_agrees() -> None:
    newer = _test('version.parse(torch.__version__) >= version.parse("1.6")')
    later = _test('version.parse(torch.__version__) >= version.parse("2.5")')
    assert taken((Gate(newer, True),), WARNS, None)
    assert not taken((Gate(newer, False),), WARNS, None)
    assert not taken((Gate(newer, True), Gate(later, True)), WARNS, None)
    assert not taken((), WARNS, None)
