"""Large files the training-step model must analyse whole: a 3,000-branch elif chain (nested 3,000 deep in the
AST), 3,000 functions, 3,000 module-level training steps. Time is measured in benchmarks/script_scaling.py; here
the point is that each is analysed (no "nesting too deep" / limit finding) and that findings deep inside are
still found."""

from __future__ import annotations

from precisionlint.checks import all_rules
from precisionlint.engine.check import check_bytes
from precisionlint.engine.options import EngineOptions

HEADER = (
    "import torch\n"
    "model = torch.nn.Linear(2, 2)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    'scaler = torch.amp.GradScaler("cuda")\n'
)


def codes(text: str) -> list[tuple[int, str]]:
    script_rules = [r for r in all_rules() if r.target in ("script", "engine")]
    result = check_bytes("big.py", text.encode(), "python", EngineOptions(rules=script_rules, prefilter=False))
    return sorted((f.span.line, f.code) for f in result.findings if f.code != "PL209")


def test_elif_chain_of_3000_branches_is_analysed() -> None:
    lines = [HEADER, "def step(x, kind):\n", "    if kind == 0:\n        y = 0\n"]
    lines += [f"    elif kind == {i}:\n        y = {i}\n" for i in range(1, 3000)]
    lines += [
        "    else:\n",
        '        with torch.autocast("cuda", dtype=torch.float16):\n',
        "            loss = model(x).mean()\n",
        "        scaler.scale(loss).backward()\n",
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
        "        scaler.step(optimizer)\n",
        "        scaler.update()\n",
    ]
    text = "".join(lines)
    clip_line = text.count("\n", 0, text.index("torch.nn.utils.clip_grad_norm_")) + 1
    assert codes(text) == [(clip_line, "PL204")]


def test_3000_functions_are_analysed() -> None:
    body = [HEADER]
    for i in range(3000):
        body.append(
            f"def f{i}(x):\n"
            '    with torch.autocast("cuda", dtype=torch.float16):\n'
            "        loss = model(x).mean()\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
        )
    body.append("def last(x):\n    scaler.scale(model(x).mean()).backward()\n    optimizer.step()\n")
    text = "".join(body)
    assert codes(text) == [(text.count("\n"), "PL205")]


def test_3000_module_level_steps_are_analysed() -> None:
    body = [HEADER]
    for i in range(3000):
        body.append(
            'with torch.autocast("cuda", dtype=torch.float16):\n'
            f"    loss{i} = model(torch.zeros(2)).mean()\n"
            f"scaler.scale(loss{i}).backward()\n"
            "scaler.step(optimizer)\n"
            "scaler.update()\n"
        )
    assert codes("".join(body)) == []
