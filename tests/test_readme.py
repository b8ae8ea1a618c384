"""README.md stays true: its rule table is the registry's, its two set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from precisionlint.checks import all_rules
from precisionlint.cli import rules_markdown

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_rule_table_is_generated_from_the_registry() -> None:
    match = re.search(r"<!-- rules-table -->\n(.*?)<!-- /rules-table -->", README, re.DOTALL)
    assert match, "README.md lacks the rules-table markers"
    assert match.group(1) == rules_markdown(all_rules()), (
        "README rule table is stale: run `precisionlint rules --output-format markdown` and paste it"
    )


def test_readme_has_the_two_setup_commands() -> None:
    for marker in ("main-command", "test-command"):
        assert f"<!-- {marker} -->" in README
    main_block = README.split("<!-- main-command -->")[1].split("<!-- /main-command -->")[0]
    assert "precisionlint check examples/project" in main_block
    test_block = README.split("<!-- test-command -->")[1].split("<!-- /test-command -->")[0]
    assert "pytest" in test_block and "torch==2.13.0" in test_block
