"""The engine builds the training-step model only for Python files whose text names something it can report on
(engine.gate.SCRIPT_MODEL_WORDS). Whoever adds a script rule that can fire without one of those words must add it."""

from __future__ import annotations

import sys
from pathlib import Path

from precisionlint.checks import CheckContext, all_rules
from precisionlint.engine.gate import SCRIPT_MODEL_WORDS, needs_script_model
from precisionlint.frameworks.documents import load_document
from precisionlint.hardware.targets import resolve_targets
from precisionlint.script.build import build_script_model
from precisionlint.script.names import TORCH_OPTIMIZERS
from precisionlint.sources import SourceError
from precisionlint.sources.decoding import decode_source

sys.path.insert(0, str(Path(__file__).parent))
from rule_cases import load_cases  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRIPT_RULES = [rule for rule in all_rules() if rule.target == "script"]


def test_every_bad_case_of_a_script_rule_gets_the_model() -> None:
    names = {rule.name for rule in SCRIPT_RULES}
    checked = 0
    for case in load_cases():
        if case.rule_name not in names:
            continue
        for path in case.bad:
            if path.suffix == ".py" and path.exists():
                checked += 1
                assert needs_script_model(path.read_text(encoding="utf-8")), f"{path}: no model would be built"
    assert checked >= len(names)


def test_files_without_the_words_yield_no_script_finding() -> None:
    """Run every script rule on every Python case and example that the gate leaves without a model: none may
    report anything (so the gate never hides a finding)."""
    gpus = resolve_targets(["V100", "A100"])
    gated = 0
    for path in sorted(ROOT.glob("rules/*/*.py")) + sorted(ROOT.glob("examples/**/*.py")):
        if not path.is_file():
            continue
        try:
            text = decode_source(path.read_bytes(), path.name)
            document = load_document(path.name, text, "python")
        except SourceError:
            continue
        if needs_script_model(text):
            continue
        gated += 1
        for rule in SCRIPT_RULES:
            assert list(rule.func(CheckContext(document, rule, gpus))) == [], (path, rule.name)
    assert gated > 0  # the cases include files that pass the prefilter on "precision" or "fp16" alone


def test_gate_words_are_text() -> None:
    assert all(isinstance(word, str) and word for word in SCRIPT_MODEL_WORDS)
    # The parser reads a fullwidth `ａｕｔｏｃａｓｔ` as `autocast`; a typographic quote in a comment is no word.
    assert needs_script_model("import torch\nwith torch.ａｕｔｏｃａｓｔ('cuda'):\n    y = m(x)\n")
    assert needs_script_model("ｍ = Net().half()\nｏ = torch.optim.ＡｄａｍＷ(ｍ.parameters())\n")
    assert not needs_script_model("# the model’s precision…\nｘ = 1\n")


HALF_CAST_ONLY = {
    # inference in float16: a cast, no optimizer
    "inference.py": "import torch\nmodel = Net().half().cuda()\nwith torch.no_grad():\n    out = model(x.half())\n",
    # a dtype table and a cast helper, as model code holds them
    "dtypes.py": "import torch\nDTYPES = {'fp16': torch.float16, 'bf16': torch.bfloat16}\n\n"
                 "def cast(t, name):\n    return t.to(DTYPES[name])\n",
    # a checkpoint converted to bfloat16
    "convert.py": "import torch\nstate = torch.load('w.pt')\nstate = {k: v.bfloat16() for k, v in state.items()}\n"
                  "torch.save(state, 'w16.pt')\n",
    # a model loaded in float16 for evaluation: from_pretrained, but no fp16 training flag
    "evaluate.py": "import torch\nfrom transformers import AutoModel\n"
                   "model = AutoModel.from_pretrained('m', torch_dtype=torch.float16)\nmodel.eval()\n",
}


def test_a_half_cast_without_an_optimizer_or_fp16_trainer_gets_no_model() -> None:
    gpus = resolve_targets(["V100", "A100"])
    for name, text in HALF_CAST_ONLY.items():
        assert not needs_script_model(text), name
        # and the model, built anyway, gives no script rule anything to report
        document = load_document(name, text, "python")
        for rule in SCRIPT_RULES:
            assert list(rule.func(CheckContext(document, rule, gpus))) == [], (name, rule.name)


def test_a_name_that_only_says_scaler_gets_no_model() -> None:
    """The model knows a GradScaler only by its construction, `x.scale(loss)` or `x.unscale_(optimizer)`: a
    framework's `scaler` property, or a comment about one, holds nothing a script rule could report on."""
    gpus = resolve_targets(["V100", "A100"])
    text = ("class Trainer:\n    @property\n    def scaler(self):\n"
            "        return getattr(self.precision_plugin, 'scaler', None)\n\n"
            "    def restore(self, state):\n        self.precision_plugin.load_state_dict(state)  # the scaler's too\n"
            "        self.scaler.step(self.optimizer)\n        self.scaler.update()\n")
    text += "\n    def clip(self, optimizer):\n        self.precision.unscale_gradients(optimizer)\n"  # another method
    assert not needs_script_model(text)
    document = load_document("trainer.py", text, "python")
    assert build_script_model(document).scalers == {}
    for rule in SCRIPT_RULES:
        assert list(rule.func(CheckContext(document, rule, gpus))) == [], rule.name
    # a scaler the file unscales is one, whatever its name
    unscaled = text + "\n\ndef clip(s, model, optimizer):\n    s.unscale_(optimizer)\n    s.step(optimizer)\n"
    assert needs_script_model(unscaled)
    assert build_script_model(load_document("trainer.py", unscaled, "python")).scalers


def test_a_half_cast_beside_no_optimizer_class_gets_no_model() -> None:
    """A framework's own code says "optimizer" everywhere (type hints, hooks) beside its dtype handling: the model
    is built only where a class of torch.optim is named, as the model records only their constructions."""
    text = ("import torch\n\ndef on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:\n"
            "    self.model.to(torch.float16)\n")
    assert not needs_script_model(text)
    document = load_document("hooks.py", text, "python")
    assert build_script_model(document).optimizers == []
    for name in sorted(TORCH_OPTIMIZERS):
        built = text + f"opt = torch.optim.{name}(self.model.parameters())\n"
        assert needs_script_model(built), name
        assert [o.cls for o in build_script_model(load_document("train.py", built, "python")).optimizers] == [name]


def test_a_half_cast_with_an_optimizer_or_an_fp16_trainer_gets_the_model() -> None:
    assert needs_script_model("import torch\nmodel = Net().half()\nopt = torch.optim.SGD(model.parameters(), 0.1)\n")
    assert needs_script_model(
        "from torch import optim\nm = Net().to(torch.bfloat16)\no = optim.AdamW(m.parameters())\n"
    )
    assert needs_script_model(
        "import torch\nfrom transformers import AutoModel, TrainingArguments\n"
        "m = AutoModel.from_pretrained('x', torch_dtype=torch.float16)\nargs = TrainingArguments('o', fp16=True)\n"
    )
    # each of these is a case of the rules the half-cast gate serves
    for rule_name in ("half-params-without-master-weights", "adam-eps-underflow-fp16", "scaler-with-half-params"):
        bad = [path for case in load_cases() if case.rule_name == rule_name
               for path in case.bad if path.suffix == ".py"]
        assert bad and all(needs_script_model(path.read_text(encoding="utf-8")) for path in bad), rule_name


def test_the_engine_asks_about_a_file_s_words_once(monkeypatch) -> None:
    """Whether a Python file is read, then whether its model is built: the second question takes the first's
    answer for the same text (each word is a scan of the whole file), and a text asked about afresh is scanned."""
    from precisionlint.engine import gate

    asked: list[str] = []
    real = gate.word_probe
    monkeypatch.setattr(gate, "word_probe", lambda text: asked.append(text) or real(text))
    text = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    assert gate.python_tree_is_read(text) and needs_script_model(text)
    plain = "print('hello')\n"
    assert not needs_script_model(plain) and not needs_script_model(plain)
    assert asked == [text, plain]  # each text's second question is answered without a scan
    assert needs_script_model(text) and asked == [text, plain, text]  # a text asked about afresh is scanned
