"""The training-step model (precisionlint.script): aliases, regions, dtype resolution, scalers, paths, columns."""

from __future__ import annotations

import ast
import textwrap

import pytest

from precisionlint.core.model import Document, Span
from precisionlint.script.build import build_script_model
from precisionlint.script.model import ScriptModel


def model_of(source: str) -> ScriptModel:
    text = textwrap.dedent(source)
    return build_script_model(Document("train.py", text, "python", tree=ast.parse(text)))


def kinds(model: ScriptModel) -> list[tuple[str, int]]:
    return [(e.kind, e.span.line) for e in model.events]


# -- import and alias resolution ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "imports, call, api",
    [
        ("import torch", "torch.autocast('cuda')", "torch.autocast"),
        ("import torch", "torch.amp.autocast('cuda')", "torch.amp.autocast"),
        ("import torch", "torch.cuda.amp.autocast()", "torch.cuda.amp.autocast"),
        ("import torch", "torch.cpu.amp.autocast()", "torch.cpu.amp.autocast"),
        ("from torch import autocast", "autocast('cuda')", "torch.autocast"),
        ("from torch.cuda.amp import autocast as ac, GradScaler", "ac()", "torch.cuda.amp.autocast"),
        ("import torch.amp as amp", "amp.autocast('cuda')", "torch.amp.autocast"),
        ("from torch.cuda import amp", "amp.autocast()", "torch.cuda.amp.autocast"),
        ("import torch as th", "th.autocast('cuda')", "torch.autocast"),
        ("import torch as th", "th.amp.autocast_mode.autocast('cuda')", "torch.amp.autocast"),
        ("import torch\nmy_autocast = torch.cuda.amp.autocast", "my_autocast()", "torch.cuda.amp.autocast"),
    ],
)
def test_autocast_aliases(imports: str, call: str, api: str) -> None:
    model = model_of(f"{imports}\nwith {call}:\n    pass\n")
    assert [r.api for r in model.autocast_regions] == [api]


@pytest.mark.parametrize(
    "imports, call, api",
    [
        ("import torch", "torch.amp.GradScaler('cuda')", "torch.amp.GradScaler"),
        ("import torch", "torch.cuda.amp.GradScaler()", "torch.cuda.amp.GradScaler"),
        ("from torch.cuda.amp import autocast as ac, GradScaler", "GradScaler()", "torch.cuda.amp.GradScaler"),
        ("from torch.amp import GradScaler", "GradScaler('cuda')", "torch.amp.GradScaler"),
        ("from torch.cuda import amp", "amp.GradScaler()", "torch.cuda.amp.GradScaler"),
        (
            "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler",
            "ShardedGradScaler()",
            "torch.distributed.fsdp.ShardedGradScaler",
        ),
        ("import torch as th", "th.amp.GradScaler()", "torch.amp.GradScaler"),
    ],
)
def test_scaler_aliases(imports: str, call: str, api: str) -> None:
    model = model_of(f"{imports}\nscaler = {call}\n")
    assert [s.api for s in model.scalers.values()] == [api]


def test_import_fallback_prefers_the_primary_spelling() -> None:
    model = model_of(
        """
        try:
            from torch.amp import GradScaler
        except ImportError:
            from torch.cuda.amp import GradScaler
        scaler = GradScaler("cuda")
        """
    )
    assert [s.api for s in model.scalers.values()] == ["torch.amp.GradScaler"]
    assert model.deprecated_imports == []


def test_a_shadowing_local_is_not_torch() -> None:
    model = model_of(
        """
        import torch
        def f(torch):
            with torch.autocast("cuda"):
                pass
        """
    )
    assert model.autocast_regions == []


# -- regions -----------------------------------------------------------------------------------------------------------


def test_region_forms() -> None:
    model = model_of(
        """
        import torch
        from contextlib import nullcontext

        ctx = torch.autocast("cuda", dtype=torch.bfloat16)
        with ctx:
            a = 1
        with torch.no_grad(), torch.autocast("cpu") as inner:
            b = 2

        class M:
            @torch.autocast("cuda", dtype=torch.float16)
            def forward(self, x):
                return x

        def f(flag):
            amp = torch.autocast("cuda", dtype=torch.float16) if flag else nullcontext()
            with amp:
                pass
        """
    )
    regions = {r.span.line: r for r in model.autocast_regions}
    # (line 1 of these sources is the empty line after the opening quotes)
    assert [u.kind for u in regions[5].uses] == ["with"] and not regions[5].conditional
    assert regions[8].device == "cpu" and regions[8].dtype == "bfloat16" and not regions[8].dtype_explicit
    assert [u.kind for u in regions[12].uses] == ["decorator"]
    assert regions[17].conditional and [u.conditional for u in regions[17].uses] == [True]


def test_nanogpt_context_is_conditional_with_unknown_dtype() -> None:
    model = model_of(
        """
        import torch
        from contextlib import nullcontext
        device = "cuda"
        dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        device_type = "cuda" if "cuda" in device else "cpu"
        ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
        with ctx:
            pass
        """
    )
    (region,) = model.autocast_regions
    assert region.device == "cuda"  # "cuda" in "cuda"
    assert region.dtype is None and region.dtype_explicit  # computed from is_bf16_supported()
    assert region.conditional and region.enabled is True


def test_partial_and_null_context_factory() -> None:
    model = model_of(
        """
        import torch
        from contextlib import suppress
        from functools import partial
        amp_autocast = suppress
        if use_amp:
            amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.bfloat16)
        with amp_autocast():
            loss = model(x)
        """
    )
    (region,) = model.autocast_regions
    assert region.form == "partial" and region.dtype == "bfloat16" and region.device == "cuda"
    assert region.conditional and len(region.uses) == 1


def test_one_call_standing_for_two_apis() -> None:
    model = model_of(
        """
        import torch
        ac = torch.cuda.amp.autocast if torch.cuda.is_available() else torch.cpu.amp.autocast
        with ac():
            pass
        """
    )
    assert [(r.api, r.device, r.dtype, r.conditional) for r in model.autocast_regions] == [
        ("torch.cuda.amp.autocast", "cuda", "float16", True),
        ("torch.cpu.amp.autocast", "cpu", "bfloat16", True),
    ]


def test_framework_autocast_is_a_region_of_unknown_dtype() -> None:
    model = model_of(
        """
        from accelerate import Accelerator
        accelerator = Accelerator(mixed_precision="fp16")
        with accelerator.autocast():
            loss = model(batch)
        """
    )
    assert model.autocast_regions == []  # torch's own autocast calls only
    (region,) = model.framework_regions
    assert (region.api, region.device, region.dtype, region.enabled) == (
        "accelerate.Accelerator.autocast",
        None,
        None,
        None,
    )
    assert model.frameworks == {"accelerate"}


def test_function_returning_a_context() -> None:
    model = model_of(
        """
        import torch
        class Trainer:
            def autocast_ctx(self):
                return torch.autocast("cuda", dtype=torch.bfloat16)
            def step(self, x):
                with self.autocast_ctx():
                    return self.model(x)
        """
    )
    (region,) = model.autocast_regions
    assert len(region.uses) == 1 and region.uses[0].scope.qualname == "Trainer.step"


# -- dtype, device and enabled resolution ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prelude, args, device, dtype, enabled",
    [
        ("", '"cuda"', "cuda", "float16", True),  # default dtype on cuda
        ("", '"cpu"', "cpu", "bfloat16", True),  # default dtype on cpu
        ("", "device_type=dev", None, None, True),  # unknown device: no default applied
        ("", '"cuda", torch.bfloat16, False', "cuda", "bfloat16", False),
        ("", '"cuda", dtype=torch.half', "cuda", "float16", True),
        ("", '"cuda", enabled=args.amp', "cuda", "float16", None),
        (
            "DT = 'bfloat16'\nPT = {'float16': torch.float16, 'bfloat16': torch.bfloat16}[DT]",
            '"cuda", dtype=PT',
            "cuda",
            "bfloat16",
            True,
        ),
        (
            "DT = 'float16'\nexec(open('configurator.py').read())\nPT = {'float16': torch.float16}[DT]",
            '"cuda", dtype=PT',
            "cuda",
            None,
            True,
        ),  # exec() may override any module constant
        ("", '"cuda", dtype=getattr(torch, "bfloat16")', "cuda", "bfloat16", True),
        ("", 'torch.device("cuda:1").type', "cuda", "float16", True),
        ("DEV = 'cpu'", "DEV, enabled=DEV == 'cuda'", "cpu", "bfloat16", False),
        ("", '"cuda", **kw', "cuda", None, None),
    ],
)
def test_resolution(prelude: str, args: str, device: str | None, dtype: str | None, enabled: bool | None) -> None:
    model = model_of(f"import torch\n{prelude}\nwith torch.autocast({args}):\n    pass\n")
    (region,) = model.autocast_regions
    assert (region.device, region.dtype, region.enabled) == (device, dtype, enabled)


def test_class_constants_and_self_attributes() -> None:
    model = model_of(
        """
        import torch
        class Trainer:
            DTYPE = torch.bfloat16
            def __init__(self):
                self.device = "cuda"
                self.flex = torch.float16
            def step(self):
                with torch.autocast(self.device, dtype=self.DTYPE):
                    pass
                with torch.autocast(self.device, dtype=Trainer.DTYPE):
                    pass
        @dataclass
        class Config:
            dtype: torch.dtype = torch.float16
        with torch.autocast("cuda", dtype=Config.dtype):
            pass
        """
    )
    first, second, third = model.autocast_regions
    assert (first.device, first.dtype) == ("cuda", "bfloat16")
    assert second.dtype == "bfloat16"
    assert third.dtype is None  # a dataclass field is a default the constructor overrides


def test_legacy_autocast_positional_order() -> None:
    model = model_of("import torch\nwith torch.cuda.amp.autocast(True, torch.bfloat16):\n    pass\n")
    (region,) = model.autocast_regions
    assert (region.device, region.dtype, region.enabled, region.device_explicit) == ("cuda", "bfloat16", True, True)


# -- scalers and the protocol ------------------------------------------------------------------------------------------


def test_scaler_on_self_across_methods() -> None:
    model = model_of(
        """
        import torch
        class Trainer:
            def __init__(self, fp16):
                self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)
            def step(self, loss, opt):
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(opt)
                self.scaler.step(opt)
                self.scaler.update()
        """
    )
    (scaler,) = model.scalers.values()
    assert scaler.key == "Trainer.self.scaler" and scaler.enabled is None
    assert [e.kind for e in scaler.events] == ["scaled_backward", "unscale", "scaler_step", "scaler_update"]
    assert scaler.owner_class is not None and scaler.owner_class.name == "Trainer"


def test_scaler_parameter_is_recognised_by_its_use() -> None:
    model = model_of(
        """
        def step(loss, optimizer, scaler):
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        """
    )
    (scaler,) = model.scalers.values()
    assert not scaler.constructed and scaler.enabled is None
    assert kinds(model) == [("scaled_backward", 3), ("scaler_step", 4), ("scaler_update", 5)]


def test_scaled_tensor_bound_to_a_name() -> None:
    model = model_of(
        """
        def f(loss, opt, scaler, use_amp):
            if use_amp:
                loss = scaler.scale(loss)
                loss.backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()

        def g(loss, opt, scaler):
            scaled = scaler.scale(loss)
            scaled.backward()
            opt.step()
        """
    )
    # the backward of a name that may hold `scaler.scale(...)` is scaled only on the paths where it does
    assert [(e.kind, e.scaled_name) for e in model.events if e.kind == "backward"] == [
        ("backward", "loss"),
        ("backward", "loss"),
        ("backward", "scaled"),
    ]
    assert _pending(model, "optimizer_step") == {10: set(), 15: {"g:scaler"}}


def test_enabled_literal_and_conditional_construction() -> None:
    model = model_of(
        """
        import torch
        a = torch.amp.GradScaler("cuda", enabled=False)
        b = torch.amp.GradScaler("cuda") if amp else None
        c = torch.cuda.amp.GradScaler(65536.0, 2.0, 0.5, 2000, True)
        """
    )
    scalers = {s.text: s for s in model.scalers.values()}
    assert scalers["a"].enabled is False and not scalers["a"].conditional
    assert scalers["b"].conditional
    assert scalers["c"].enabled is True


def test_backward_kinds() -> None:
    model = model_of(
        """
        import torch
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x
            @staticmethod
            def backward(ctx, g):
                return super().backward(ctx, g)
        loss.backward()
        accelerator.backward(loss)
        self.manual_backward(loss)
        torch.autograd.backward([loss])
        """
    )
    assert kinds(model) == [
        ("backward", 11),
        ("framework_backward", 12),
        ("framework_backward", 13),
        ("backward", 14),
    ]


def test_clip_and_step_classification() -> None:
    model = model_of(
        """
        import torch
        from torch.nn.utils import clip_grad_norm_ as clip
        clip(model.parameters(), 1.0)
        torch.nn.utils.clip_grad.clip_grad_value_(model.parameters(), 1.0)
        fsdp_model.clip_grad_norm_(1.0)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        env.step(action)
        self.opt_d.step()
        """
    )
    assert kinds(model) == [("clip", 4), ("clip", 5), ("clip", 6), ("optimizer_step", 8), ("optimizer_step", 11)]


# -- path sensitivity --------------------------------------------------------------------------------------------------


def _pending(model: ScriptModel, kind: str) -> dict[int, set[str]]:
    attr = "pending_unscale" if kind == "clip" else "pending_step"
    return {e.span.line: set(getattr(e, attr)) for e in model.events if e.kind == kind}


def test_branches_neither_excuse_nor_incriminate() -> None:
    model = model_of(
        """
        from torch.nn.utils import clip_grad_norm_
        def step(loss, opt, scaler, use_amp, clip):
            if use_amp:
                scaler.scale(loss).backward()
                if clip:
                    scaler.unscale_(opt)
                    clip_grad_norm_(params, 1.0)
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                clip_grad_norm_(params, 1.0)
                opt.step()
        """
    )
    assert _pending(model, "clip") == {8: set(), 13: set()}
    assert _pending(model, "optimizer_step") == {14: set()}


def test_a_missing_unscale_on_one_path_is_found() -> None:
    model = model_of(
        """
        from torch.nn.utils import clip_grad_norm_
        def step(loss, opt, scaler, first):
            scaler.scale(loss).backward()
            if first:
                scaler.unscale_(opt)
            clip_grad_norm_(params, 1.0)
            scaler.step(opt)
        """
    )
    assert _pending(model, "clip") == {7: {"step:scaler"}}


def test_correlated_tests_and_scaler_tests() -> None:
    model = model_of(
        """
        def a(loss, opt, scaler, use_amp):
            if use_amp:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            if use_amp:
                scaler.step(opt)
            else:
                opt.step()

        def b(loss, opt, scaler):
            scaler.scale(loss).backward()
            if scaler is not None and scaler.is_enabled():
                scaler.step(opt)
            else:
                opt.step()

        def c(loss, opt, scaler, use_amp):
            if use_amp:
                scaler.scale(loss).backward()
            use_amp = False
            if not use_amp:
                opt.step()
        """
    )
    # a: same test twice; b: the else arm is "scaler off"; c: the flag was reassigned, correlation dropped
    assert _pending(model, "optimizer_step") == {10: set(), 17: set(), 24: {"c:scaler"}}


def test_loops_carry_state_to_the_next_iteration() -> None:
    model = model_of(
        """
        def train(loader, opt, scaler):
            for i, loss in enumerate(loader):
                if i % 2:
                    opt.step()
                scaler.scale(loss).backward()
                if i % 2 == 0:
                    scaler.step(opt)
                    scaler.update()
        """
    )
    assert _pending(model, "optimizer_step") == {5: {"train:scaler"}}


def test_return_and_break_end_a_path() -> None:
    model = model_of(
        """
        def a(loss, opt, scaler, skip):
            scaler.scale(loss).backward()
            if not skip:
                scaler.step(opt)
            else:
                return
            opt.step()

        def b(losses, opt, scaler):
            for loss in losses:
                scaler.scale(loss).backward()
                if loss is None:
                    break
                scaler.step(opt)
            opt.step()
        """
    )
    # a: the only path without scaler.step returned; b: the break leaves with a scaled backward pending
    assert _pending(model, "optimizer_step") == {8: set(), 16: {"b:scaler"}}


# -- autocast outputs reaching backward --------------------------------------------------------------------------------


def test_reaching_definitions() -> None:
    model = model_of(
        """
        import torch
        def helper(model, x):
            with torch.autocast("cuda"):
                return model(x)

        def train(model, x, y):
            with torch.autocast("cuda"):
                out = model(x)
            loss = (out - y).pow(2).mean()
            loss.backward()
            loss = model(x).sum()
            loss.backward()
            helper(model, x).sum().backward()
        """
    )
    reached = {e.span.line: {r.span.line for r in e.reached} for e in model.events}
    assert reached == {11: {8}, 13: set(), 14: {4}}


def test_reaching_through_callees_written_after_their_callers() -> None:
    # train -> forward_loss -> forward, each written before the function it calls: every call reads the returns
    # of its callee, whatever the order of the definitions
    model = model_of(
        """
        import torch
        def train(model, x):
            loss = forward_loss(model, x)
            loss.backward()

        def forward_loss(model, x):
            return forward(model, x).sum()

        def forward(model, x):
            with torch.autocast("cuda"):
                return model(x)
        """
    )
    reached = {e.span.line: {r.span.line for r in e.reached} for e in model.events}
    assert reached == {5: {11}}


# -- positions ---------------------------------------------------------------------------------------------------------


def test_columns_are_characters_not_bytes() -> None:
    model = model_of('import torch\nnote = "héllo wörld ✓"; sc = torch.amp.GradScaler("cuda")\n')
    (scaler,) = model.scalers.values()
    line = 'note = "héllo wörld ✓"; sc = torch.amp.GradScaler("cuda")'
    start = line.index("torch.amp")
    assert scaler.span == Span(2, start + 1, 2, len(line) + 1)
    text = model.document.text
    assert text[model.document.offset(2, scaler.span.column) :].startswith("torch.amp.GradScaler")


def test_frameworks_are_detected() -> None:
    assert model_of("import lightning as L\n").frameworks == {"lightning"}
    assert model_of("from accelerate import Accelerator\n").frameworks == {"accelerate"}
    assert model_of("from transformers import Trainer\n").frameworks == {"hf-trainer"}
    assert model_of("from transformers import AutoModel\n").frameworks == frozenset()


def test_tf32_uses() -> None:
    model = model_of(
        """
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.set_float32_matmul_precision("high")
        torch.backends.cudnn.conv.fp32_precision = "tf32"
        print(torch.backends.cudnn.conv.fp32_precision)
        """
    )
    assert [(u.kind, u.span.line) for u in model.tf32_uses] == [("legacy", 3), ("legacy", 4), ("new", 5)]


def test_half_casts_and_optimizers() -> None:
    model = model_of(
        """
        import torch
        class Lit:
            def __init__(self, net):
                self.net = net.half()
            def configure_optimizers(self):
                groups = [{"params": self.net.encoder.parameters()}]
                return torch.optim.AdamW(groups, eps=1e-6)
        model = Net().to("cuda").to(dtype=torch.bfloat16)
        opt = torch.optim.Adagrad(model.parameters())
        """
    )
    adamw, adagrad = model.optimizers
    assert adamw.eps == 1e-6 and adamw.eps_explicit and adamw.param_keys == {"Lit.self.net.encoder"}
    assert [c.dtype for c in model.casts_of(adamw, ("float16",))] == ["float16"]
    assert adagrad.eps == 1e-10 and not adagrad.eps_explicit
    assert [c.key for c in model.casts_of(adagrad, ("bfloat16",))] == ["<module>:model"]


def test_empty_and_unrelated_files_build() -> None:
    assert model_of("").events == []
    assert model_of("x = 1\nprint(x)\n").autocast_regions == []
