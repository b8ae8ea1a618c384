"""`check --add-noqa`: a `# precisionlint: ignore[rule, ...]` directive on every line with a finding, to adopt the
tool on an existing project. The directives' syntax and the comment scanners are those of
precisionlint.engine.suppress, which reads them; the file is written by the writer of --fix (write.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from precisionlint.core.lines import parser_line_starts
from precisionlint.core.model import Finding
from precisionlint.engine.suppress import DIRECTIVE, hash_comments, line_bounds, python_comments
from precisionlint.fix.write import FileChanged, WriteRefused, rewrite


def add_noqa(findings: list[Finding], groups: list[tuple[Any, Sequence[Any]]],
             digests: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """Add `# precisionlint: ignore[rule, ...]` to every line with a finding (engine findings excepted), merged
    into an existing ignore directive on that line. A line is edited only where a comment can stand (not
    inside a multi-line string or block scalar): each edit is verified by parsing the file again and
    comparing what it holds. `digests` (RunOutcome.digests): the content each file was checked in; a file that
    holds anything else now (an editor saved since the check) is left alone, as the lines of its findings may
    have moved. Returns (directives added, one error line per file that could not be written)."""
    from precisionlint.core.bounded_read import read_bytes
    from precisionlint.core.digest import content_digest
    from precisionlint.sources import Limits
    from precisionlint.sources.decoding import decode_source

    fs_paths = {source.display: source.fs_path for _settings, files in groups for source in files}
    formats = {source.display: source.format for _settings, files in groups for source in files}
    by_path: dict[str, dict[int, list[str]]] = {}
    for finding in findings:
        if finding.code.startswith("PL00") or formats.get(finding.path) in (None, "json"):
            continue
        names = by_path.setdefault(finding.path, {}).setdefault(finding.span.line, [])
        if finding.name not in names:
            names.append(finding.name)
    added = 0
    problems: list[str] = []
    for path, lines in by_path.items():
        fs_path = fs_paths[path]
        # The same writer as --fix: the file's encoding, BOM and line endings kept; read-only files, hard links
        # and anything but a regular file refused; a file changed since it was read never overwritten.
        try:
            data = read_bytes(fs_path, Limits().max_file_size)
            text = decode_source(data, path, formats[path])
        except Exception as exc:  # unreadable or undecodable since the check: leave it alone
            problems.append(f"{path}: cannot add suppressions: {getattr(exc, 'strerror', None) or exc}")
            continue
        checked = digests.get(path) if digests is not None else None
        if checked is not None and checked != content_digest(data):
            # Changed since it was checked: the writer below only guards the moment from this read to the
            # replacement, and the findings' lines are those of the content checked. (A file the run did not
            # analyse itself, skipped by the prefilter, has no digest: the writer's checks alone decide.)
            problems.append(f"{path}: changed by another program since it was checked; left as it is")
            continue
        new_text, count = _with_directives(text, formats[path], lines)
        if count == 0 or new_text == text:
            continue
        try:
            rewrite(fs_path, data, new_text, formats[path])
        except FileChanged:  # the findings' lines may have moved: never guess where they went
            problems.append(f"{path}: changed by another program since it was checked; left as it is")
        except WriteRefused as exc:
            problems.append(f"{path}: {exc}")
        except OSError as exc:
            problems.append(f"{path}: cannot write: {exc.strerror or exc}")
        else:
            added += count
    return added, problems


def _with_directives(text: str, fmt: str, lines: dict[int, list[str]]) -> tuple[str, int]:
    original = _meaning(text, fmt)
    if original is None:
        return text, 0
    current = text
    count = 0
    for line in sorted(lines, reverse=True):
        candidate = _add_to_line(current, fmt, line, lines[line])
        if candidate is None or _meaning(candidate, fmt) != original:
            continue  # a comment cannot stand there (a string, a block scalar): leave the line alone
        current = candidate
        count += 1
    return current, count


def _add_to_line(text: str, fmt: str, line: int, names: list[str]) -> str | None:
    starts = parser_line_starts(text, fmt)  # the findings' lines: a lone CR ends a line of Python and YAML
    try:
        start, end, _ = line_bounds(text, starts, line)
    except ValueError:
        return None
    body = text[start:end]
    comments = python_comments(text) if fmt == "python" else hash_comments(text, starts)
    existing = next(((col, c) for number, col, c in comments if number == line), None)
    if existing is not None:
        column, comment = existing
        match = DIRECTIVE.search(comment)
        if match is not None and match.group("kind").lower() == "ignore":
            if match.group("rules") is None:
                return None  # already ignores every rule
            parts = [p.strip() for p in match.group("rules").split(",") if p.strip()]
            merged = parts + [n for n in names if n not in {p.lower() for p in parts}]
            begin = column - 1 + match.start("rules")
            new_body = body[:begin] + ", ".join(merged) + body[column - 1 + match.end("rules"):]
        else:
            new_body = body.rstrip() + f"  # precisionlint: ignore[{', '.join(names)}]"
    else:
        if not body.strip():
            return None
        new_body = body.rstrip() + f"  # precisionlint: ignore[{', '.join(names)}]"
    return text[:start] + new_body + text[end:]


def _meaning(text: str, fmt: str) -> Any:
    """What a file means, comments aside: the data of a config, the AST of a script. None if it does not parse."""
    try:
        if fmt == "python":
            import ast

            return ast.dump(ast.parse(text))
        if fmt == "toml":
            import tomlkit

            return tomlkit.parse(text).unwrap()
        if fmt == "yaml":
            from ruamel.yaml import YAML

            return list(YAML(typ="safe", pure=True).load_all(text))
    except Exception:
        return None
    return None
