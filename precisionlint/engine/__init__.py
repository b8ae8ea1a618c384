"""load -> normalize -> run checks -> apply suppressions and selection -> findings.

The engine never prints. One file's failure (unreadable, unparsable, over a limit, or a crash inside a rule)
becomes a finding for that file, and the other files are still checked.

Per-file limits (each a limit-exceeded finding, PL003, when hit; configurable in [tool.precisionlint]):
  max-file-size   bytes, checked with stat() before the file is opened (default 10 MB)
  max-nodes       tree nodes built or walked (default 1,000,000; stops YAML alias bombs)
  max-depth       nesting of a config tree (default 200); Python nesting is bounded by the recursion limit
  max-parse-time  CPU seconds to parse and check one file (default 10), where a CPU timer can be used
  max-memory      bytes one file's analysis may use (default 150 MB), estimated from its bytes before it is
                  parsed: a Python tree costs up to 1.3 kB per token-like delimiter (measured: 110 B to 1.3 kB on
                  real and generated files), so 1.3 MB of real code needs about 70 MB, but 3 MB of one dense
                  list literal 1.4 GB; configs cost about 40 bytes per byte (JSON measured at 37x and 53x)
Only regular files are opened (never a FIFO or a device, which could block forever), and nothing is executed.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from precisionlint.checks import CheckContext, Rule
from precisionlint.checks._meta import INTERNAL_ERROR, IO_ERROR, LIMIT_EXCEEDED, NEWER_SYNTAX, PARSE_ERROR
from precisionlint.core.bounded_read import why_not_regular
from precisionlint.core.memory import ran_out_of_memory
from precisionlint.core.model import Document, Finding, Format, Span
from precisionlint.sources import LimitError, Limits, NewerSyntaxError, NotCheckable, SourceError, load_document

# The cheap text prefilter: a file that contains none of these byte strings cannot hold a finding of any
# rule, so it is neither decoded nor parsed. Whoever adds a rule that can fire without one of these words
# must add its word here (tests/test_engine.py checks every rule case against this list).
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
    b"AMP:",  # Detectron2 (yacs): SOLVER.AMP.ENABLED
    b"_component_: torchtune.",  # a torchtune recipe's `dtype: half` names no precision word (PL101)
    b'"_component_": "torchtune.',
    b"deepspeed_config",  # a launcher's --deepspeed_config: read with the script it starts (PL404)
    b"--fp4-",  # a Megatron-LM launch's --fp4-format / --fp4-recipe (PL304), which names no other word here
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
    b"deepspeed=",  # TrainingArguments(deepspeed="ds.json"): compared with the DeepSpeed file it names
    b"AmpOptimWrapper",  # MMEngine configs: loss_scale / dtype of the AMP optimizer wrapper
    # fp8-unsupported-gpu: Transformer Engine recipes and torchao float8 training (checks/_fp8_recipes.WORDS)
    b"DelayedScaling",
    b"CurrentScaling",
    b"BlockScaling",
    b"Float8LinearConfig",
    b"convert_to_float8_training",
)


# A Python file that passes the prefilter gets the training-step model (the script rules' one input) only when
# its text holds one of these words: every fact the model can report a finding on is spelled with one of them
# (autocast regions, GradScaler objects and their calls, TF32 switches, the deprecated torch.cuda.amp names). The
# rest pass the prefilter for "precision", "fp16" or "bf16" alone (a metric, a CLI flag, a TrainingArguments call):
# their settings are still checked, but no model is built. tests/test_script_gate.py checks every script rule's
# cases against this gate.
SCRIPT_MODEL_WORDS: tuple[str, ...] = (
    "autocast",
    # A GradScaler is known to the model only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`:
    # a name that merely says "scaler" (a Trainer's `scaler` property, a comment) gives the rules no scaler.
    "GradScaler",
    ".scale(",
    "unscale_",  # the whole name (see _WHOLE_NAMES): Lightning's `unscale_gradients` is another method
    "custom_fwd",
    "custom_bwd",
    "tf32",
    "fp32_precision",
    "is_bf16_supported",  # emulated-bf16-selection: a dtype chosen by torch.cuda.is_bf16_supported()
    "matmul_precision",  # torch.set_float32_matmul_precision (the TF32 state model)
    "MixedPrecisionPolicy",  # FSDP2's policy (checks/_fsdp.py): missing-grad-scaler, low-precision-gradient-reduction
    "MixedPrecision(",  # FSDP1's: plain-grad-scaler-with-fsdp
)
# A half-precision cast (`model.half()`, `.to(torch.float16)`, `torch.bfloat16`) without any word above matters
# only to the rules about what updates half-precision weights: an optimizer of torch.optim over them
# (half-params-without-master-weights, adam-eps-underflow-fp16: the model records only the constructors of
# torch.optim's optimizer classes, script.names.TORCH_OPTIMIZERS, so the text spells one of their names), or a
# Trainer with `fp16=True` over a model that `from_pretrained` loads in float16 (scaler-with-half-params). Half
# casts are everywhere in model code (a third of the files that pass the prefilter in pytorch-lightning and
# diffusers name nothing else), and most build no optimizer: "optimizer" alone is in every file of a training
# framework, in type hints and hooks.
# A checkpoint that `from_pretrained` loads (in 16 bits, or in its own dtype: `dtype="auto"`, Transformers 5's
# default) matters to the rules about what trains it: beside `fp16` (TrainingArguments), a Trainer, a backward
# call or one of torch.optim's optimizers.
HALF_CAST_WORDS: tuple[str, ...] = ("half", "float16")  # float16 also in bfloat16


def word_probe(text: str) -> str:
    """The text in which to look for the words that decide whether a pass reads a Python file: ASCII text
    itself. The parser NFKC-normalises identifiers that are not ASCII (a fullwidth `ａｕｔｏｃａｓｔ` is
    `autocast`), so other text is followed by its NFKC form, and every character still not ASCII is written as
    `?`. No word looked for holds such a character, so each word written in the text (a string, a comment) or
    normalised into an identifier is in the probe, and the probe is ASCII, which the tests need to rule a file
    out. (pytorch-lightning: 9 of the files that pass the prefilter hold a typographic quote or an ellipsis.)"""
    if text.isascii():
        return text
    if _LAST_PROBE[0] is not text:  # the engine asks twice about a file: whether it is read, then for the model
        import unicodedata

        probe = f"{text}\n{unicodedata.normalize('NFKC', text)}".encode("ascii", "replace").decode("ascii")
        _LAST_PROBE[:] = [text, probe]
    return _LAST_PROBE[1]  # type: ignore[return-value]


_LAST_PROBE: list[str | None] = [None, None]


def _optimizer_words() -> tuple[str, ...]:
    """The names of the optimizer classes the model records, less those that hold another (AdamW holds Adam)."""
    from precisionlint.script.names import OTHER_OPTIMIZER_NAMES, TORCH_OPTIMIZERS

    names = TORCH_OPTIMIZERS | OTHER_OPTIMIZER_NAMES  # bitsandbytes' AdamW8bit holds Adam, apex's FusedAdam too
    return tuple(sorted(name for name in names if not any(other != name and other in name for other in names)))


_OPTIMIZER_WORDS: tuple[str, ...] = ()


# Words of SCRIPT_MODEL_WORDS that count only as a whole name: the model looks for the method of that exact name.
_WHOLE_NAMES = frozenset({"unscale_"})


def _holds_name(text: str, name: str) -> bool:
    """Whether `name` is written in `text` (ASCII) with no letter, digit or underscore right after it."""
    start = text.find(name)
    while start != -1:
        end = start + len(name)
        if end == len(text) or not (text[end].isalnum() or text[end] == "_"):
            return True
        start = text.find(name, end)
    return False


def needs_script_model(text: str) -> bool:
    global _OPTIMIZER_WORDS
    probe = word_probe(text)
    if any(_holds_name(probe, word) if word in _WHOLE_NAMES else word in probe for word in SCRIPT_MODEL_WORDS):
        return True
    if "clip_grad" in probe and ".backward(" in probe and (
            "mixed_precision" in probe and "Accelerator(" in probe or "precision" in probe and "Fabric(" in probe):
        return True  # clip-before-unscale: a plain clip after a framework's scaled backward (accelerator.backward)
    if ("self.manual_backward(" in probe and "clip_grad" in probe and "precision" in probe and "Trainer(" in probe
            and "def manual_backward" not in probe):
        # clip-before-unscale: a clip after Lightning's manual_backward under a float16 Trainer (not Lightning's
        # own LightningModule, whose docstrings say all of it)
        return True
    loads = "from_pretrained" in probe
    if not loads and not any(word in probe for word in HALF_CAST_WORDS):
        return False
    if not _OPTIMIZER_WORDS:
        _OPTIMIZER_WORDS = _optimizer_words()
    if any(name in probe for name in _OPTIMIZER_WORDS):
        return True
    # scaler-with-half-params (a float16 load trained with fp16=True), fp16-on-bf16-checkpoint (a float16 load
    # of a bfloat16 checkpoint that a Trainer or a backward trains), half-params-without-master-weights (a load in
    # 16 bits, or in the checkpoint's own dtype, that a Trainer trains)
    return loads and ("fp16" in probe or "Trainer" in probe or ".backward(" in probe)


def python_tree_is_read(text: str) -> bool:
    """Whether any pass reads the tree of a Python file that passed the prefilter. False only when each of them
    would stop at its own test of the text: no word the script rules' model needs (needs_script_model), no
    framework call that passes a setting a rule reports on (the framework settings pass: MMEngine's marker, or a
    framework's import, one of its calls and a precision keyword followed by `=`; Lightning's `accelerator=` and
    `strategy=` only qualify a precision of the same call), no link to a DeepSpeed config that
    cross-file-precision-conflict could follow (may_link_a_deepspeed_config), and no suppression comment to
    check. Such a file is neither parsed nor checked further: no rule could report on it, so a syntax error in it
    is not reported either (pytorch-lightning: 82 of the 170 Python files that pass the prefilter, for
    "precision" in prose or a metric's name, a Trainer given only an accelerator or a strategy, DeepSpeed's
    name, or a cast to float16 beside no optimizer).
    tests/test_engine.py checks this against every pass on real files."""
    if needs_script_model(text):
        return True
    from precisionlint.engine.suppress import may_hold_directives
    from precisionlint.frameworks import mmengine
    from precisionlint.frameworks.python_calls import may_call_a_framework, may_pass_a_precision_setting
    from precisionlint.sources.python_source import may_import_a_framework

    probe = word_probe(text)
    from precisionlint.checks._fp8_recipes import WORDS as FP8_RECIPE_WORDS

    if any(word in probe for word in FP8_RECIPE_WORDS):
        return True  # fp8-unsupported-gpu reads the recipes a script builds
    if mmengine.MARKER in probe or may_link_a_deepspeed_config(probe) or (
            may_import_a_framework(probe) and may_call_a_framework(probe) and may_pass_a_precision_setting(probe)):
        return True  # the keyword scan is kept for the settings pass that follows
    return may_hold_directives(text, python=True)  # comments are not normalised: the text as written


# A DeepSpeed config named by a literal path: cross-file-precision-conflict follows only those of a .json,
# .yaml or .yml file (in any case).
_CONFIG_PATH_SUFFIX = re.compile(r"\.(?:json|ya?ml)", re.IGNORECASE)


def may_link_a_deepspeed_config(text: str) -> bool:
    """False only when cross-file-precision-conflict finds no DeepSpeed config to compare the file with:
    `TrainingArguments(..., deepspeed="ds.json")` names one of its classes and a config path, and
    `Trainer(precision=..., strategy=DeepSpeedStrategy(config=...))` the strategy, the Trainer and a precision
    keyword. The rest of DeepSpeed's and Lightning's own code says "deepspeed" on every page and links to no
    config (pytorch-lightning: 21 files). `text` is ASCII (word_probe)."""
    if "deepspeed" not in text and "DeepSpeed" not in text:
        return False
    from precisionlint.frameworks.python_calls import may_call_a_framework, may_pass_a_precision_setting
    from precisionlint.project.links import HF_ARGUMENT_CLASSES

    if "deepspeed" in text and any(name in text for name in HF_ARGUMENT_CLASSES) and _CONFIG_PATH_SUFFIX.search(text):
        return True
    return "DeepSpeedStrategy" in text and may_call_a_framework(text) and may_pass_a_precision_setting(text)


def _scan_plan(words: tuple[bytes, ...], gates: tuple[bytes, ...]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """How to look for `words` with fewer scans of the file, finding exactly the same files: a word that holds
    another word is found whenever that one is (it is dropped), and words that share a piece (a gate: "16" in
    fp16, bf16 and float16) are looked for only in files that hold the piece. Each scan of a file costs about a
    millisecond per megabyte, and most files hold none of the words, so every word is otherwise one more scan
    (the prefilter was a tenth of a cold run's CPU on SpeechBrain's tree)."""
    kept = [word for word in words if not any(other != word and other in word for other in words)]
    plan: list[tuple[bytes, tuple[bytes, ...]]] = []
    for gate in gates:
        group = tuple(word for word in kept if gate in word)
        if len(group) > 1:
            plan.append((gate, group))
            kept = [word for word in kept if word not in group]
    plan.extend((word, ()) for word in kept)  # a word alone is its own gate: nothing more to look for
    return tuple(plan)


# Gates are pieces shared by several words; which ones does not change what is found, only how fast.
_PYTHON_PLAN = _scan_plan(PYTHON_KEYWORDS, (b"16", b"custom_"))
_CONFIG_PLAN = _scan_plan(CONFIG_KEYWORDS, (b"16", b"amp", b"torchtune."))


def might_hold_findings(data: bytes, fmt: Format) -> bool:
    """Whether `data` holds any of the format's keywords (PYTHON_KEYWORDS or CONFIG_KEYWORDS)."""
    plan = _PYTHON_PLAN if fmt in ("python", "notebook") else _CONFIG_PLAN
    if data[:2] in (b"\xff\xfe", b"\xfe\xff", b"\x00\x00"):
        wide = _wide_encoding(data)
        if wide is not None:
            # UTF-16/32 (a byte-order mark): look for the words in the decoded text, so that a config saved by
            # a Windows tool is reported as unreadable (see decode_source) rather than silently skipped.
            data = data.decode(wide, "replace").encode("utf-8", "replace")
    for gate, words in plan:
        if gate in data and (not words or any(word in data for word in words)):
            return True
    return False


def _wide_encoding(data: bytes) -> str | None:
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return None


class SourceFile(NamedTuple):
    """A file to check: where it is on disk, how to show it, and its format."""

    fs_path: str
    display: str
    format: Format


class ContextKey(Protocol):
    """For one file, a string that names everything outside its own bytes that its findings depend on (for a
    rule that reads other files: the pins it reads, and for a file that names others, its folder and the
    files it can name). See precisionlint.project.context."""

    def portable(self, source: SourceFile) -> str:
        """The part of the key that holds for any content at this path and does not name the folder."""
        ...

    def reads_folder(self, source: SourceFile, data: bytes) -> bool:
        """Whether the key of this content names its folder (then a copy elsewhere is analysed on its own)."""
        ...

    def key(self, source: SourceFile, reads_folder: bool) -> str:
        """The key of a content at this path, given what reads_folder said of it."""
        ...

    def stat(self, fs_path: str) -> os.stat_result | None:
        """os.stat of a file of the run, taken once per run for the loop and the keys alike."""
        ...


class EngineOptions:
    """What a run checks with. `context_key`, when set, gives each file's context key. Two files share one
    analysis, and a cached result is reused, only when their content, format, file name, the folder names the
    analysis reads (FOLDER_WORDS) and context key all agree."""

    def __init__(
        self,
        rules: Sequence[Rule],
        gpus: tuple = (),
        limits: Limits | None = None,
        prefilter: bool = True,
        context_key: ContextKey | None = None,
    ) -> None:
        self.rules = rules
        self.gpus = gpus
        self.limits = limits if limits is not None else Limits()
        self.prefilter = prefilter
        self.context_key = context_key


class FileResult:
    # A run holds one for every file of the tree until it ends, most of them skipped: no __dict__ each.
    __slots__ = ("display", "findings", "document", "internal_error", "skipped", "unread")

    def __init__(
        self,
        display: str,
        findings: list[Finding],
        document: Document | None = None,
        internal_error: bool = False,
        skipped: bool = False,  # the prefilter showed it cannot hold a finding
        unread: bool = False,  # a config with precision keys that no framework was identified to read
    ) -> None:
        self.display = display
        self.findings = findings
        self.document = document
        self.internal_error = internal_error
        self.skipped = skipped
        self.unread = unread


def _engine_finding(rule: Rule, path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        path=path,
        span=Span.point(line, column),
        message=message,
    )


def decode_source(data: bytes, display: str, fmt: Format | None = None) -> str:
    """The text of a file: UTF-8 (one BOM stripped), or for Python (`fmt`, else the name's suffix) the
    encoding its PEP 263 coding declaration names, as Python itself reads it."""
    wide = _wide_encoding(data)
    if wide is not None:
        raise SourceError(f"encoded as {wide.upper()} (byte-order mark): precisionlint reads UTF-8 files only", 1, 1)
    python = fmt == "python" or (fmt is None and display.endswith((".py", ".pyi")))
    if python and not data.startswith(b"\xef\xbb\xbf"):
        declared = python_encoding(data)
        if declared is not None:
            return _decode_declared(data, declared)
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


def python_encoding(data: bytes) -> str | None:
    """The codec a Python file's coding declaration (PEP 263, on line 1 or 2) names, or None for UTF-8 (the
    default, and what a declaration of UTF-8 says). Raises SourceError for an unknown encoding."""
    head = b"\n".join(data[:1024].split(b"\n", 2)[:2])
    if b"coding" not in head:
        return None
    return cookie_encoding(head.decode("latin-1"))


def cookie_encoding(head: str) -> str | None:
    """As python_encoding, on the text of the first lines."""
    import codecs
    import re

    for number, line in enumerate(head.split("\n")[:2], start=1):
        found = re.match(r"[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", line, re.ASCII)
        if found:
            try:
                codec = codecs.lookup(found.group(1)).name
            except LookupError:
                raise SourceError(f"unknown encoding {found.group(1)!r} in the coding declaration", number,
                                  found.start(1) + 1) from None
            return None if codec.startswith("utf-8") else codec
        if not re.match(r"[ \t\f]*(?:[#\r]|$)", line):
            break  # a declaration on line 2 counts only below a comment or blank line
    return None


def _decode_declared(data: bytes, encoding: str) -> str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise SourceError(f"not valid {encoding} (the file's coding declaration): byte 0x{data[exc.start]:02x} "
                          "cannot be decoded", line, column) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SourceError("binary file: contains NUL bytes", line, 1)
    return text


# Opened non-blocking, so that a FIFO named like a config cannot hang the run (bounded_read says why).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_source(source: SourceFile, limits: Limits, opened: list[os.stat_result] | None = None) -> bytes | Finding:
    """The file's bytes, or the finding that explains why they cannot be had. `opened`, when given, receives the
    stat of the descriptor the bytes are read from, taken before reading them (the cache's file index).

    Only regular files are read: a FIFO or a device named like a config would block the run forever. The
    check is made with stat() before opening and again on the open descriptor (opened non-blocking, so even a
    FIFO swapped in between cannot block), and the size limit is checked before any byte is read."""
    try:
        info = os.stat(source.fs_path)
        why = why_not_regular(info.st_mode)
        if why is not None:
            return _engine_finding(IO_ERROR, source.display, f"cannot read file: {why}")
        if info.st_size > limits.max_file_size:
            return _too_big(source.display, info.st_size, limits)
        fd = os.open(source.fs_path, _OPEN_FLAGS)
        try:
            described = os.fstat(fd)
            why = why_not_regular(described.st_mode)
            if why is not None:
                return _engine_finding(IO_ERROR, source.display, f"cannot read file: {why}")
            if opened is not None:
                opened.append(described)
            # One read of the size the file has (and one byte more, to see that it ends there): a fixed-size
            # buffer, shrunk to each file, left the parent's heap fragmented by the thousands of files of a tree
            # (64 MB of heap for 16,000 files, against 14 MB of live objects). A file that grew since is read on.
            remaining = limits.max_file_size + 1
            want = min(remaining, described.st_size + 1)
            chunk = os.read(fd, want)
            chunks = [chunk]
            remaining -= len(chunk)
            while len(chunk) == want and remaining > 0:
                want = min(remaining, 1 << 20)
                chunk = os.read(fd, want)
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        finally:
            os.close(fd)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _engine_finding(IO_ERROR, source.display, f"cannot read file: {reason}")
    except ValueError as exc:  # e.g. a path with a NUL character
        return _engine_finding(IO_ERROR, source.display, f"cannot read file: {exc}")
    if len(data) > limits.max_file_size:  # grew between stat and read
        return _too_big(source.display, None, limits)
    return data


def _too_big(display: str, size: int | None, limits: Limits) -> Finding:
    shown = f"{size:,} bytes" if size is not None else "larger than that"
    return _engine_finding(
        LIMIT_EXCEEDED,
        display,
        f"file is {shown}, over the {limits.max_file_size:,}-byte limit (max-file-size); not checked",
    )


def content_digest(data: bytes) -> str:
    """A short hash of a file's bytes: 128 bits of BLAKE2b (fast, and _blake2 imports in well under a
    millisecond, where hashlib loads OpenSSL)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


# The folder names that an analysis reads from a file's path: test suites (checks/_attribution.py), folders of
# code that trains nothing (checks/true_half_precision_training.py) and Lightning's `trainer/` config groups
# (frameworks/lightning.py). A rule that looks at another folder name must add it here, or copies of one
# content in two folders would share findings (tests/test_cache.py checks the lists against these modules).
FOLDER_WORDS = frozenset({"test", "tests", "testing", "inference", "serving", "deploy", "benchmarks", "trainer"})


def folder_words(display: str) -> str:
    """The FOLDER_WORDS among the folders of a displayed path, as the analysis sees them (lower case)."""
    parts = display.replace("\\", "/").lower().split("/")[:-1]
    return ",".join(sorted({part for part in parts if part in FOLDER_WORDS}))


def identity_of(source: SourceFile, digest: str, context: str) -> str:
    """What one analysis of a content (by its digest) depends on: the content, its format, its file name, the
    folder names the analysis reads and the context key. Files with the same identity get the same findings
    (each under its own path), so the engine analyses one and copies the result to the others, and the cache
    stores results under it.

    The analysis reads a file's path only through its format, its name and FOLDER_WORDS: whoever makes
    findings depend on more of the path, or on other files, must put that into the context key."""
    return f"{digest}:{source.format}:{file_name(source)}:{folder_words(source.display)}:{context}"


def file_name(source: SourceFile) -> str:
    return source.fs_path.replace(os.sep, "/").rsplit("/", 1)[-1]


def release(result: FileResult) -> None:
    """Drop the parsed document of a result whose findings are all a run keeps (thousands of trees would not
    fit in memory), breaking the cycles of what rules built on it, so that it is freed now rather than walked
    by the cyclic garbage collector (a tenth of a run's time over a large repository)."""
    document = result.document
    result.document = None
    if document is None:
        return
    # The collector is held off meanwhile: an allocation here would start a collection that walks the whole
    # tree (the analysis allocated it with the collector off), just before it is freed anyway.
    collecting = gc.isenabled()
    gc.disable()
    try:
        model = document.__dict__.get("_script_model")
        if model is not None:
            model.release()
        del document, model
    finally:
        if collecting:
            gc.enable()


def relocate(result: FileResult, display: str) -> FileResult:
    """The result of one analysis as it reads for another path that holds the same content."""
    if result.display == display:
        return result
    findings = [f._replace(path=display) if f.path == result.display else f for f in result.findings]
    return FileResult(display, findings, internal_error=result.internal_error, skipped=result.skipped,
                      unread=result.unread)


def check_source(source: SourceFile, options: EngineOptions, data: bytes | None = None) -> FileResult:
    if data is None:
        read = read_source(source, options.limits)
        if isinstance(read, Finding):
            return FileResult(source.display, [read])
        data = read
    if options.prefilter and not might_hold_findings(data, source.format):
        return FileResult(source.display, [], skipped=True)
    return check_bytes(source.display, data, source.format, options)


# What the analysis of one file costs in memory, estimated from its bytes (see max-memory above). For Python:
# bytes per occurrence of these delimiters, each of which starts or separates roughly one tree node.
_PYTHON_NODE_MARKS = (b",", b"(", b"[", b"{", b".", b"=", b":", b"\n", b"+", b"-", b"*")
_PYTHON_BYTES_PER_MARK = 1_300  # the most measured; most real code needs half of it
_CONFIG_BYTES_PER_BYTE = 40
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
            return FileResult(display, [_engine_finding(
                LIMIT_EXCEEDED, display,
                f"analysing this {len(data):,}-byte file would take about {needed / 1e6:,.0f} MB of memory, over "
                f"the {budget / 1e6:,.0f} MB limit (max-memory); not checked",
            )])
    guard = _Guard(options.limits)
    try:
        try:
            guard.enter()
            return _check_bytes(display, data, fmt, options)
        finally:
            guard.exit()
    except TimeLimitExceeded:
        while True:  # the timer may have fired inside exit(): finish restoring the process state
            try:
                guard.exit()
                break
            except TimeLimitExceeded:
                continue
        seconds = options.limits.max_parse_time
        return FileResult(
            display,
            [_engine_finding(
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
        return FileResult(display, [_engine_finding(rule, display, exc.message, exc.line, exc.column)])
    except LimitError as exc:
        return FileResult(display, [_engine_finding(LIMIT_EXCEEDED, display, f"{exc}; not checked")])
    except RecursionError:
        return FileResult(
            display, [_engine_finding(LIMIT_EXCEEDED, display, "nesting too deep to analyse; not checked")]
        )
    except Exception as exc:  # a bug in a loader must not stop the run
        if isinstance(exc, ValueError) and _DIGITS_LIMIT in str(exc):
            return _digits_limit(display)
        if ran_out_of_memory(exc):  # a memory limit on the process, not a bug
            return FileResult(display, [_engine_finding(
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
        document.__dict__[LAUNCH_LINES] = launch_lines_of  # asked only when a rule judges an option's default
    return run_rules(document, options)


LAUNCH_LINES = "_launch_lines"  # values.launched reads the script's launch lines through it


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
    return FileResult(display, [_engine_finding(
        LIMIT_EXCEEDED, display, "holds a number of more than 4,300 digits, which Python cannot read as an "
        "integer; not checked")])


def run_rules(document: Document, options: EngineOptions) -> FileResult:
    findings: list[Finding] = []
    internal = False
    too_deep: list[str] = []
    out_of_memory: list[str] = []
    scripted = document.format == "python" and needs_script_model(document.text)
    gpus = tuple(options.gpus)
    for rule in options.rules:
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
    # One finding each, not one per rule: the script rules share one model, so they fail together.
    if too_deep:
        findings.append(_engine_finding(
            LIMIT_EXCEEDED, document.path, f"nesting too deep to analyse; not checked by {_some(too_deep)}"
        ))
    if out_of_memory:
        findings.append(_engine_finding(
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
            findings.append(_engine_finding(LIMIT_EXCEEDED, document.path, (
                f"ran out of memory {_MEMORY_LIMIT} while reading its suppression comments; its findings are "
                "shown without them")))
    readers = document.__dict__.get("reader_related")
    if readers:  # a config value a script hands to a framework: the call that reads it, beside the finding
        findings = [f._replace(related=(*f.related, readers[f.span])) if f.span in readers else f
                    for f in findings]
    remap = document.__dict__.get("remap_findings")
    if remap is not None:  # a notebook: lines of the joined cells become lines of each cell
        findings = remap(findings)
    return FileResult(document.path, findings, document=document, internal_error=internal,
                      unread=_unread(document))


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _unread(document: Document) -> bool:
    """A config whose precision-looking keys no framework claimed: no framework rule looked at it, and the
    summary says so (an "All checks passed!" there would claim more than was checked)."""
    if document.settings or document.format not in ("toml", "yaml", "json"):
        return False
    from precisionlint.frameworks.unclaimed import unclaimed_keys

    return bool(unclaimed_keys(document))


_MEMORY_LIMIT = "(a memory limit on the process, such as `ulimit -v`?)"


def _internal(path: str, where: str, exc: BaseException) -> Finding:
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    location = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
    detail = " ".join(str(exc).split())
    if len(detail) > 200:
        detail = detail[:197] + "..."
    return _engine_finding(
        INTERNAL_ERROR,
        path,
        f"internal error in {where}: {type(exc).__name__}: {detail}{location}. "
        "This is a bug in precisionlint; please report it with this file.",
    )


# ---------------------------------------------------------------------------------------------------------------
# Guards around one file's analysis: a deeper recursion limit and a CPU-time limit.
# ---------------------------------------------------------------------------------------------------------------


class TimeLimitExceeded(BaseException):
    """One file took more than max-parse-time CPU seconds. A BaseException so that the loaders' and rules'
    `except Exception` cannot swallow it."""


# Python allows 1,000 frames by default. Parsers and the script model recurse once or twice per nesting level,
# so a 300-term `a + b + ...` or a long elif chain would fail at that limit. Python 3.11 runs Python-to-Python
# calls without growing the C stack, and C-level recursion (the parsers) has its own guards, so a deeper limit
# is safe on the main thread's stack (8 MB on Linux and macOS): measured, 8,000 frames of the worst case (every
# frame through C) use under 3 MB. Other threads may have small stacks, so they keep the default.
DEEP_RECURSION_LIMIT = 8000
_TIMER_STATE = {"armed": False}


def _on_timer(signum: int, frame: object) -> None:
    if _TIMER_STATE["armed"]:
        raise TimeLimitExceeded()


class _Guard:
    __slots__ = ("limits", "old_limit", "old_handler", "timed", "collecting")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.old_limit = 0
        self.old_handler: Any = None
        self.timed = False
        self.collecting = False

    def enter(self) -> None:
        threading = sys.modules.get("threading")  # not imported: no thread was started through it
        main = threading is None or threading.current_thread() is threading.main_thread()
        self.old_limit = sys.getrecursionlimit()
        if main and self.old_limit < DEEP_RECURSION_LIMIT:
            sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        seconds = self.limits.max_parse_time
        if main and seconds and seconds > 0:
            self._arm(seconds)
        # A parse allocates millions of objects that live until the file is done; the cyclic collector would
        # scan them again and again (half the time of a large file). They hold almost no cycles, so collect
        # once, after the file, instead.
        self.collecting = gc.isenabled()
        if self.collecting:
            gc.disable()

    def _arm(self, seconds: float) -> None:
        # A CPU-time timer (ITIMER_VIRTUAL, SIGVTALRM): unaffected by a loaded machine or a suspended laptop,
        # and a signal that nothing else in a linter's process uses. Only where it is free: POSIX, the main
        # thread, and no handler installed by someone else (a host program embedding the engine).
        import signal

        if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGVTALRM"):
            return
        if _TIMER_STATE["armed"]:
            return  # inside an outer guard (a file being fixed): its timer covers this too
        current = signal.getsignal(signal.SIGVTALRM)
        if current not in (signal.SIG_DFL, None, _on_timer):
            return
        self.old_handler = signal.signal(signal.SIGVTALRM, _on_timer)
        self.timed = True
        _TIMER_STATE["armed"] = True
        try:
            # Fire again every 50 ms after the first expiry, in case a library's bare `except:` ate the first.
            signal.setitimer(signal.ITIMER_VIRTUAL, seconds, 0.05)
        except (OverflowError, ValueError, OSError):  # an absurd limit: run without one
            _TIMER_STATE["armed"] = False

    def exit(self) -> None:
        """Undo enter(); idempotent, so that it can be finished if the timer interrupts it."""
        if self.timed:
            _TIMER_STATE["armed"] = False  # first: from here on the handler does nothing
            import signal

            signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
            signal.signal(signal.SIGVTALRM, self.old_handler if self.old_handler is not None else signal.SIG_DFL)
            self.timed = False
        if self.collecting:
            gc.enable()
            self.collecting = False
        if self.old_limit and sys.getrecursionlimit() != self.old_limit:
            sys.setrecursionlimit(self.old_limit)


def check_sources(
    sources: Iterable[SourceFile],
    options: EngineOptions,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    cache: Any = None,
) -> list[FileResult]:
    """Check every source; results come back in the order of `sources`, whatever `jobs` is.

    `progress(n)` is called as files are done (n files at a time), from the calling thread. `cache`, a
    precisionlint.run.cache.ResultCache, gives results of unchanged content and receives the new ones (the caller
    saves it)."""
    from precisionlint.run.parallel import check_all

    return check_all(list(sources), options, jobs, progress, cache)
