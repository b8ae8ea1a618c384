"""Severities and messages of the script rules where the case folders cannot show them: a value the linter
cannot resolve lowers the severity instead of raising a false alarm, and messages name what they found."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precisionlint.checks import find_rule
from precisionlint.core.model import Finding, Severity
from precisionlint.engine.check import check_bytes
from precisionlint.engine.options import EngineOptions


def run(rule: str, source: str) -> list[Finding]:
    found = find_rule(rule)
    assert found is not None
    text = textwrap.dedent(source)
    return check_bytes("train.py", text.encode(), "python", EngineOptions(rules=[found], prefilter=False)).findings


@pytest.mark.parametrize(
    "rule, source, severity",
    [
        # float16 on cuda for sure: error; device unknown: warning; enabled computed: warning
        ("PL201", "import torch\nwith torch.autocast('cuda'):\n    l = m(x)\nl.backward()\n", Severity.ERROR),
        ("PL201", "import torch\nwith torch.autocast(dev):\n    l = m(x)\nl.backward()\n", Severity.WARNING),
        (
            "PL201",
            "import torch\nwith torch.autocast('cuda', torch.float16, flag):\n    l = m(x)\nl.backward()\n",
            Severity.WARNING,
        ),
        # a scaler built here with enabled omitted: error; a parameter or a computed flag: warning
        (
            "PL205",
            "import torch\ns = torch.amp.GradScaler('cuda')\ns.scale(l).backward()\noptimizer.step()\n",
            Severity.ERROR,
        ),
        ("PL205", "def f(l, optimizer, s):\n    s.scale(l).backward()\n    optimizer.step()\n", Severity.WARNING),
        (
            "PL204",
            "import torch\ns = torch.amp.GradScaler('cuda', enabled=amp)\ns.scale(l).backward()\n"
            "torch.nn.utils.clip_grad_norm_(p, 1.0)\ns.step(o)\ns.update()\n",
            Severity.WARNING,
        ),
        # backward under an autocast whose enabled= is computed: info
        (
            "PL203",
            "import torch\nwith torch.autocast('cuda', enabled=amp):\n    m(x).sum().backward()\n",
            Severity.INFO,
        ),
        # BCE under autocast of unknown device: warning (CPU autocast allows it)
        (
            "PL212",
            "import torch\nwith torch.autocast(dev):\n    torch.nn.functional.binary_cross_entropy(p, y)\n",
            Severity.WARNING,
        ),
    ],
)
def test_unknown_values_lower_the_severity(rule: str, source: str, severity: Severity) -> None:
    (finding,) = run(rule, source)
    assert finding.severity == severity


def test_eps_that_rounds_up_is_informational() -> None:
    findings = run(
        "PL211",
        """
        import torch
        model = Net().half()
        a = torch.optim.Adam(model.parameters())
        b = torch.optim.Adam(model.parameters(), eps=4e-8)
        """,
    )
    assert [(f.span.line, f.severity) for f in findings] == [(4, Severity.ERROR), (5, Severity.INFO)]
    assert "default eps=1e-08 rounds to 0" in findings[0].message
    assert "cast on line 3" in findings[0].message


def test_messages_name_the_objects() -> None:
    (clip,) = run(
        "PL204",
        """
        import torch
        class T:
            def step(self, loss):
                self.amp_scaler.scale(loss).backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.amp_scaler.step(self.opt)
                self.amp_scaler.update()
        """,
    )
    assert "`self.amp_scaler.unscale_(self.opt)`" in clip.message
    assert clip.fix is not None and clip.fix.applicability == "unsafe"
    assert clip.fix.edits[0].replacement == "        self.amp_scaler.unscale_(self.opt)\n"


def test_unscale_fix_keeps_crlf_line_endings() -> None:
    source = "import torch\r\ns = torch.amp.GradScaler('cuda')\r\ns.scale(l).backward()\r\n"
    source += "torch.nn.utils.clip_grad_norm_(p, 1.0)\r\ns.step(o)\r\ns.update()\r\n"
    (clip,) = run("PL204", source)
    assert clip.fix is not None and clip.fix.edits[0].replacement == "s.unscale_(o)\r\n"


def test_no_fix_when_the_clip_shares_its_line() -> None:
    (clip,) = run(
        "PL204",
        """
        import torch
        s = torch.amp.GradScaler("cuda")
        s.scale(l).backward()
        if clip: torch.nn.utils.clip_grad_norm_(p, 1.0)
        s.step(o)
        s.update()
        """,
    )
    assert clip.fix is None


def test_deprecated_message_gives_the_replacement() -> None:
    (finding,) = run("PL207", "import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    assert 'torch.amp.autocast("cuda", ...)' in finding.message and "FutureWarning" in finding.notes[0]


def test_missing_scaler_advice_names_the_device_where_float16_runs() -> None:
    """nanoVLM's float16 arm runs only where the device is neither CUDA nor the CPU (MPS): the finding says when
    float16 is chosen and suggests a GradScaler on the autocast's own device, not "cuda"."""
    source = (Path(__file__).resolve().parent.parent / "rules" / "missing-grad-scaler" / "bad_device_arm.py")
    (finding,) = run("PL201", source.read_text())
    assert "float16 when `device.type in [\"cuda\", \"cpu\"]` is false" in finding.message
    assert "torch.amp.GradScaler(device.type, enabled=" in finding.described()
    assert '"cuda"' not in finding.described().split("the scaler: `scaler", 1)[1]
    (known,) = run("PL201", "import torch\nwith torch.autocast('cuda'):\n    loss = f()\nloss.backward()\n")
    assert 'torch.amp.GradScaler("cuda", enabled=' in known.described()


def test_deprecated_name_only_in_annotations_is_a_note() -> None:
    """mmagic imports torch.cuda.amp's GradScaler only to annotate a parameter: nothing is called, so nothing
    warns. A call of the same name keeps the warning."""
    annotated = (
        "from typing import Optional\n"
        "import torch\n"
        "from torch.cuda.amp.grad_scaler import GradScaler\n"
        "def step(loss, scaler: Optional[GradScaler] = None) -> None:\n"
        "    note: 'GradScaler | None' = scaler\n"
        "    lst: GradScaler = scaler\n"
    )
    (finding,) = run("PL207", annotated)
    assert finding.severity is Severity.INFO and "only in type annotations" in finding.described()
    (finding,) = run("PL207", annotated + "scaler = GradScaler()\n")
    assert finding.severity is Severity.WARNING and "annotations" not in finding.described()
    (finding,) = run("PL207", "import torch\ns = torch.cuda.amp.GradScaler()\n")
    assert finding.severity is Severity.WARNING
    # one import of two names: the one used only in an annotation does not make a note of the other's call
    both = ("from torch.cuda.amp import GradScaler, autocast\n"
            "class Step:\n    scaler: GradScaler\n    def run(self, *, lam: 'float' = 1.0, **kw: GradScaler) -> None:\n"
            "        with autocast():\n            pass\n")
    findings = run("PL207", both)
    assert findings and all(f.severity is Severity.WARNING for f in findings)
    (finding,) = [f for f in run("PL207", both.replace("with autocast():", "if True:")) if f.span.line == 1]
    assert finding.severity is Severity.INFO  # autocast is imported but never read: the rest only annotates


def test_only_the_annotations_that_may_name_a_deprecated_import_are_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a deprecated name is read only in annotations is decided from the annotations written on the
    lines of its reads: a file's other annotations (hundreds in a typed library) are not walked. The answers are
    the whole walk's (the note, and the warning once the name is also called)."""
    import ast

    import precisionlint.checks.deprecated_amp_api as rule

    walked: list[ast.AST] = []
    real_walk = rule.walk

    def counting_walk(node: ast.AST) -> list[ast.AST]:
        walked.append(node)
        return real_walk(node)

    monkeypatch.setattr(rule, "walk", counting_walk)
    monkeypatch.setattr(ast, "walk", counting_walk)
    typed = "".join(f"def helper_{i}(x: int, y: 'list[str]') -> dict:\n    return {{}}\n" for i in range(200))
    annotated = ("import torch\nfrom torch.cuda.amp.grad_scaler import GradScaler\n" + typed
                 + "def step(loss, scaler: GradScaler | None = None) -> None:\n    pass\n")
    (finding,) = run("PL207", annotated)
    assert finding.severity is Severity.INFO and "only in type annotations" in finding.described()
    assert len(walked) <= 3, len(walked)  # the one parameter's annotation (and the return's), not 600
    walked.clear()
    (finding,) = run("PL207", annotated + "scaler = GradScaler()\n")
    assert finding.severity is Severity.WARNING
    assert len(walked) <= 3, len(walked)


def test_qlora_notebook_with_a_processor_and_a_later_inference_load_is_information() -> None:
    # the model the Trainer trains is the 4-bit load before it; the processor and the float32 reload for inference
    # after training do not make the fp16 finding a warning (TRL's grpo_qwen3_vl notebook)
    source = """\
        import torch
        from transformers import AutoProcessor, BitsAndBytesConfig, Qwen3VLForConditionalGeneration
        from trl import GRPOConfig, GRPOTrainer
        model_name = "Qwen/Qwen3-VL-4B-Instruct"
        processor = AutoProcessor.from_pretrained(model_name, padding_side="left")
        model = Qwen3VLForConditionalGeneration.from_pretrained(
            model_name, dtype="float32", quantization_config=BitsAndBytesConfig(load_in_4bit=True))
        trainer = GRPOTrainer(model=model, args=GRPOConfig(output_dir="out", fp16=True), peft_config=peft_config)
        trainer.train()
        model = Qwen3VLForConditionalGeneration.from_pretrained(model_name, dtype="float32")
        """
    [finding] = run("fp16-on-bf16-checkpoint", source)
    assert finding.severity is Severity.INFO
    # without the quantization the same notebook is a warning
    unquantized = source.replace(", quantization_config=BitsAndBytesConfig(load_in_4bit=True)", "")
    [finding] = run("fp16-on-bf16-checkpoint", unquantized)
    assert finding.severity is Severity.WARNING
