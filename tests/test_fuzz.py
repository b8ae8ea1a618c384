"""Fuzzing every loader and the whole check pipeline with hypothesis.

Inputs: random bytes, random Unicode, and realistic seeds (a Lightning YAML, a [trainer_config] TOML, a
DeepSpeed JSON, a training loop, and every case file of the rule book) truncated, spliced, mutated with the
characters each format's grammar turns on, and given mixed line endings.

Properties: a loader raises only SourceError or LimitError; check_bytes never raises and never reports an
internal error (PL009); spans are inside the file; the result does not depend on the run; the prefilter never
skips a file that holds a finding. Bounded: a few seconds in all (max_examples, no deadline). For a long
run before a release: PRECISIONLINT_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precisionlint.checks import all_rules
from precisionlint.engine.check import check_bytes
from precisionlint.engine.options import EngineOptions
from precisionlint.engine.prefilter import might_hold_findings
from precisionlint.frameworks.documents import load_document
from precisionlint.hardware.targets import resolve_targets
from precisionlint.sources import LimitError, Limits, SourceError, format_of
from precisionlint.sources.decoding import decode_source

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("toml", "yaml", "json", "python")

SEEDS: dict[str, list[bytes]] = {
    "yaml": [
        b"""# Lightning CLI config
seed_everything: 42
trainer:
  accelerator: gpu
  devices: 8
  strategy: ddp
  precision: 16-mixed   # precisionlint: ignore[legacy-precision-value]
  max_epochs: 10
  plugins:
    - &amp {precision: bf16-mixed}
    - *amp
model:
  class_path: my.Model
  init_args: {lr: 3.0e-4, betas: [0.9, 0.999]}
data: !!python/object/apply:os.system ["true"]
""",
        b"compute_environment: LOCAL_MACHINE\nmixed_precision: fp16\nnum_processes: 8\n---\nbf16: true\nfp16: true\n",
    ],
    "toml": [
        b"""[trainer_config]
precision = "16"            # legacy
max_epochs = 10
tf32_matmul_precision = 'high'
devices = [0, 1, 2, 3]

[trainer_config.amp]
enabled = true
loss_scale = 128.0

[[trainer_config.callbacks]]
name = "ckpt"
dtype = { name = "bfloat16", bits = 16 }
""",
    ],
    "json": [
        b"""{
  "train_batch_size": 256,
  "fp16": {"enabled": true, "loss_scale": 0, "initial_scale_power": 16},
  "bf16": {"enabled": "auto"},
  "amp": {"enabled": false, "opt_level": "O1"},
  "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
  "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "eps": 1e-8, "betas": [0.9, 0.95]}}
}
""",
    ],
    "python": [
        b"""import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from transformers import TrainingArguments
import lightning as L

torch.backends.cuda.matmul.allow_tf32 = True
args = TrainingArguments(output_dir="out", fp16=True, bf16=True)
trainer = L.Trainer(precision=16)


def train(model, loader, optimizer, scaler=GradScaler()):
    model = model.half()
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.binary_cross_entropy(model(x).sigmoid(), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
    opt = torch.optim.Adam(model.parameters(), eps=1e-8)
    with autocast():
        return model(x).float()
""",
    ],
}
for _path in sorted(ROOT.glob("rules/*/*")):
    _fmt = format_of(_path.name.removesuffix(".fixed"))
    if _fmt in SEEDS and _path.is_file():  # the formats fuzzed here (not notebooks)
        SEEDS[_fmt].append(_path.read_bytes())

# Characters each grammar turns on, and troublemakers for decoders and position arithmetic.
TOKENS = [
    b"{", b"}", b"[", b"]", b"(", b")", b":", b",", b"=", b"'", b'"', b'"""', b"#", b"\\", b"-", b"- ", b"? ",
    b"&a ", b"*a", b"<<: *a\n", b"!!python/object/apply:os.system", b"!!binary", b"|\n", b">-\n", b"---\n",
    b"...\n", b"%YAML 1.1\n", b"[[x]]\n", b"a.b.c = 1\n", b"\t", b" ", b"    ", b"\n", b"\r\n", b"\r", b"\x00",
    b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\xef\xbb\xbf", "é".encode(), "𝛼".encode(), b"\\u0000", b"\\ud800",
    b"1e999", b"NaN", b"-Infinity", b"0x1F", b"1979-05-27T07:32:00Z", b"true", b"null", b"~", b"precision",
    b"fp16", b"bf16", b"16-mixed", b"bf16-mixed", b"autocast", b"GradScaler", b".half()", b"lambda: 0",
    b"async def f():\n    await x\n", b"with torch.autocast('cuda'):\n", b"scaler.scale(loss).backward()\n",
]

RULES = all_rules()
OPTIONS = EngineOptions(rules=RULES, gpus=resolve_targets(["V100", "A100", "H100"]))
UNFILTERED = EngineOptions(rules=RULES, gpus=OPTIONS.gpus, prefilter=False)
_SCALE = int(os.environ.get("PRECISIONLINT_FUZZ_EXAMPLES", "0"))


def budget(examples: int) -> settings:
    return settings(max_examples=_SCALE or examples, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    fmt = draw(st.sampled_from(FORMATS))
    data = bytearray(draw(st.sampled_from(SEEDS[fmt])))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.integers(0, 6))
        pos = draw(st.integers(0, len(data)))
        if op == 0:  # truncate
            del data[pos:]
        elif op == 1:  # delete a run
            del data[pos : pos + draw(st.integers(1, 12))]
        elif op == 2:  # insert a grammar token
            data[pos:pos] = draw(st.sampled_from(TOKENS))
        elif op == 3 and data:  # flip a byte
            data[min(pos, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == 4:  # duplicate a slice (repeated keys, unbalanced nesting)
            start = draw(st.integers(0, len(data)))
            data[pos:pos] = data[start : start + draw(st.integers(1, 40))] * draw(st.integers(1, 3))
        elif op == 5:  # mixed line endings
            ending = draw(st.sampled_from([b"\r\n", b"\r", b"\n\n", b"\n\t"]))
            data = bytearray(bytes(data).replace(b"\n", ending, draw(st.integers(1, 4))))
        else:  # random Unicode
            data[pos:pos] = draw(st.text(max_size=8)).encode("utf-8", "surrogatepass")
    return fmt, bytes(data)


def assert_sane(fmt: str, data: bytes, options: EngineOptions = OPTIONS) -> None:
    result = check_bytes(f"fuzz.{fmt}", data, fmt, options)  # type: ignore[arg-type]
    internal = [f.message for f in result.findings if f.code == "PL009"]
    assert not internal, internal
    assert not result.internal_error
    lines = data.count(b"\n") + data.count(b"\r") + 1
    for finding in result.findings:
        assert 1 <= finding.span.line <= lines + 1, finding
        assert finding.span.column >= 1, finding
        assert "\n" not in finding.message, finding
    if result.document is not None and result.findings:
        # The same bytes give the same findings: nothing depends on state left by an earlier file.
        again = check_bytes(f"fuzz.{fmt}", data, fmt, options)  # type: ignore[arg-type]
        assert [f.to_json() for f in again.findings] == [f.to_json() for f in result.findings]


def assert_loader_contract(fmt: str, data: bytes) -> None:
    try:
        text = decode_source(data, "fuzz")
    except SourceError:
        return
    try:
        document = load_document("fuzz", text, fmt, Limits())  # type: ignore[arg-type]
    except (SourceError, LimitError):
        return
    assert document.text == text
    for setting in document.settings:
        start, end = setting.value_offsets
        assert 0 <= start <= end <= len(text), setting


@budget(300)
@given(mutated())
def test_mutated_seeds_through_the_whole_pipeline(case: tuple[str, bytes]) -> None:
    assert_sane(*case)


@budget(300)
@given(mutated())
def test_mutated_seeds_through_each_loader(case: tuple[str, bytes]) -> None:
    assert_loader_contract(*case)


@budget(200)
@given(st.sampled_from(FORMATS), st.binary(max_size=400))
def test_random_bytes(fmt: str, data: bytes) -> None:
    assert_sane(fmt, data, UNFILTERED)
    assert_loader_contract(fmt, data)


@budget(200)
@given(st.sampled_from(FORMATS), st.text(max_size=300))
def test_random_unicode(fmt: str, text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    assert_sane(fmt, data, UNFILTERED)
    assert_loader_contract(fmt, data)


@budget(200)
@given(mutated())
def test_prefilter_never_hides_a_finding(case: tuple[str, bytes]) -> None:
    fmt, data = case
    if might_hold_findings(data, fmt):  # type: ignore[arg-type]
        return
    findings = check_bytes(f"fuzz.{fmt}", data, fmt, UNFILTERED).findings  # type: ignore[arg-type]
    assert [f for f in findings if not f.code.startswith("PL00")] == []


@budget(40)
@given(
    st.sampled_from(FORMATS),
    st.integers(1, 3000),
    st.sampled_from(["[", "{", "(", "- ", "  ", "a: ", "x = {y = ", '{"k": ', "not ", "-", "f(", "a."]),
)
def test_deep_and_repetitive_structures(fmt: str, depth: int, opener: str) -> None:
    closer = {"[": "]", "{": "}", "(": ")", "x = {y = ": "}", '{"k": ': "}", "f(": ")"}.get(opener, "")
    body = opener * depth + "1" + closer * depth
    head = {"python": "import torch\nx = torch.half(", "toml": "precision = 1\nz = ", "json": '{"fp16": ',
            "yaml": "precision: 16\nz: "}[fmt]
    tail = {"python": ")\n", "toml": "\n", "json": "}\n", "yaml": "\n"}[fmt]
    assert_sane(fmt, (head + body + tail).encode())


def _reference_whole_line_range(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The straightforward version (slices and scans) that tree.whole_line_range must agree with."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip():
        return None
    line_end = text.find("\n", end)
    stripped = text[end : len(text) if line_end == -1 else line_end].strip()
    if stripped and not stripped.startswith("#") and stripped != ",":
        return None
    return line_start, len(text) if line_end == -1 else line_end + 1


@budget(300)
@given(st.text(alphabet=" \t\n\r,#ab\u2028\x85", max_size=40), st.data())
def test_whole_line_range_matches_its_reference(text: str, data: st.DataObject) -> None:
    from precisionlint.sources.tree import whole_line_range

    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    expected = _reference_whole_line_range(text, start, end)
    assert whole_line_range(text, start, end) == expected
    assert whole_line_range(text, start, end, starts) == expected


def assert_fix_sane(fmt: str, data: bytes) -> None:
    """The --fix path on a mutated file: no crash, no internal error, and when it changes the text, the new
    text still parses and the bytes it would write read back as exactly that text (no corruption)."""
    from precisionlint.fix.apply import check_text, fix_text
    from precisionlint.fix.write import WriteRefused, encode_fixed

    WRITER_COUNTS["fix"][0] += 1
    try:
        text = decode_source(data, f"fuzz.{fmt}", fmt)  # type: ignore[arg-type]
    except SourceError:
        return
    result = fix_text(f"fuzz.{fmt}", text, fmt, OPTIONS, unsafe=True)  # type: ignore[arg-type]
    assert not result.internal_error, [f.message for f in result.findings if f.code == "PL009"]
    assert_safe_fixes_apply(fmt, text)
    if result.new_text == text:
        return
    assert result.fixed > 0
    after = check_text(f"fuzz.{fmt}", result.new_text, fmt, OPTIONS)  # type: ignore[arg-type]
    # No tree only where no rule reads what is left (a script whose last precision word was a directive)
    assert after.document is not None or not after.findings, [f.message for f in after.findings]
    assert not [f for f in after.findings if f.code in ("PL001", "PL009")]
    try:
        written = encode_fixed(result.new_text, data.startswith(b"\xef\xbb\xbf"), fmt)
    except WriteRefused:  # refused before writing: nothing is corrupted (it must stay rare)
        return
    assert decode_source(written, f"fuzz.{fmt}", fmt) == result.new_text  # type: ignore[arg-type]
    WRITER_COUNTS["fix"][1] += 1


def assert_safe_fixes_apply(fmt: str, text: str) -> None:
    """A fix that the check offers as safe (as the JSON output shows it) is one that --fix, without
    --unsafe-fixes, applies: never refused by its verification, never reported over a limit after it.
    Known exception: a YAML file that libyaml reads (the check's fast path) and ruamel, the round-trip library
    the fix is verified and written with, does not (a tab before a comment): every fix there is refused."""
    from precisionlint.fix.apply import check_text, fix_text
    from precisionlint.fix.verify import _Unverifiable, parse_config

    checked = check_text(f"fuzz.{fmt}", text, fmt, OPTIONS)  # type: ignore[arg-type]
    if not any(f.fix is not None and f.fix.applicability == "safe" for f in checked.findings):
        return
    result = fix_text(f"fuzz.{fmt}", text, fmt, OPTIONS, unsafe=False)  # type: ignore[arg-type]
    refused = [f.message for f in result.findings
               if "(fix not applied: " in f.message or f.code == "PL003" and f.message.endswith("; not fixed")]
    if refused and fmt == "yaml":
        try:
            parse_config(fmt, text)
        except _Unverifiable:
            return
    assert not refused, refused


def _fixable_seeds() -> dict[str, list[bytes]]:
    """The seeds (rule-book cases included) that `--fix --unsafe-fixes` changes: light mutations of these keep
    fixable findings, so the fuzzing reaches planning, verification and encoding, not only the parsers."""
    from precisionlint.fix.apply import fix_text

    found: dict[str, list[bytes]] = {fmt: [] for fmt in FORMATS}
    for fmt, seeds in SEEDS.items():
        for seed in seeds:
            try:
                text = decode_source(seed, f"seed.{fmt}", fmt)  # type: ignore[arg-type]
            except SourceError:
                continue
            if fix_text(f"seed.{fmt}", text, fmt, OPTIONS, unsafe=True).fixed:  # type: ignore[arg-type]
                found[fmt].append(seed)
    return {fmt: seeds for fmt, seeds in found.items() if seeds}


_FIXABLE: dict[str, list[bytes]] = {}
LIGHT_TOKENS = [b" ", b"\t", b"\n", b"\r\n", b"\r", b"# c\n", b"\xef\xbb\xbf", "é".encode(), b"&a ", b"*a", b"'",
                b'"', b",", b"- ", b"{", b"}", b"---\n", b"16", b"bf16", b"precision: 16\n", b"precision = 16\n"]


@st.composite
def lightly_mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A fixable seed with 0-3 small changes: a token inserted, a byte run deleted, line endings changed, a
    BOM or two in front."""
    if not _FIXABLE:
        _FIXABLE.update(_fixable_seeds())
    fmt = draw(st.sampled_from(sorted(_FIXABLE)))
    data = bytearray(draw(st.sampled_from(_FIXABLE[fmt])))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.integers(0, 3))
        pos = draw(st.integers(0, len(data)))
        if op == 0:
            data[pos:pos] = draw(st.sampled_from(LIGHT_TOKENS))
        elif op == 1:
            del data[pos : pos + draw(st.integers(1, 4))]
        elif op == 2:
            ending = draw(st.sampled_from([b"\r\n", b"\r"]))
            data = bytearray(bytes(data).replace(b"\n", ending))
        else:
            data[0:0] = b"\xef\xbb\xbf" * draw(st.integers(1, 2))
    return fmt, bytes(data)


# Fixed examples in CI (derandomized); PRECISIONLINT_FUZZ_EXAMPLES=N runs N random ones.
@settings(max_examples=_SCALE or 150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not _SCALE)
@given(st.one_of(lightly_mutated(), mutated()))
def test_mutated_seeds_through_the_fix_path(case: tuple[str, bytes]) -> None:
    assert_fix_sane(*case)


# --- the other writers: --add-noqa and advise --write, through the real writer on real files --------------------

# How many inputs each writer's fuzzing saw, how many files it changed, and how many it broke (must stay 0).
# PRECISIONLINT_FUZZ_EXAMPLES=N with -s prints them (the counts in the closing notes come from there).
WRITER_COUNTS: dict[str, list[int]] = {"fix": [0, 0, 0], "add-noqa": [0, 0, 0], "advise --write": [0, 0, 0]}


def _count(writer: str, changed: bool, broken: bool = False) -> None:
    counts = WRITER_COUNTS[writer]
    counts[0] += 1
    counts[1] += changed
    counts[2] += broken


def teardown_module() -> None:
    if _SCALE:
        for writer, (inputs, changed, broken) in WRITER_COUNTS.items():
            print(f"\n{writer}: {inputs} inputs, {changed} files changed, {broken} broken")


def assert_add_noqa_sane(fmt: str, data: bytes, folder: Path) -> None:
    """--add-noqa on a mutated file, written by the real writer: the file still means what it meant (same data,
    same AST), its bytes read back as the text the directives were added to, in the file's own encoding."""
    from precisionlint.core.model import SourceFile
    from precisionlint.fix.apply import check_text
    from precisionlint.fix.noqa import _meaning, add_noqa

    if fmt not in ("toml", "yaml", "python"):
        return
    try:
        text = decode_source(data, f"fuzz.{fmt}", fmt)  # type: ignore[arg-type]
    except SourceError:
        return
    path = folder / ("fuzz.py" if fmt == "python" else f"fuzz.{fmt}")
    path.write_bytes(data)
    source = SourceFile(str(path), str(path), fmt)  # type: ignore[arg-type]
    findings = check_text(str(path), text, fmt, OPTIONS).findings  # type: ignore[arg-type]
    added, problems = add_noqa(findings, [(None, [source])])
    after = path.read_bytes()
    changed = after != data
    broken = False
    if changed:
        new_text = decode_source(after, str(path), fmt)  # type: ignore[arg-type]
        # Same meaning, same BOM, and the same line breaks (a comment is added to a line, never a line or a
        # break: LF, CRLF and lone CR counted alike)
        broken = _meaning(new_text, fmt) != _meaning(text, fmt) or after.startswith(b"\xef\xbb\xbf") != data.startswith(
            b"\xef\xbb\xbf") or any(new_text.count(end) != text.count(end) for end in ("\r\n", "\r", "\n"))
    _count("add-noqa", changed, broken)
    assert not broken, (data, after)
    assert added or not changed


# A script in latin-1 under its coding declaration, with findings on lines around its non-ASCII text.
LATIN1_SCRIPT = (b"# -*- coding: latin-1 -*-\nimport torch\nname = 'Jos\xe9'\nmodel = torch.nn.Linear(2, 2).half()\n"
                 b"opt = torch.optim.Adam(model.parameters())\nfor x in range(3):\n"
                 b"    with torch.autocast('cuda', dtype=torch.float16):  # \xe9t\xe9\n        loss = model(x)\n"
                 b"    loss.backward()\n    opt.step()\n")


@st.composite
def latin1_mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    data = bytearray(LATIN1_SCRIPT)
    for _ in range(draw(st.integers(0, 2))):
        pos = draw(st.integers(len(b"# -*- coding: latin-1 -*-\n"), len(data)))
        data[pos:pos] = draw(st.sampled_from([b"\xe9", b" ", b"\r\n", b"# \xe0\n", b"\n"]))
    return "python", bytes(data)


@settings(max_examples=_SCALE or 60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not _SCALE)
@given(st.one_of(lightly_mutated(), mutated(), latin1_mutated()))
def test_mutated_seeds_through_add_noqa(case: tuple[str, bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        assert_add_noqa_sane(case[0], case[1], Path(folder))


ADVICE = [{"precision": "bf16-mixed"}, {"precision": "16-mixed", "tf32": True}, {"precision": None},
          {"tf32_matmul_precision": "high"}, {"bf16": True, "fp16": False}]


def assert_advise_write_sane(fmt: str, data: bytes, changes: dict[str, object], folder: Path) -> None:
    """advise --write's change, written by the real writer: refused with ValueError, or every requested value
    reads back from the written file and nothing else in it changed (the fixer's verification)."""
    from precisionlint.fix.setting_changes import plan_setting_changes
    from precisionlint.fix.write import WriteRefused, rewrite

    if fmt not in ("toml", "yaml", "json"):
        return
    path = folder / f"config.{fmt}"
    path.write_bytes(data)
    try:
        old, new = plan_setting_changes(str(path), changes, data)
    except ValueError:
        _count("advise --write", False)
        return
    if new != old:
        try:
            rewrite(str(path), data, new, fmt)
        except WriteRefused:
            pass
    after = path.read_bytes()
    broken = False
    if after != data:
        text = decode_source(after, str(path), fmt)  # type: ignore[arg-type]
        document = load_document(str(path), text, fmt)  # type: ignore[arg-type]
        for name, value in changes.items():
            values = [s.value for s in document.settings_named(name)]
            if value is None:
                broken = broken or bool(values)
            elif values and any(v != value for v in values):
                broken = True
        broken = broken or after.startswith(b"\xef\xbb\xbf") != data.startswith(b"\xef\xbb\xbf")
    _count("advise --write", after != data, broken)
    assert not broken, (data, changes, after)


@settings(max_examples=_SCALE or 60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not _SCALE)
@given(st.one_of(lightly_mutated(), mutated()), st.sampled_from(ADVICE))
def test_mutated_seeds_through_advise_write(case: tuple[str, bytes], changes: dict[str, object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        assert_advise_write_sane(case[0], case[1], changes, Path(folder))
