"""The renderers: text, json, github, sarif. Findings are built by hand; nothing here runs the engine."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precisionlint.checks import Rule, all_rules
from precisionlint.core.model import Edit, Finding, Fix, Severity, Span
from precisionlint.output import FORMATS, render
from precisionlint.output.github import escape_data, escape_property
from precisionlint.output.sarif import markdown_to_text

ROOT = Path(__file__).resolve().parent.parent
# The OASIS SARIF 2.1.0 schema, vendored so that the validation runs in every clone, without a network.
SARIF_SCHEMA = ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json"

DOC = """\
## What it does
Checks that `precision` is spelled the Lightning 2.x way.

## Why is this bad?
Legacy values warn and are remapped.

## Example
```yaml
## not a heading: inside a fence
trainer:
  precision: 16
```

## Use instead
```yaml
trainer:
  precision: "16-mixed"
```
"""


def _never(_ctx: object) -> tuple[()]:
    return ()


def make_rule(code: str, name: str, severity: Severity = Severity.WARNING, doc: str = DOC) -> Rule:
    return Rule(
        code=code,
        name=name,
        severity=severity,
        summary=f"summary of {name}",
        doc=doc,
        target="settings",
        needs_gpu=False,
        fixable=True,
        func=_never,
    )


RULES = [
    make_rule("PL101", "legacy-precision-value", Severity.WARNING),
    make_rule("PL102", "conflicting-precision", Severity.ERROR),
    make_rule("PL103", "tf32-note", Severity.INFO),
    make_rule("PL199", "never-fires", Severity.ERROR),
]

SAFE_FIX = Fix('Replace `16` with `"16-mixed"`', "safe", (Edit(40, 42, '"16-mixed"'),))
UNSAFE_FIX = Fix("Remove the `fp16` key", "unsafe", (Edit(80, 95, ""), Edit(10, 12, "x")))


DEFAULT_SPAN = Span(3, 14, 3, 16)


def finding(
    code: str = "PL101",
    name: str = "legacy-precision-value",
    severity: Severity = Severity.WARNING,
    path: str = "configs/train.yaml",
    span: Span = DEFAULT_SPAN,
    message: str = "legacy precision value `16`",
    fix: Fix | None = None,
) -> Finding:
    return Finding(code, name, severity, path, span, message, fix)


FINDINGS = [
    finding(fix=SAFE_FIX),
    finding("PL102", "conflicting-precision", Severity.ERROR, "configs/train.yaml", Span(5, 3, 7, 9), "fp16 and bf16"),
    finding("PL103", "tf32-note", Severity.INFO, "train.py", Span(1, 1, 1, 30), "TF32 note", UNSAFE_FIX),
    finding("PL101", path="train.py", span=Span(9, 5, 9, 7)),
]


def out(fmt: str, findings: list[Finding], **kwargs: object) -> str:
    stream = io.StringIO()
    kwargs.setdefault("rules", RULES)
    render(fmt, findings, stream, **kwargs)  # type: ignore[arg-type]
    return stream.getvalue()


# --- dispatch -------------------------------------------------------------------------------------------


def test_formats_and_unknown_format() -> None:
    assert FORMATS == ("text", "concise", "full", "grouped", "json", "json-lines", "github", "gitlab", "junit",
                       "sarif")
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        out("xml", FINDINGS)


def test_every_format_renders_with_the_real_registry() -> None:
    for fmt in FORMATS:
        assert out(fmt, FINDINGS, rules=all_rules()).endswith("\n")


def test_import_is_lazy() -> None:
    # check must not pay for json/click or for formats it does not use.
    code = (
        "import sys, io\n"
        "import precisionlint.output as o\n"
        "from precisionlint.core.model import Finding, Severity, Span\n"
        "f = Finding('PL1', 'n', Severity.INFO, 'a.toml', Span.point(1, 1), 'm')\n"
        "o.render('text', [f], io.StringIO(), rules=[])\n"
        "bad = [m for m in ('json', 'click', 'precisionlint.output.sarif', 'precisionlint.output.json',\n"
        "       'precisionlint.output.github', 'precisionlint.checks') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# --- text -----------------------------------------------------------------------------------------------


def test_text_lines_and_summary() -> None:
    text = out("text", FINDINGS)
    assert text.splitlines() == [
        "configs/train.yaml:3:14: PL101 [warning] [*] legacy precision value `16` (legacy-precision-value)",
        '  help: Replace `16` with `"16-mixed"`',
        "configs/train.yaml:5:3: PL102 [error] fp16 and bf16 (conflicting-precision)",
        "train.py:1:1: PL103 [info] TF32 note (tf32-note)",
        "  help: Remove the `fp16` key (unsafe fix)",
        "train.py:9:5: PL101 [warning] legacy precision value `16` (legacy-precision-value)",
        "Found 4 findings (1 error, 2 warnings, 1 info).",
        "[*] 1 fixable with --fix (1 more fix available with --unsafe-fixes).",
    ]


def test_text_no_color_by_default_and_color_on_request() -> None:
    assert "\x1b[" not in out("text", FINDINGS)
    colored = out("text", FINDINGS, color=True)
    assert "\x1b[" in colored
    # Stripping the escapes gives back exactly the plain output.
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == out("text", FINDINGS)


def test_text_clean_run() -> None:
    assert out("text", []) == "All checks passed!\n"
    assert out("text", [], summary=False) == ""


def test_text_fixed_and_plurals() -> None:
    assert out("text", [], fixed=2) == "Fixed 2 findings.\nAll checks passed!\n"
    one = finding(severity=Severity.ERROR)
    assert out("text", [one], fixed=1).splitlines()[-2:] == [
        "Fixed 1 finding.",
        "Found 1 finding (1 error, 0 warnings, 0 info).",
    ]


def test_text_summary_off() -> None:
    lines = out("text", FINDINGS, summary=False).splitlines()
    assert not any(line.startswith(("Found", "[*]", "All checks")) for line in lines)


@given(st.lists(st.sampled_from(list(Severity)), max_size=30), st.lists(st.booleans(), max_size=30))
def test_text_summary_counts(severities: list[Severity], fixable: list[bool]) -> None:
    findings = [
        finding(severity=sev, fix=SAFE_FIX if (i < len(fixable) and fixable[i]) else None)
        for i, sev in enumerate(severities)
    ]
    lines = out("text", findings).splitlines()
    if not findings:
        assert lines == ["All checks passed!"]
        return
    safe = sum(1 for f in findings if f.fix is not None)
    summary = lines[-2] if safe else lines[-1]
    match = re.fullmatch(r"Found (\d+) findings? \((\d+) errors?, (\d+) warnings?, (\d+) info\)\.", summary)
    assert match, summary
    assert [int(g) for g in match.groups()] == [
        len(findings),
        severities.count(Severity.ERROR),
        severities.count(Severity.WARNING),
        severities.count(Severity.INFO),
    ]
    if safe:
        assert lines[-1] == f"[*] {safe} fixable with --fix."
    assert sum(1 for line in lines if "[*]" in line) == safe + (1 if safe else 0)


# --- json -----------------------------------------------------------------------------------------------

JSON_KEYS = {"schema_version", "code", "name", "severity", "path", "line", "column", "end_line", "end_column",
             "message", "fix"}


def test_json_array() -> None:
    text = out("json", FINDINGS, summary=True, fixed=3, color=True)  # text-only options change nothing
    assert text.endswith("]\n") and text.startswith("[\n  {")
    data = json.loads(text)
    assert isinstance(data, list) and len(data) == len(FINDINGS)
    for element, source in zip(data, FINDINGS, strict=True):
        assert set(element) == JSON_KEYS
        assert element["severity"] in {"error", "warning", "info"}
        assert (element["line"], element["column"], element["end_line"], element["end_column"]) == (
            source.span.line,
            source.span.column,
            source.span.end_line,
            source.span.end_column,
        )
    # The file is not on disk here, so edits carry offsets and no line/column (tests/test_cli_contract.py
    # checks both against a real file).
    for edit in data[0]["fix"]["edits"]:
        assert edit.pop("location") is None and edit.pop("end_location") is None
    assert data[0]["fix"] == SAFE_FIX.to_json()
    assert data[1]["fix"] is None
    assert data[1]["severity"] == "error" and data[2]["severity"] == "info"


def test_json_edit_locations_follow_each_findings_own_file_in_any_order() -> None:
    # The line starts of one file are kept at a time (findings come sorted by file): findings that go back to a
    # file already left still place their edits in that file's text, not the last one's.
    sources = {"a.py": "x = 1\ny = 2\n", "b.py": "\n\n\nz = 3\n"}
    edit_a, edit_b = Fix("a", "safe", (Edit(10, 11, "0"),)), Fix("b", "safe", (Edit(7, 8, "0"),))
    findings = [finding(path="a.py", fix=edit_a), finding(path="b.py", fix=edit_b), finding(path="a.py", fix=edit_a)]
    data = json.loads(out("json", findings, sources=sources))
    assert [item["fix"]["edits"][0]["location"] for item in data] == [
        {"line": 2, "column": 5}, {"line": 4, "column": 5}, {"line": 2, "column": 5}]


def test_full_source_frames_follow_each_findings_own_file_in_any_order() -> None:
    sources = {"a.py": "alpha = 1\n", "b.py": "beta = 2\n"}
    findings = [finding(path="a.py", span=Span(1, 1, 1, 6)), finding(path="b.py", span=Span(1, 1, 1, 5)),
                finding(path="a.py", span=Span(1, 1, 1, 6))]
    frames = [line for line in out("full", findings, sources=sources).splitlines() if "= " in line]
    assert [("alpha" in line, "beta" in line) for line in frames] == [(True, False), (False, True), (True, False)]


def test_json_is_written_element_by_element_as_one_indented_array() -> None:
    # Written as it is made, the array is spelled exactly as json.dumps(..., indent=2) spells the whole.
    findings = [*FINDINGS, finding(message="two\nlines and \u00e9 \u2028"), finding(path="caf\u00e9.yaml")]
    text = out("json", findings, sources={"configs/train.yaml": "a\n" * 40, "train.py": "b\n" * 60})
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


def test_json_empty() -> None:
    assert out("json", []) == "[]\n"


@given(st.text())
def test_json_message_round_trip(message: str) -> None:
    assert json.loads(out("json", [finding(message=message)]))[0]["message"] == message


# --- github ---------------------------------------------------------------------------------------------


def test_github_lines() -> None:
    lines = out("github", FINDINGS, summary=True).splitlines()
    assert lines == [
        (
            "::warning file=configs/train.yaml,line=3,col=14,endLine=3,endColumn=16,title=PL101 legacy-precision-value"
            "::legacy precision value `16`"
        ),
        # Multi-line span: the checks API takes columns only on single-line annotations.
        "::error file=configs/train.yaml,line=5,endLine=7,title=PL102 conflicting-precision::fp16 and bf16",
        "::notice file=train.py,line=1,col=1,endLine=1,endColumn=30,title=PL103 tf32-note::TF32 note",
        (
            "::warning file=train.py,line=9,col=5,endLine=9,endColumn=7,title=PL101 legacy-precision-value"
            "::legacy precision value `16`"
        ),
    ]
    assert out("github", []) == ""


def test_github_escaping_examples() -> None:
    # The exact mappings of actions/toolkit packages/core/src/command.ts.
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"


def _runner_unescape(text: str, property_value: bool) -> str:
    """actions/runner ActionCommand.cs: unescape in the order of its mapping tables, "%" last."""
    pairs = [("%0D", "\r"), ("%0A", "\n")]
    if property_value:
        pairs += [("%3A", ":"), ("%2C", ",")]
    pairs.append(("%25", "%"))
    for escaped, raw in pairs:
        text = text.replace(escaped, raw)
    return text


def _parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse `::command k=v,k=v::data` as the runner does: properties end at the first "::"."""
    assert line.startswith("::")
    head_end = line.index("::", 2)
    command, _, props = line[2:head_end].partition(" ")
    properties = {}
    for pair in props.split(","):
        key, _, value = pair.partition("=")
        assert key not in properties, f"duplicate property {key}"
        properties[key] = _runner_unescape(value, property_value=True)
    return command, properties, _runner_unescape(line[head_end + 2 :], property_value=False)


NASTY = st.text(alphabet=st.sampled_from(list("%\r\n:,=;]:: aZ0/\\.\u00e9\u2028%0A%25")) | st.characters(), max_size=40)


@settings(max_examples=300)
@given(message=NASTY, path=NASTY.filter(bool), multiline=st.booleans())
def test_github_escaping_round_trips(message: str, path: str, multiline: bool) -> None:
    span = Span(2, 3, 4 if multiline else 2, 9)
    text = out("github", [finding(path=path, message=message, span=span, severity=Severity.INFO)])
    # One finding is one command on one line, whatever the message or path holds.
    assert text.endswith("\n") and text.count("\n") == 1 and "\r" not in text
    command, properties, data = _parse_command(text[:-1])
    assert command == "notice"
    assert data == message
    assert properties["file"] == path
    assert properties["title"] == "PL101 legacy-precision-value"
    if multiline:
        assert list(properties) == ["file", "line", "endLine", "title"]
    else:
        assert list(properties) == ["file", "line", "col", "endLine", "endColumn", "title"]


# --- sarif ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)  # the schema declares draft-04
    cls.check_schema(schema)
    return cls(schema)


def sarif(findings: list[Finding], validator: jsonschema.protocols.Validator, **kwargs: object) -> dict:
    log = json.loads(out("sarif", findings, **kwargs))
    validator.validate(log)
    return log


def test_sarif_validates_and_describes_used_rules(sarif_validator: jsonschema.protocols.Validator) -> None:
    log = sarif(FINDINGS, sarif_validator)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    import precisionlint

    assert driver["name"] == "precisionlint" and driver["version"] == precisionlint.__version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == ["PL101", "PL102", "PL103"]  # PL199 never fired
    first = driver["rules"][0]
    assert first["name"] == "legacy-precision-value"
    assert first["shortDescription"] == {"text": "summary of legacy-precision-value"}
    assert first["help"]["markdown"] == DOC.strip()
    help_text = first["help"]["text"]
    assert help_text.startswith("What it does\n") and "```" not in help_text
    assert "## not a heading: inside a fence" in help_text  # code stays code
    assert first["fullDescription"]["text"] == "Checks that `precision` is spelled the Lightning 2.x way."
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == ["warning", "error", "note"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert "originalUriBaseIds" not in run

    results = run["results"]
    assert [r["ruleId"] for r in results] == ["PL101", "PL102", "PL103", "PL101"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert [r["level"] for r in results] == ["warning", "error", "note", "warning"]
    location = results[1]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "configs/train.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5, "startColumn": 3, "endLine": 7, "endColumn": 9}
    assert results[1]["message"] == {"text": "fp16 and bf16"}
    assert "fixes" not in results[1]


def test_sarif_fixes(sarif_validator: jsonschema.protocols.Validator) -> None:
    results = sarif(FINDINGS, sarif_validator)["runs"][0]["results"]
    safe = results[0]["fixes"]
    assert safe == [
        {
            "description": {"text": SAFE_FIX.description},
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": "configs/train.yaml", "uriBaseId": "%SRCROOT%"},
                    "replacements": [
                        {
                            "deletedRegion": {"charOffset": 40, "charLength": 2},
                            "insertedContent": {"text": '"16-mixed"'},
                        }
                    ],
                }
            ],
            "properties": {"applicability": "safe"},
        }
    ]
    unsafe = results[2]["fixes"][0]
    assert unsafe["properties"] == {"applicability": "unsafe"}
    # File order; a pure deletion has no insertedContent.
    assert unsafe["artifactChanges"][0]["replacements"] == [
        {"deletedRegion": {"charOffset": 10, "charLength": 2}, "insertedContent": {"text": "x"}},
        {"deletedRegion": {"charOffset": 80, "charLength": 15}},
    ]
    # A fix without edits cannot be a SARIF fix (artifactChanges needs a replacement).
    empty = finding(fix=Fix("nothing", "safe", ()))
    assert "fixes" not in sarif([empty], sarif_validator)["runs"][0]["results"][0]


def test_sarif_empty_run(sarif_validator: jsonschema.protocols.Validator) -> None:
    run = sarif([], sarif_validator)["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []


def test_sarif_is_deterministic(sarif_validator: jsonschema.protocols.Validator) -> None:
    assert out("sarif", FINDINGS) == out("sarif", list(FINDINGS))
    assert out("sarif", FINDINGS, rules=list(reversed(RULES))) == out("sarif", FINDINGS)


def test_sarif_uri_encoding(sarif_validator: jsonschema.protocols.Validator) -> None:
    odd = finding(path="./my configs/50%#ü?:x.yaml")
    result = sarif([odd], sarif_validator)["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri == {"uri": "my%20configs/50%25%23%C3%BC%3F%3Ax.yaml", "uriBaseId": "%SRCROOT%"}
    # Only unreserved characters, "/" and percent-escapes remain: a valid relative URI reference.
    assert re.fullmatch(r"(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})+", uri["uri"])


def test_sarif_root(tmp_path: Path, sarif_validator: jsonschema.protocols.Validator) -> None:
    inside = finding(path=str(tmp_path / "sub" / "a b.toml"))
    outside = finding(path=str(tmp_path.parent / "elsewhere.toml"))
    run = sarif([inside, outside], sarif_validator, root=str(tmp_path))["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file://") and base.endswith("/")
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert locations[0] == {"uri": "sub/a%20b.toml", "uriBaseId": "%SRCROOT%"}
    assert locations[1] == {"uri": (tmp_path.parent / "elsewhere.toml").as_uri()}  # outside the root: absolute


def test_sarif_relative_path_with_root_is_relative_to_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sarif_validator: jsonschema.protocols.Validator
) -> None:
    (tmp_path / "pkg").mkdir()
    monkeypatch.chdir(tmp_path / "pkg")
    run = sarif([finding(path="cfg.toml")], sarif_validator, root=str(tmp_path))["runs"][0]
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "pkg/cfg.toml", "uriBaseId": "%SRCROOT%"}


def test_sarif_absolute_path_without_root(sarif_validator: jsonschema.protocols.Validator) -> None:
    path = os.path.abspath("x.toml")
    log = sarif([finding(path=path)], sarif_validator)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": Path(path).as_uri()
    }


def test_sarif_rule_missing_from_rules_argument(sarif_validator: jsonschema.protocols.Validator) -> None:
    # Engine rules (parse-error) can fire though the caller passed only the selected rules.
    parse_error = finding("PL001", "parse-error", Severity.ERROR, message="cannot parse")
    unknown = finding("PLX9", "made-up", Severity.INFO)
    driver = sarif([parse_error, unknown], sarif_validator, rules=[])["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == ["PL001", "PLX9"]
    assert driver["rules"][0]["help"]["markdown"].startswith("## What it does")
    assert driver["rules"][1] == {"id": "PLX9", "name": "made-up", "defaultConfiguration": {"level": "note"}}


def test_sarif_with_the_real_registry(sarif_validator: jsonschema.protocols.Validator) -> None:
    rules = all_rules()
    findings = [finding(rule.code, rule.name, rule.severity, f"f{i}.toml") for i, rule in enumerate(rules)]
    driver = sarif(findings, sarif_validator, rules=rules)["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == sorted(rule.code for rule in rules)
    for descriptor, rule in zip(driver["rules"], sorted(rules, key=lambda r: r.code), strict=True):
        assert descriptor["help"]["markdown"] == rule.doc.strip()
        assert descriptor["shortDescription"]["text"] == rule.summary


def test_markdown_to_text() -> None:
    assert markdown_to_text("## Title\ntext `code`\n```py\n# comment\nx = 1\n```\n") == (
        "Title\ntext `code`\n# comment\nx = 1"
    )
