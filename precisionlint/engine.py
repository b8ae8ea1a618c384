"""load -> normalize -> run checks -> apply suppressions and selection -> findings.

The engine never prints. One file's failure (unreadable, unparsable, over a limit, or a crash inside a rule)
becomes a finding for that file, and the other files are still checked.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from precisionlint.checks import CheckContext, Rule
from precisionlint.checks._meta import INTERNAL_ERROR, IO_ERROR, LIMIT_EXCEEDED, PARSE_ERROR
from precisionlint.model import Document, Finding, Format, Span
from precisionlint.sources import Limits, LimitError, SourceError, load_document

# The cheap text prefilter: a file that contains none of these byte strings cannot hold a finding of any
# rule, so it is neither decoded nor parsed. Whoever adds a rule that can fire without one of these words
# must add its word here (tests/test_prefilter.py checks every rule case against this list).
CONFIG_KEYWORDS: tuple[bytes, ...] = (
    b"precision",  # precision, mixed_precision, tf32_matmul_precision
    b"fp16",
    b"bf16",
    b"bfloat16",
    b"tf32",
    b"float16",
    b"fp8",
    b"loss_scale",
    b'"amp"',
    b"amp:",
    b"amp =",
)
PYTHON_KEYWORDS: tuple[bytes, ...] = (
    b"autocast",
    b"GradScaler",
    b".scale(",
    b"custom_fwd",
    b"custom_bwd",
    b"half",
    b"float16",  # also bfloat16
    b"precision",
    b"fp16",
    b"bf16",
    b"tf32",
    b"fp32_precision",
)


def might_hold_findings(data: bytes, fmt: Format) -> bool:
    keywords = PYTHON_KEYWORDS if fmt == "python" else CONFIG_KEYWORDS
    return any(word in data for word in keywords)


@dataclass(frozen=True)
class SourceFile:
    """A file to check: where it is on disk, how to show it, and its format."""

    fs_path: str
    display: str
    format: Format


@dataclass
class EngineOptions:
    rules: Sequence[Rule]
    gpus: tuple = ()
    limits: Limits = field(default_factory=Limits)
    prefilter: bool = True


@dataclass
class FileResult:
    display: str
    findings: list[Finding]
    document: Document | None = None
    internal_error: bool = False
    skipped: bool = False  # the prefilter showed it cannot hold a finding


def _engine_finding(rule: Rule, path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        path=path,
        span=Span.point(line, column),
        message=message,
    )


def _decode(data: bytes, display: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SourceError(f"not valid UTF-8: byte 0x{data[exc.start]:02x} cannot be decoded", line, column) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SourceError("binary file: contains NUL bytes", line, 1)
    return text


def read_source(source: SourceFile, limits: Limits) -> bytes | Finding:
    """The file's bytes, or the finding that explains why they cannot be had."""
    try:
        size = os.stat(source.fs_path).st_size
        if size > limits.max_file_size:
            return _engine_finding(
                LIMIT_EXCEEDED,
                source.display,
                f"file is {size:,} bytes, over the {limits.max_file_size:,}-byte limit (max-file-size); not checked",
            )
        with open(source.fs_path, "rb") as handle:
            data = handle.read(limits.max_file_size + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _engine_finding(IO_ERROR, source.display, f"cannot read file: {reason}")
    if len(data) > limits.max_file_size:  # grew between stat and read
        return _engine_finding(
            LIMIT_EXCEEDED, source.display, f"file is over the {limits.max_file_size:,}-byte limit; not checked"
        )
    return data


def check_source(source: SourceFile, options: EngineOptions, data: bytes | None = None) -> FileResult:
    if data is None:
        read = read_source(source, options.limits)
        if isinstance(read, Finding):
            return FileResult(source.display, [read])
        data = read
    if options.prefilter and not might_hold_findings(data, source.format):
        return FileResult(source.display, [], skipped=True)
    return check_bytes(source.display, data, source.format, options)


def check_bytes(display: str, data: bytes, fmt: Format, options: EngineOptions) -> FileResult:
    try:
        text = _decode(data, display)
        document = load_document(display, text, fmt, options.limits)
    except SourceError as exc:
        return FileResult(display, [_engine_finding(PARSE_ERROR, display, exc.message, exc.line, exc.column)])
    except LimitError as exc:
        return FileResult(display, [_engine_finding(LIMIT_EXCEEDED, display, f"{exc}; not checked")])
    except RecursionError:
        return FileResult(
            display, [_engine_finding(LIMIT_EXCEEDED, display, "nesting too deep to analyse; not checked")]
        )
    except Exception as exc:  # a bug in a loader must not stop the run
        return FileResult(display, [_internal(display, "loader", exc)], internal_error=True)
    return run_rules(document, options)


def run_rules(document: Document, options: EngineOptions) -> FileResult:
    from precisionlint.suppress import Suppressions

    findings: list[Finding] = []
    internal = False
    is_python = document.format == "python"
    for rule in options.rules:
        if rule.target == "engine":
            continue
        if rule.target == "script" and not is_python:
            continue
        if rule.needs_gpu and not options.gpus:
            continue
        try:
            ctx = CheckContext(document, rule, tuple(options.gpus))
            findings.extend(rule.func(ctx))
        except RecursionError:
            findings.append(
                _engine_finding(LIMIT_EXCEEDED, document.path, f"nesting too deep for rule {rule.name}; not checked")
            )
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            findings.append(_internal(document.path, rule.name, exc))
            internal = True
    findings = Suppressions.of(document).filter(findings)
    return FileResult(document.path, findings, document=document, internal_error=internal)


def _internal(path: str, where: str, exc: BaseException) -> Finding:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    location = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
    return _engine_finding(
        INTERNAL_ERROR,
        path,
        f"internal error in {where}: {type(exc).__name__}: {exc}{location}. "
        "This is a bug in precisionlint; please report it with this file.",
    )


def check_sources(sources: Iterable[SourceFile], options: EngineOptions, jobs: int = 1) -> list[FileResult]:
    """Check every source; results come back in the order of `sources`, whatever `jobs` is."""
    from precisionlint.parallel import map_ordered

    return map_ordered(check_source, list(sources), options, jobs)
