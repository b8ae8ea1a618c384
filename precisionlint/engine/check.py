"""load -> normalize -> run checks -> apply suppressions and selection -> findings.

The engine never prints. One file's failure (unreadable, unparsable, over a limit, or a crash inside a rule)
becomes a finding for that file, and the other files are still checked.

Per-file limits (each a limit-exceeded finding, PL003, when hit; configurable in [tool.precisionlint]). They
bound what a file costs, not its size: a 5 MB training script or config is checked (sources.Limits).
  max-file-size   bytes, checked with stat() before the file is opened (default 100 MB)
  max-nodes       tree nodes built or walked (default 5,000,000; stops YAML alias bombs)
  max-depth       nesting of a config tree (default 200); Python nesting is bounded by the recursion limit
  max-parse-time  CPU seconds to parse and check one file (default 60), where a CPU timer can be used
  max-memory      bytes one file's analysis may use (default 2 GB), estimated from its bytes before it is
                  parsed (estimated_memory below)
Only regular files are opened (never a FIFO or a device, which could block forever), and nothing is executed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from precisionlint.checks import CheckContext, Rule
from precisionlint.checks._meta import INTERNAL_ERROR, LIMIT_EXCEEDED, NEWER_SYNTAX, PARSE_ERROR
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.memory import ran_out_of_memory
from precisionlint.core.model import Document, Finding, Format, SourceFile
from precisionlint.engine.gate import needs_script_model, python_tree_is_read
from precisionlint.engine.guard import within_time_limit
from precisionlint.engine.options import EngineOptions
from precisionlint.engine.prefilter import might_hold_findings
from precisionlint.engine.reading import read_source
from precisionlint.engine.results import FileResult, engine_finding
from precisionlint.frameworks.documents import load_document
from precisionlint.sources import LimitError, NewerSyntaxError, NotCheckable, SourceError
from precisionlint.sources.decoding import decode_source

if TYPE_CHECKING:
    from typing import Any


def check_source(source: SourceFile, options: EngineOptions, data: bytes | None = None) -> FileResult:
    if data is None:
        read = read_source(source, options.limits)
        if isinstance(read, Finding):
            return FileResult(source.display, [read])
        data = read
    if options.prefilter and not might_hold_findings(data, source.format):
        return FileResult(source.display, [], skipped=True)
    return check_bytes(source.display, data, source.format, options)


# What the analysis of one file costs in memory (peak RSS above a check of a tiny file), estimated from its bytes
# before it is parsed (max-memory above), per format, from what its tree is made of. Measured with
# benchmarks/big_files.py and on the largest parsed files of the ecosystem corpus:
# - Python: bytes per occurrence of these delimiters, each of which starts or separates roughly one tree node.
#   890 to 955 bytes per mark on real scripts of 0.3-0.4 MB (unsloth's save.py, peft's test_custom_models.py,
#   TransformerEngine's test_hybrid_quantization.py), 1,084 on the generated 5 MB training script (767 MB, of
#   which ast.parse alone takes 750), 990 for ast.parse alone on one dense list literal (tests/test_memory_limit).
_PYTHON_NODE_MARKS = (b",", b"(", b"[", b"{", b".", b"=", b":", b"\n", b"+", b"-", b"*")
_PYTHON_BYTES_PER_MARK = 1_050
# - YAML: per line and per flow-collection comma (about one node each): the tree built from libyaml's events as
#   they are parsed. The generated 5 MB trainer config (219,686 marks) peaks 94 MB above the interpreter, 428
#   bytes a mark (its CSafeLoader compose alone 167 MB). A file that takes the round-trip path (anchors, tags
#   of the standard kind, directives: sources/yaml_check) costs ruamel's tree: the same config read there
#   grows by 427 MB, 1,940 bytes a mark.
_YAML_MARKS = (b"\n", b",")
_YAML_BYTES_PER_MARK = 440
_YAML_ROUND_TRIP_BYTES_PER_MARK = 2_000
# - JSON: json.loads validates it (8x its size at its peak) and the scan builds the tree of all but its big
#   containers, which it leaves unbuilt until read (sources/json_source): the generated 20 MB DeepSpeed config
#   with a tokenizer payload peaks 194 MB above the interpreter, 9.7x. A file of many small objects that are
#   all read costs more (about 500 bytes a value); max-nodes bounds that.
_JSON_BYTES_PER_BYTE = 10
_CONFIG_BYTES_PER_BYTE = 40  # TOML and shell scripts: tomlkit's document keeps every token and its trivia
# A notebook's bytes are mostly cell outputs (base64 images, logs) that json.loads keeps as a few large strings;
# only its code cells are analysed. Measured: a 3.7 MB notebook of image outputs peaks at about 8 MB above the
# interpreter, so 4 bytes per byte is a safe bound, where the config figure would refuse it.
_NOTEBOOK_BYTES_PER_BYTE = 4
_ESTIMATE_FROM = 256_000  # smaller files fit any sensible limit; not worth counting


def estimated_memory(data: bytes, fmt: Format) -> int:
    if len(data) < _ESTIMATE_FROM:
        return 0
    if fmt == "python":
        return sum(data.count(mark) for mark in _PYTHON_NODE_MARKS) * _PYTHON_BYTES_PER_MARK
    if fmt == "yaml":
        from precisionlint.sources.yaml_check import may_need_round_trip

        text = data.decode("utf-8", "replace")  # a big file's text, which its check decodes next anyway
        per_mark = _YAML_ROUND_TRIP_BYTES_PER_MARK if may_need_round_trip(text) else _YAML_BYTES_PER_MARK
        return sum(data.count(mark) for mark in _YAML_MARKS) * per_mark
    if fmt == "json":
        return len(data) * _JSON_BYTES_PER_BYTE
    if fmt == "notebook":
        return len(data) * _NOTEBOOK_BYTES_PER_BYTE
    return len(data) * _CONFIG_BYTES_PER_BYTE


def _tree_not_read(display: str, data: bytes, fmt: Format) -> bool:
    """A Python file over the memory limit that no pass would parse (python_tree_is_read, the test that
    _check_bytes makes first): it costs no more than its text, so it is skipped as a file under the limit would
    be, not reported as too large to check. (tinygrad's generated GPU register tables, 1.4 MB each, pass the
    prefilter for a register field named `fp16_ovfl`.)"""
    if fmt != "python":
        return False
    try:
        text = decode_source(data, display, fmt)
    except (SourceError, NotCheckable):
        return False  # reported as it always was
    return not python_tree_is_read(text)


def check_bytes(display: str, data: bytes, fmt: Format, options: EngineOptions) -> FileResult:
    """Decode, parse and check one file's bytes. Never raises (short of KeyboardInterrupt/SystemExit): every
    problem is a finding for this file."""
    from precisionlint.sources.not_config import not_a_config

    if not_a_config(display, data, fmt):  # data or a vocabulary: skipped before its size could count against it
        return FileResult(display, [], skipped=True)
    budget = getattr(options.limits, "max_memory", 0)
    if budget:
        needed = estimated_memory(data, fmt)
        if needed > budget and not _tree_not_read(display, data, fmt):
            return FileResult(display, [engine_finding(
                LIMIT_EXCEEDED, display,
                f"analysing this {len(data):,}-byte file would take about {needed / 1e6:,.0f} MB of memory, over "
                f"the {budget / 1e6:,.0f} MB limit (max-memory); not checked",
            )])
    result = within_time_limit(options.limits, _check_bytes, display, data, fmt, options)
    if result is not None:
        return result
    seconds = options.limits.max_parse_time
    return FileResult(
        display,
        [engine_finding(
            LIMIT_EXCEEDED, display,
            f"took more than {seconds:g} s of CPU time to analyse (max-parse-time); not checked",
        )],
    )


def _check_bytes(display: str, data: bytes, fmt: Format, options: EngineOptions) -> FileResult:
    try:
        text = decode_source(data, display, fmt)
        if fmt == "python" and not python_tree_is_read(text):
            return FileResult(display, [])
        document = load_document(display, text, fmt, options.limits)
    except NotCheckable:
        return FileResult(display, [], skipped=True)
    except SourceError as exc:
        if _DIGITS_LIMIT in exc.message:
            return _digits_limit(display)
        rule = NEWER_SYNTAX if isinstance(exc, NewerSyntaxError) else PARSE_ERROR
        return FileResult(display, [engine_finding(rule, display, exc.message, exc.line, exc.column)])
    except LimitError as exc:
        return FileResult(display, [engine_finding(LIMIT_EXCEEDED, display, f"{exc}; not checked")])
    except RecursionError:
        return FileResult(
            display, [engine_finding(LIMIT_EXCEEDED, display, "nesting too deep to analyse; not checked")]
        )
    except Exception as exc:  # a bug in a loader must not stop the run
        if isinstance(exc, ValueError) and _DIGITS_LIMIT in str(exc):
            return _digits_limit(display)
        if ran_out_of_memory(exc):  # a memory limit on the process, not a bug
            return FileResult(display, [engine_finding(
                LIMIT_EXCEEDED, display, f"ran out of memory while reading it {_MEMORY_LIMIT}; not checked")])
        return FileResult(display, [_internal(display, "loader", exc)], internal_error=True)
    if fmt in ("yaml", "json", "toml"):
        try:
            from precisionlint.project.config_readers import attribute_by_readers

            attribute_by_readers(document)  # the scripts that load it name its reader
        except (RecursionError, MemoryError):
            pass  # a script too deep to read: its reads stay unknown, the keys still attribute the config
    elif fmt == "shell":
        try:
            from precisionlint.project.launch_readers import attribute_launches

            attribute_launches(document)  # the flags the started script's HfArgumentParser reads
        except (RecursionError, MemoryError):
            pass
    elif fmt == "python":
        document.launch_lines = launch_lines_of  # asked only when a rule judges an option's default
    return run_rules(document, options, data)


def launch_lines_of(document: Document) -> list[Any]:
    """The launch lines of the project's shell scripts that start a Python document on disk (project.launched)."""
    import os

    from precisionlint.project import disk_path, project_of

    path = disk_path(document)
    if not os.path.isfile(path):
        return []
    from precisionlint.project.launched import launch_lines

    return launch_lines(project_of(document), path)


# Python refuses to convert an integer of more than 4,300 digits (CVE-2020-10735); its message names a
# function of the sys module, which means nothing to the user.
_DIGITS_LIMIT = "integer string conversion"


def _digits_limit(display: str) -> FileResult:
    return FileResult(display, [engine_finding(
        LIMIT_EXCEEDED, display, "holds a number of more than 4,300 digits, which Python cannot read as an "
        "integer; not checked")])


def run_rules(document: Document, options: EngineOptions, data: bytes | None = None) -> FileResult:
    """The rules on a loaded document, then its suppressions. Given the file's bytes (and the prefilter on), only
    the rules that may report on them run (prefilter.rules_that_may_report): the others are not even imported."""
    gpus = tuple(options.gpus)
    rules = options.rules
    if data is not None and options.prefilter:
        from precisionlint.engine.prefilter import rules_that_may_report

        rules = rules_that_may_report(options.rules, data, document.format)
    findings, internal, too_deep, out_of_memory = _run(document, rules, gpus)
    if (too_deep or out_of_memory) and len(rules) != len(options.rules):
        # A file too deep (or too large) for some rules: the finding names every rule it stopped, as a run of all
        # of them would, so run them all.
        findings, internal, too_deep, out_of_memory = _run(document, options.rules, gpus)
    # One finding each, not one per rule: the script rules share one model, so they fail together.
    if too_deep:
        findings.append(engine_finding(
            LIMIT_EXCEEDED, document.path, f"nesting too deep to analyse; not checked by {_some(too_deep)}"
        ))
    if out_of_memory:
        findings.append(engine_finding(
            LIMIT_EXCEEDED, document.path, f"ran out of memory {_MEMORY_LIMIT}; not checked by {_some(out_of_memory)}"
        ))
    try:
        from precisionlint.engine.suppress import Suppressions

        findings = Suppressions.of(document).apply(findings, document, options.rules, bool(gpus))
    except RecursionError:
        pass  # unreadable directives: report every finding rather than none
    except Exception as exc:
        if not ran_out_of_memory(exc):
            findings.append(_internal(document.path, "suppressions", exc))
            internal = True
        elif not out_of_memory:  # one finding per file
            findings.append(engine_finding(LIMIT_EXCEEDED, document.path, (
                f"ran out of memory {_MEMORY_LIMIT} while reading its suppression comments; its findings are "
                "shown without them")))
    readers = document.reader_related
    if readers:  # a config value a script hands to a framework: the call that reads it, beside the finding
        findings = [f._replace(related=(*f.related, readers[f.span])) if f.span in readers else f
                    for f in findings]
    remap = document.remap_findings
    if remap is not None:  # a notebook: lines of the joined cells become lines of each cell
        findings = remap(findings)
    return FileResult(document.path, findings, document=document, internal_error=internal,
                      unread=_unread(document))


def _run(document: Document, rules: Sequence[Rule], gpus: tuple[Any, ...]
         ) -> tuple[list[Finding], bool, list[str], list[str]]:
    """Each rule's findings on the document, whether one failed, and the rules stopped by depth or memory."""
    findings: list[Finding] = []
    internal = False
    too_deep: list[str] = []
    out_of_memory: list[str] = []
    scripted = document.format == "python" and needs_script_model(document.text)
    for rule in rules:
        if rule.target == "engine":
            continue
        if rule.target == "script" and not scripted:
            continue
        if rule.needs_gpu and not gpus:
            continue
        try:
            context = CheckContext(document, rule, gpus)
            found = rule.func(context)
            if rule.needs_gpu:  # what it says of the target GPUs is not true of a file for another accelerator
                from precisionlint.checks._accelerator import unless_elsewhere

                found = unless_elsewhere(context, iter(found))
            findings.extend(found)
        except RecursionError:
            too_deep.append(rule.name)
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            if ran_out_of_memory(exc):  # a memory limit on the process (ulimit -v), not a bug
                out_of_memory.append(rule.name)
                continue
            findings.append(_internal(document.path, rule.name, exc))
            internal = True
    return findings, internal, too_deep, out_of_memory


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _unread(document: Document) -> bool:
    """A config whose precision-looking keys no framework claimed: no framework rule looked at it, and the
    summary says so (an "All checks passed!" there would claim more than was checked)."""
    if document.settings or document.format not in ("toml", "yaml", "json"):
        return False
    from precisionlint.frameworks.unclaimed import unclaimed_keys
    from precisionlint.project.config_readers import overridden_keys

    overridden = overridden_keys(document)
    # unclaimed_keys names each key as "`a.b` line N": a key its reader overrides was read, then replaced
    return any(key.split("`")[1] not in overridden for key in unclaimed_keys(document))


_MEMORY_LIMIT = "(a memory limit on the process, such as `ulimit -v`?)"


def _internal(path: str, where: str, exc: BaseException) -> Finding:
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    location = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
    detail = " ".join(str(exc).split())
    if len(detail) > 200:
        detail = detail[:197] + "..."
    return engine_finding(
        INTERNAL_ERROR,
        path,
        f"internal error in {where}: {type(exc).__name__}: {detail}{location}. "
        "This is a bug in precisionlint; please report it with this file.",
    )
