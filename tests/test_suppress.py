from __future__ import annotations

import re

from precisionlint.core.model import Document, Finding, Severity, Span
from precisionlint.engine.suppress import Suppressions


def finding(line: int, code: str = "PL104", name: str = "tf32-ignored-under-mixed-precision") -> Finding:
    return Finding(code, name, Severity.WARNING, "x", Span.point(line, 1), "m")


def test_line_directive_by_name_code_prefix_and_bare() -> None:
    text = (
        "a = 1  # precisionlint: ignore[PL104]\n"
        "b = 2  # precisionlint: ignore[PL1]\n"
        "c = 3  # precisionlint: ignore\n"
        "d = 4\n"
    )
    s = Suppressions.of(Document("x.toml", text, "toml"))
    kept = s.filter([finding(1), finding(2), finding(3), finding(4)])
    assert [f.span.line for f in kept] == [4]


def test_other_rules_on_the_line_are_kept() -> None:
    s = Suppressions.of(Document("x.yaml", "a: 1  # precisionlint: ignore[static-loss-scale]\n", "yaml"))
    assert s.filter([finding(1)]) == [finding(1)]


def test_directive_inside_a_string_is_not_a_comment() -> None:
    text = 'a = "# precisionlint: ignore"\n'
    assert Suppressions.of(Document("x.toml", text, "toml")).filter([finding(1)]) == [finding(1)]
    py = 's = "# precisionlint: ignore"\n'
    assert Suppressions.of(Document("x.py", py, "python")).filter([finding(1)]) == [finding(1)]


def test_file_ignore_on_its_own_line_only() -> None:
    own = "# precisionlint: file-ignore[PL104]\na = 1\n"
    assert Suppressions.of(Document("x.yaml", own, "yaml")).filter([finding(2)]) == []
    trailing = "a = 1  # precisionlint: file-ignore[PL104]\nb = 1\n"
    assert Suppressions.of(Document("x.toml", trailing, "toml")).filter([finding(2)]) == [finding(2)]


def test_noqa_in_python_with_codes_only() -> None:
    text = "x = 1  # noqa: PL104, E501\ny = 2  # noqa\n"
    s = Suppressions.of(Document("x.py", text, "python"))
    assert s.filter([finding(1), finding(2)]) == [finding(2)]


def test_a_noqa_for_other_linters_only_is_not_read() -> None:
    """`# noqa: E501` cannot select any of our codes (a selector applies to the codes it is a prefix of): such a
    file is not tokenized for its comments, which costs more than parsing it; one PL code among them is read."""
    from precisionlint.engine.suppress import may_hold_directives

    assert not may_hold_directives("x = 1  # noqa: E501, F401\ny = 2  # noqa: PLR0913\n", True)
    assert may_hold_directives("x = 1  # noqa: E501, pl104\n", True)
    assert may_hold_directives("x = 1  # noqa: E501\n# precisionlint: ignore\n", True)
    text = "x = 1  # noqa: E501\n"
    s = Suppressions.of(Document("x.py", text, "python"))
    assert s.filter([finding(1)]) == [finding(1)] and s.directives == []


def test_engine_findings_cannot_be_silenced() -> None:
    s = Suppressions.of(Document("x.yaml", "a: [  # precisionlint: ignore\n", "yaml"))
    parse_error = Finding("PL001", "parse-error", Severity.ERROR, "x", Span.point(1, 1), "m")
    assert s.filter([parse_error]) == [parse_error]


def test_directives_are_found_in_any_case_and_only_in_comments() -> None:
    text = (
        "a = 1  # PrecisionLint : IGNORE[PL104]\n"
        "b = 2  # NOQA:PL104\n"
        "c = 3  # precisionlintx: ignore\n"  # not the directive's word
        'd = "noqa: PL104"\n'  # a string, not a comment
        "e = 5  # knoqa: PL104\n"  # `noqa` must start a word
    )
    s = Suppressions.of(Document("x.py", text, "python"))
    assert [f.span.line for f in s.filter([finding(n) for n in range(1, 6)])] == [3, 4, 5]


def test_noqa_is_not_a_directive_in_configs() -> None:
    s = Suppressions.of(Document("x.yaml", "a: 1  # noqa: PL104\n", "yaml"))
    assert s.filter([finding(1)]) == [finding(1)]


def test_the_quick_text_test_agrees_with_the_patterns() -> None:
    """The word search that rules most files out answers as the two patterns would on the whole text, for ASCII
    and other text alike (the Kelvin sign and the long s fold to `k` and `s` only in the case-insensitive
    patterns)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from precisionlint.engine.suppress import _NOQA, _OUR_CODE, DIRECTIVE, may_hold_directives

    pieces = st.sampled_from([
        "precisionlint", "PrecisionLint", "precision", "lint", "noqa", "NoQa", "knoqa", ":", " ", "\n", "#", "[",
        "]", "ignore", "disable", "enable", "file-ignore", "PL104", "E501", ",", "x", "\u212a", "\u017f", "\u00e9",
    ])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(pieces, max_size=12).map("".join), st.booleans())
    def agrees(text: str, python: bool) -> None:
        ours = any(_OUR_CODE.match(code.lower()) for match in _NOQA.finditer(text)
                   for code in re.split(r"[\s,]+", match.group("codes")))
        expected = bool(DIRECTIVE.search(text) or (python and ours))
        assert may_hold_directives(text, python) == expected

    agrees()
