"""Does the language server say what `check` says? Compared on real repositories.

    python benchmarks/server_consistency.py /path/to/repo [/path/to/another ...]

For each repository: `check` runs over it (one process, no cache), and every file with findings is then analysed
the way the server analyses a buffer (its text, as if typed into the editor). The findings must agree exactly:
code, span, message and fix. Every fix the server would offer must pass `check --fix`'s verification, and every
finding that can be suppressed inline must be silenced by the server's "suppress on this line" edit and nothing
else. In a notebook opened as text, each finding must be placed where its cell's line and column are written in
the JSON (the character there decodes to the one the notebook reader saw). Every other file a finding points to
(a DeepSpeed JSON, a launched script) must be among the files the server records as read by that check, so that
a change to it re-checks the finding's file. Prints one line per disagreement and a summary; exits 1 on any
disagreement.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Counts(NamedTuple):
    files: int
    findings: int
    placed: int  # notebook findings placed inside the .ipynb text
    linked: int  # related files of findings that the dependency record covers
    fixes: int
    offered: int
    suppressible: int
    silenced: int
    problems: list[str]


def compare(root: Path) -> Counts:
    from precisionlint.cli.rule_selection import resolve_rules
    from precisionlint.run.config import load_config
    from precisionlint.run.runner import RunRequest, run_check
    from precisionlint.server.analysis import ProjectConfigs, analyse, can_suppress, line_suppression, verified_fix
    from precisionlint.sources.decoding import decode_source

    os.chdir(root)
    config = load_config()
    # No result cache (RunRequest's default): every file is analysed, and nothing is written into the repository.
    request = RunRequest(["."], config, resolve_rules(config.select, config.ignore), jobs=1, progress=False)
    outcome = run_check(request)
    by_file: dict[str, list] = {}
    for finding in outcome.findings:
        by_file.setdefault(finding.path, []).append(finding)
    configs = ProjectConfigs()
    problems: list[str] = []
    fixes = offered = suppressible = silenced = placed = linked = 0
    for display, findings in sorted(by_file.items()):
        path = root / display
        try:
            text = decode_source(path.read_bytes(), display)
        except Exception:
            continue  # unreadable: check reported it, and an editor would not open it as text
        analysis = analyse(path, text, configs)

        def key(finding):  # type: ignore[no-untyped-def]
            return (finding.code, finding.span, finding.message, finding.fix)

        got, want = sorted(map(key, analysis.findings)), sorted(map(key, findings))
        if got != want:
            problems.append(f"{root.name}/{display}: server {got} != check {want}")
        if analysis.format == "notebook":
            placed += _check_placement(root.name, display, text, analysis.findings, problems)
        for finding in analysis.findings:
            for related in finding.related:
                if related.path == display:
                    continue
                if os.path.realpath(related.path) in analysis.reads:
                    linked += 1
                else:
                    problems.append(f"{root.name}/{display}:{finding.span.line}: {finding.code} points to "
                                    f"{related.path}, which the server does not record as read")
            if finding.fix is not None:
                fixes += 1
                offered += verified_fix(analysis, finding) is not None
            if can_suppress(analysis, finding):
                suppressible += 1
                if line_suppression(analysis, finding) is not None:
                    silenced += 1
                else:
                    problems.append(f"{root.name}/{display}:{finding.span.line}: {finding.code} cannot be "
                                    "suppressed on its line")
    return Counts(len(by_file), len(outcome.findings), placed, linked, fixes, offered, suppressible, silenced,
                  problems)


def _check_placement(name: str, display: str, text: str, findings: list, problems: list[str]) -> int:
    """Check that each notebook finding is placed on the character its cell, line and column name."""
    import json

    from precisionlint.server.notebooks import cell_of, cell_offset, code_cells

    cells = code_cells(text)
    data = json.loads(text)
    sources = [cell.get("source", "") for cell in data.get("cells", [])
               if isinstance(cell, dict) and cell.get("cell_type") == "code"]
    placed = 0
    for finding in findings:
        number = cell_of(finding)
        if number is None or cells is None or number not in cells:
            continue
        source = sources[number - 1]
        source = "".join(source) if isinstance(source, list) else source
        lines = source.splitlines()
        line, column = finding.span.line, finding.span.column
        expected = lines[line - 1][column - 1:column] if line <= len(lines) else ""
        offset = cell_offset(cells[number], line, column)
        got = _decoded_at(text, offset)
        if expected and got != expected:
            problems.append(f"{name}/{display}: cell {number}:{line}:{column}: placed on {got!r}, the cell has "
                            f"{expected!r}")
        else:
            placed += 1
    return placed


def _decoded_at(text: str, offset: int) -> str:
    """The character a JSON string literal's text at `offset` decodes to (an escape or a plain character)."""
    import json

    if text[offset] != "\\":
        return text[offset]
    length = 6 if text[offset + 1] == "u" else 2
    high = length == 6 and 0xD800 <= int(text[offset + 2:offset + 6], 16) < 0xDC00
    if high and text.startswith("\\u", offset + 6):  # a surrogate pair: one character
        length = 12
    decoded: str = json.loads('"' + text[offset:offset + length] + '"')
    return decoded


def main() -> int:
    roots = [Path(arg).resolve() for arg in sys.argv[1:]]
    if not roots:
        print(__doc__)
        return 2
    results = [compare(root) for root in roots]
    for root, counts in zip(roots, results, strict=True):
        for problem in counts.problems:
            print(problem)
        print(f"{root.name}: {counts.files} files with findings, {counts.findings} findings, "
              f"{counts.placed} notebook findings placed, {counts.linked} linked files recorded, "
              f"{counts.offered}/{counts.fixes} fixes offered (verified), {counts.silenced}/{counts.suppressible} "
              f"line suppressions verified, {len(counts.problems)} disagreements")
    total = {field: sum(getattr(c, field) for c in results) for field in Counts._fields[:-1]}
    failed = any(c.problems for c in results)
    print(f"total: {total['files']} files with findings, {total['findings']} findings, {total['placed']} notebook "
          f"findings placed, {total['linked']} linked files recorded, {total['offered']}/{total['fixes']} fixes "
          f"offered, {total['silenced']}/{total['suppressible']} line suppressions verified, "
          f"{'disagreements' if failed else 'no disagreement'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
