"""Ecosystem check: run `precisionlint check` over local checkouts of public training repositories.

Every rule that is added or changed is read against real code before it ships. This script runs the installed
`precisionlint` (the one beside the running interpreter, or --precisionlint) over each repository directory
under ROOT, one process per repository, and prints:

- per repository: files with findings, findings by severity, and the wall time;
- per rule: the number of findings over all repositories (and the change against --baseline, when given);
- every error- and warning-level finding, one line each (`path:line:col CODE [severity] message`), so a maintainer
  reads each of them; info-level findings are only counted unless --show-info is given.

    python benchmarks/ecosystem.py /path/to/checkouts                  # every subdirectory is one repository
    python benchmarks/ecosystem.py ROOT --gpu A100 --select PL1        # extra options are passed to check
    python benchmarks/ecosystem.py ROOT --save counts.json             # keep per-rule counts ...
    python benchmarks/ecosystem.py ROOT --baseline counts.json         # ... and compare a later run with them
    python benchmarks/ecosystem.py ROOT --attribution                  # also: configs attributed by their reader
                                                                       # or their keys, launch lines, pin files

The repositories' code is never copied anywhere: only file paths and findings are printed. Nothing is written
to the repositories (no --fix).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

SEVERITIES = ("error", "warning", "info")


def default_precisionlint() -> str:
    """The console script installed beside this interpreter, so a virtual environment checks its own tree."""
    beside = Path(sys.executable).with_name("precisionlint")
    if beside.exists():
        return str(beside)
    found = shutil.which("precisionlint")
    if found is None:
        sys.exit("ecosystem: no precisionlint found beside the interpreter or on PATH (pip install -e . first)")
    return found


def check_repository(exe: str, repo: Path, extra: list[str], timeout: float) -> tuple[list[dict], float, str]:
    """Run check on one repository; returns (findings, seconds, problem) where problem is '' when all went well."""
    command = [exe, "check", "--output-format", "json", "--exit-zero", "--no-progress", *extra, str(repo)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], time.perf_counter() - started, f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    problem = ""
    # --exit-zero is passed, so anything but 0 is a failed run (an uncaught exception in Python also exits 1).
    if done.returncode != 0 or not done.stdout.strip():
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no output"
        problem = f"exit {done.returncode}: {last}"
    try:
        findings = json.loads(done.stdout) if done.stdout.strip() else []
    except json.JSONDecodeError:
        return [], seconds, f"output is not JSON ({done.stdout[:80]!r})"
    if isinstance(findings, dict):  # a future envelope {"findings": [...]} keeps working
        findings = findings.get("findings", [])
    return findings, seconds, problem


def attribution(exe: str, repo: Path, timeout: float) -> dict[str, int]:
    """How the configs of a repository were attributed, from `check --show-frameworks`: sections whose reader a
    script of the project names ("read by train.py:12 into ..."), sections attributed by their keys, and launch
    lines whose flags the started script's parser reads ("passed to train.py, whose HfArgumentParser ...")."""
    counts = {"by_reader": 0, "by_keys": 0, "launch_flags": 0, "unread": 0}
    try:
        done = subprocess.run([exe, "check", "--show-frameworks", "--no-progress", str(repo)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return counts
    for line in done.stdout.splitlines():
        if "no framework identified" in line:
            counts["unread"] += 1
            continue
        if not line.startswith("  ") or line.startswith("    ") or " - " not in line or " at line " not in line:
            continue  # a setting's line, or a script's own call (no line: it is read in the script)
        evidence = line.split(" - ", 1)[1]
        if evidence.startswith("read by "):
            counts["by_reader"] += 1
        elif evidence.startswith("passed to "):
            counts["launch_flags"] += 1
        else:
            counts["by_keys"] += 1
    return counts


def launches_and_pins(repo: Path) -> tuple[int, int, list[str]]:
    """(launch lines in the repository's shell scripts, those whose script resolves in the project, the pin files
    the project model reads, relative to the repository), read in this process with the precisionlint beside it.
    A pin file is read when it speaks for a file check reads: it is in that file's folder or one above it up to
    the project's boundary, in the boundary's environment folders (docker/, requirements/), or in an in-project
    package that one of those folders' code imports (a part's vendored package). A pin file no checked file is
    under (docs/requirements.txt beside Markdown only) is not listed."""
    from precisionlint.frameworks.documents import load_document
    from precisionlint.project import display_path
    from precisionlint.project.model import current
    from precisionlint.sources import format_of

    lines = resolved = 0
    pins: set[str] = set()
    seen: set[str] = set()
    for folder, names, files in os.walk(repo):
        names[:] = [n for n in names if not n.startswith(".") and n not in ("node_modules", "__pycache__")]
        if any(format_of(name) is not None for name in files):
            for directory in current().project_for(os.path.join(folder, "_")).chain:
                if directory.path in seen:
                    continue
                seen.add(directory.path)
                read = [os.path.join(directory.path, n) for n in directory.pin_files()]
                if directory.boundary:
                    read += [os.path.join(directory.path, n) for n in directory.wide_files()]
                for package in directory.imported():
                    read += [os.path.join(package.path, n) for n in package.pin_files()]
                pins.update(os.path.relpath(path, repo) for path in read)
        for name in files:
            if not name.endswith(".sh"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    document = load_document(display_path(path), handle.read(), "shell")
            except Exception:  # an unreadable script: check reports it, not this count
                continue
            project = current().project_for(path)
            for launch in document.tree or []:
                lines += 1
                script = getattr(launch, "script", None)
                if isinstance(script, str) and project.resolve(path, script) is not None:
                    resolved += 1
    return lines, resolved, sorted(pins)


def shown(path: str, repo: Path) -> str:
    """`path` as check printed it (under `repo`, which was named absolutely) shown as `repo-name/relative`.
    Textual, never through symbolic links: resolving a link that points outside the repository (icefall has an
    absolute one into its author's home directory) found no relative path, and the absolute path was printed
    after the repository's name (`repo//work/...`). A path outside the repository is shown as it is."""
    relative_path = os.path.relpath(path, repo) if os.path.isabs(path) == repo.is_absolute() else path
    if relative_path == ".." or relative_path.startswith(".." + os.sep) or os.path.isabs(relative_path):
        return path
    return f"{repo.name}/{relative_path.replace(os.sep, '/')}"


def reached_kind(finding: dict) -> str | None:
    """How a finding's value reached the framework (an argparse default, a conditional arm, a helper's return,
    ...: precisionlint.values), read from its related location and its message; None for a value written where
    the framework reads it."""
    from precisionlint.values.candidate import WHERE

    related = finding.get("related") or []
    message = str(finding.get("message", ""))
    if any(str(r.get("message", "")) == SCALED_BY_FRAMEWORK for r in related):
        return "framework backward"  # clip-before-unscale after accelerator/fabric.backward, manual_backward
    if SCALER_OFF in message:
        return "scaler off on a path"  # missing-grad-scaler where a GradScaler is None or disabled
    written_elsewhere = any(str(r.get("message", "")).startswith(WRITTEN_IN) for r in related)
    if not written_elsewhere and not any(str(r.get("message", "")).startswith(READ_BY) for r in related):
        return None
    for kind, where in WHERE.items():
        if f"({where}" in message:
            return kind
    return "other"


READ_BY = "read by `"  # how precisionlint.values.settings names the framework call that reads a reached value
WRITTEN_IN = "the value "  # ... and the place in another file (a launch line, a config key) where it is written
SCALER_OFF = "backpropagated without a GradScaler on the path where"  # missing-grad-scaler, per path
SCALED_BY_FRAMEWORK = "the framework's scaled backward"  # clip-before-unscale's related location


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, nargs="?", default=Path(os.environ.get("PRECISIONLINT_ECO", "/work/eco")),
                        help="directory whose subdirectories are repository checkouts")
    parser.add_argument("--precisionlint", default=None, help="the precisionlint executable to run")
    parser.add_argument("--repos", default="", help="comma-separated subset of repository directory names")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per repository")
    parser.add_argument("--show-info", action="store_true", help="print info-level findings too")
    parser.add_argument("--save", type=Path, help="write per-rule and per-repository counts as JSON")
    parser.add_argument("--baseline", type=Path, help="compare per-rule counts with a file written by --save")
    parser.add_argument("--attribution", action="store_true",
                        help="also count configs attributed by their reader and by their keys, launch lines and "
                             "the pin files read (runs check --show-frameworks once more per repository)")
    args, extra = parser.parse_known_args()

    exe = args.precisionlint or default_precisionlint()
    if not args.root.is_dir():
        sys.exit(f"ecosystem: {args.root} is not a directory")
    wanted = {name for name in args.repos.split(",") if name}
    repos = sorted(p for p in args.root.iterdir() if p.is_dir() and (not wanted or p.name in wanted))

    per_rule: Counter[str] = Counter()
    reached: Counter[str] = Counter()  # findings on a value that reaches a framework through the script, by kind
    per_repo: dict[str, dict[str, int]] = {}
    listed: list[str] = []
    problems: list[str] = []
    total_seconds = 0.0
    attributed: Counter[str] = Counter()
    pin_lines: list[str] = []
    print(f"{'repository':45} {'files':>5} {'error':>6} {'warn':>6} {'info':>6} {'seconds':>8}")
    for repo in repos:
        findings, seconds, problem = check_repository(exe, repo, extra, args.timeout)
        total_seconds += seconds
        if problem:
            problems.append(f"{repo.name}: {problem}")
        by_severity = Counter(f.get("severity", "?") for f in findings)
        files = len({f.get("path") for f in findings})
        per_repo[repo.name] = {s: by_severity.get(s, 0) for s in SEVERITIES}
        print(f"{repo.name:45} {files:5d} {by_severity['error']:6d} {by_severity['warning']:6d} "
              f"{by_severity['info']:6d} {seconds:8.1f}")
        if args.attribution:
            counts = attribution(exe, repo, args.timeout)
            lines, resolved, pins = launches_and_pins(repo)
            attributed.update(counts)
            attributed.update({"launch_lines": lines, "launch_scripts_resolved": resolved, "pin_files": len(pins)})
            print(f"{'':45} configs by reader {counts['by_reader']}, by keys {counts['by_keys']}, unread "
                  f"{counts['unread']}; launch lines {lines} ({resolved} start a script of the repository, "
                  f"{counts['launch_flags']} pass TrainingArguments flags)")
            pin_lines.append(f"{repo.name}: {', '.join(pins) or '(none)'}")
        for f in findings:
            key = f"{f.get('code')} {f.get('name')}"
            per_rule[key] += 1
            kind = reached_kind(f)
            if kind is not None:
                reached[kind] += 1
            if f.get("severity") in ("error", "warning") or args.show_info:
                cell = f":cell {f['cell']}" if f.get("cell") is not None else ""  # notebooks, as check shows them
                listed.append(f"{shown(f.get('path', ''), repo)}{cell}:{f.get('line')}:{f.get('column')} "
                             f"{f.get('code')} [{f.get('severity')}] {f.get('message')}")

    baseline: dict[str, int] = {}
    if args.baseline and args.baseline.exists():
        baseline = json.loads(args.baseline.read_text(encoding="utf-8")).get("per_rule", {})
    print(f"\n{len(repos)} repositories, {sum(per_rule.values())} findings, {total_seconds:.1f} s in check")
    print(f"\n{'rule':50} {'count':>6}" + (f" {'before':>7} {'change':>7}" if baseline else ""))
    for key in sorted(set(per_rule) | set(baseline)):
        line = f"{key:50} {per_rule.get(key, 0):6d}"
        if baseline:
            before = baseline.get(key, 0)
            line += f" {before:7d} {per_rule.get(key, 0) - before:+7d}"
        print(line)
    print(f"\nFindings reached through a value ({sum(reached.values())}), by kind:")
    for kind, count in reached.most_common():
        print(f"  {kind:48} {count:6d}")
    if args.attribution:
        print(f"\nConfig sections attributed by their reader: {attributed['by_reader']}, by their keys: "
              f"{attributed['by_keys']}; configs with precision keys no reader was found for: {attributed['unread']}")
        print(f"Launch lines: {attributed['launch_lines']} ({attributed['launch_scripts_resolved']} start a script of "
              f"the repository; {attributed['launch_flags']} pass flags its HfArgumentParser reads)")
        print(f"Pin files read ({attributed['pin_files']}):")
        for line in pin_lines:
            print("  " + line)
    print(f"\nEvery error and warning{' and info' if args.show_info else ''} ({len(listed)}):")
    for line in listed:
        print("  " + line)
    if problems:
        print(f"\nRuns that did not finish cleanly ({len(problems)}):")
        for line in problems:
            print("  " + line)
    if args.save:
        args.save.write_text(json.dumps({"per_rule": dict(per_rule), "per_repo": per_repo}, indent=2) + "\n",
                             encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
