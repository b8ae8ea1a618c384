"""The two dtypes of an RL fine-tuning run: the actor's (the policy being trained) and the rollout engine's (vLLM or
SGLang, generating the samples), as each RL trainer spells them. Read by rl-actor-rollout-dtype-mismatch, and by
fp16-on-bf16-capable-gpu to stand down where both sides are pinned to float16 on purpose.

Each reader returns Pairings: the two sides, each with the dtype it names, where it is written (None: the
trainer's default, named in `where`), and what the trainer does with a mismatch. Nothing here guesses: a value
that holds an interpolation (`${...}`) or a shell expansion is unknown, and an unknown side gives no Pairing.

- verl (Hydra): the actor's `actor_rollout_ref.actor.fsdp_config.dtype` (FSDP, verl 0.6.1+),
  `actor_rollout_ref.actor.megatron.dtype` (Megatron), or `actor_rollout_ref.actor.dtype` (the FP16 patch of the
  arXiv 2510.26788 authors and recipes built on it), against `actor_rollout_ref.rollout.dtype`; in a YAML config
  or as overrides on a launch line. A side not written is verl's default only where the config is verl's own
  (`python -m verl.trainer.main_ppo` without `--config-path`, or a YAML whose defaults list names only
  `ppo_trainer` / `ppo_megatron_trainer`): read from the project's own `verl/trainer/config/` when it holds one
  (a fork may change it), else bfloat16, every release's default. A launch line naming the project's own config
  (`--config-path` / `--config-name`) takes the side it does not set from that config (_named_config).
- NeMo-RL: `policy.precision` against `policy.generation.vllm_cfg.precision`, both written in one file.
- OpenRLHF: `--param_dtype` / `--ds.param_dtype` of `openrlhf.cli.train_ppo_ray` with vLLM engines, whose dtype
  OpenRLHF writes as bfloat16 whatever the actor's.
- TRL: `vllm_dtype` beside `fp16` / `bf16` (GRPOConfig in TRL 0.15, the only release that hands it to vLLM), and
  a launch script's `trl vllm-serve --dtype` beside a training launch's `--fp16` / `--bf16`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import UNRESOLVED, Span
from precisionlint.core.patterns import lazy_pattern

if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from precisionlint.checks import CheckContext
    from precisionlint.sources.tree import Node
else:
    from precisionlint.core.light_typing import NamedTuple

_FP16 = frozenset({"16", "fp16", "float16", "half"})
_BF16 = frozenset({"bf16", "bfloat16"})
_FP32 = frozenset({"32", "fp32", "float32", "float"})
LABEL = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}


class Side(NamedTuple):
    dtype: str  # "fp16" | "bf16" | "fp32"
    key: str  # the key or flag as the user writes it
    span: Span | None  # where it is written in this document; None: the trainer's default
    where: str  # for a default: where it is set (the file, or the trainer's source)


class Pairing(NamedTuple):
    trainer: str  # "verl" | "NeMo-RL" | "OpenRLHF" | "TRL"
    actor: Side
    rollout: Side
    effect: str  # what the trainer does with the two dtypes


def canonical(value: object) -> str | None:
    """fp16 / bf16 / fp32 for a dtype as the RL trainers and vLLM spell it; None for anything else ("auto", fp8,
    an interpolation, a shell variable)."""
    if value is UNRESOLVED or isinstance(value, bool):
        return None
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        return None
    text = value.strip().strip("'\"").lower().removeprefix("torch.")
    if text in _FP16:
        return "fp16"
    if text in _BF16:
        return "bf16"
    if text in _FP32:
        return "fp32"
    return None


def mismatched(pairing: Pairing) -> bool:
    """The two 16-bit formats against each other: float32 on one side is a separate trade (memory for
    precision), and fp8 or "auto" is not judged here."""
    return {pairing.actor.dtype, pairing.rollout.dtype} == {"fp16", "bf16"}


def pairings(ctx: CheckContext) -> list[Pairing]:
    """Every actor/rollout pairing the checked document states (cached on the document: two rules ask)."""
    cached = ctx.document.rl_pairings
    if cached is None:
        found: list[Pairing] = []
        fmt = ctx.document.format
        if fmt == "yaml":
            found.extend(_verl_yaml(ctx))
            found.extend(_nemo_rl_yaml(ctx))
            found.extend(_trl_mapping(ctx))
        elif fmt == "shell":
            found.extend(_launch_lines(ctx))
        elif fmt == "python":
            found.extend(_trl_python(ctx))
        cached = ctx.document.rl_pairings = found
    return cached  # type: ignore[no-any-return]


# --- YAML -------------------------------------------------------------------------------------------------------


def _walk(node: Node | None, dotted: str) -> Node | None:
    for key in dotted.split("."):
        if node is None or node.kind != "map":
            return None
        entry = node.get(key)
        node = entry.value if entry is not None else None
    return node


def _scalar(ctx: CheckContext, root: Node, dotted: str) -> tuple[str | None, Span | None, bool]:
    """(canonical dtype, its span, whether the key is written at all)."""
    node = _walk(root, dotted)
    if node is None:
        return None, None, False
    if node.kind != "scalar":
        return None, None, True
    return canonical(node.value), ctx.document.span_of(node.start, node.end), True


_VERL_ACTOR_KEYS = {"fsdp": ("dtype", "fsdp_config.dtype"), "megatron": ("dtype", "megatron.dtype")}
_VERL_EFFECT = ("verl loads the rollout engine's weights in `rollout.dtype` from the actor after every update, "
                "and computes the actor's log-probabilities in its own dtype, so the importance ratios compare "
                "two precisions (verl's docs/examples/config.rst: rollout.dtype 'should be align with the actor "
                "model parameter type in FSDP/Megatron backend')")


def _strategy(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.lower()
    if value in ("fsdp", "fsdp2"):
        return "fsdp"
    return "megatron" if value == "megatron" else None


def _verl_actor(written: dict[str, tuple[str | None, Span | None, bool]], strategy: str | None,
                prefix: str) -> tuple[Side | None, bool]:
    """The actor's side from the keys written (relative to `actor_rollout_ref.actor.`), and whether the actor's
    dtype is unknown (written but unreadable, or written twice and disagreeing)."""
    keys = _VERL_ACTOR_KEYS[strategy] if strategy else ("dtype", "fsdp_config.dtype", "megatron.dtype")
    found = [(key, written[key]) for key in keys if written.get(key, (None, None, False))[2]]
    if any(dtype is None for _, (dtype, _, _) in found):
        return None, True  # an interpolation or a value we cannot read
    if len({dtype for _, (dtype, _, _) in found}) > 1:
        return None, True
    mixed = written.get("fsdp_config.mixed_precision.param_dtype", (None, None, False))
    if mixed[2] and strategy != "megatron":
        # The legacy FSDP block casts the parameters; with no dtype beside it, or another one, which of the two
        # the log-probabilities are computed in is not one setting's to say.
        if not found or mixed[0] != found[0][1][0]:
            return None, True
    if not found:
        return None, False
    key, (dtype, span, _) = found[0]
    assert dtype is not None
    return Side(dtype, f"{prefix}{key}", span, ""), False


def _verl_yaml(ctx: CheckContext) -> Iterator[Pairing]:
    from precisionlint.sources.tree import root_map

    root = root_map(ctx.document.tree)
    section = _walk(root, "actor_rollout_ref")
    if root is None or section is None or section.kind != "map":
        return
    rollout_dtype, rollout_span, rollout_written = _scalar(ctx, section, "rollout.dtype")
    if rollout_written and rollout_dtype is None:
        return
    actor_keys = ("dtype", "fsdp_config.dtype", "megatron.dtype", "fsdp_config.mixed_precision.param_dtype")
    written = {key: _scalar(ctx, section, f"actor.{key}") for key in actor_keys}
    strategy_node = _walk(section, "actor.strategy")
    strategy = _strategy(strategy_node.value) if strategy_node is not None and strategy_node.kind == "scalar" \
        else None
    actor, unknown = _verl_actor(written, strategy, "actor_rollout_ref.actor.")
    if unknown or (actor is None and not rollout_written):
        return
    base = _verl_base(ctx)
    if strategy is None and base is not None:
        strategy = base
    if actor is None or not rollout_written:
        if base is None:
            return  # a side is set by a config this file composes, which we do not read
        defaults = _verl_defaults(ctx)
        if actor is None:
            actor = _default_actor(defaults, strategy)
        if not rollout_written:
            dtype, where = defaults["rollout"]
            rollout = Side(dtype, "actor_rollout_ref.rollout.dtype", None, where)
    if rollout_written:
        assert rollout_dtype is not None
        rollout = Side(rollout_dtype, "actor_rollout_ref.rollout.dtype", rollout_span, "")
    if actor is not None:
        yield Pairing("verl", actor, rollout, _VERL_EFFECT)


def _verl_base(ctx: CheckContext) -> str | None:
    """"fsdp" / "megatron" where the YAML's defaults list composes only verl's own trainer config (and itself),
    so that a key it does not write has verl's default; None otherwise."""
    from precisionlint.project.hydra import defaults

    entries = [entry for entry in defaults(ctx.document) if entry is not None]
    if not entries or any(entry.group or entry.option not in _VERL_BASES for entry in entries):
        return None
    return _VERL_BASES[entries[0].option]


_VERL_BASES = {"ppo_trainer": "fsdp", "ppo_megatron_trainer": "megatron"}
# Where verl's defaults are written (relative to a verl checkout): the actor's dtype per backend (`dtype` of
# actor/actor.yaml only in the FP16 patch), and the rollout's.
_VERL_DEFAULT_FILES = {
    "actor": "verl/trainer/config/actor/actor.yaml",
    "fsdp": "verl/trainer/config/engine/fsdp.yaml",
    "megatron": "verl/trainer/config/engine/megatron.yaml",
    "rollout": "verl/trainer/config/rollout/rollout.yaml",
}
_VERL_RELEASE_DEFAULT = ("bf16", "verl's default: bfloat16 in every release (verl/trainer/config/rollout/rollout.yaml, "
                         "engine/fsdp.yaml, engine/megatron.yaml)")


def _verl_defaults(ctx: CheckContext) -> dict[str, tuple[str, str]]:
    """The defaults the run takes: from the project's own verl checkout where it holds one (a fork may change
    them), else the release's (bfloat16 on both sides)."""
    from precisionlint.project import disk_path, display_path
    from precisionlint.sources.tree import root_map

    found: dict[str, tuple[str, str]] = {}
    for part, relative in _VERL_DEFAULT_FILES.items():
        path = ctx.project.resolve(disk_path(ctx.document), relative)
        linked = ctx.project.document(path) if path is not None else None
        root = root_map(linked.tree) if linked is not None and linked.format == "yaml" else None
        node = _walk(root, "dtype")
        if node is not None and node.kind == "scalar":
            dtype = canonical(node.value)
            if dtype is not None:
                found[part] = (dtype, f"the default in {display_path(path)}")  # type: ignore[arg-type]
    for part in ("fsdp", "megatron", "rollout"):
        found.setdefault(part, _VERL_RELEASE_DEFAULT)
    return found


def _default_actor(defaults: dict[str, tuple[str, str]], strategy: str | None) -> Side | None:
    if "actor" in defaults:
        dtype, where = defaults["actor"]
        return Side(dtype, "actor_rollout_ref.actor.dtype", None, where)
    options = [strategy] if strategy else ["fsdp", "megatron"]
    values = {defaults[option] for option in options}
    if len({dtype for dtype, _ in values}) != 1:
        return None
    dtype, where = defaults[options[0]]
    key = "megatron.dtype" if strategy == "megatron" else "fsdp_config.dtype"
    return Side(dtype, f"actor_rollout_ref.actor.{key}", None, where)


_NEMO_EFFECT = ("NeMo-RL hands `vllm_cfg.precision` to vLLM as its dtype (nemo_rl/models/generation/vllm.py) and "
                "trains the policy in `policy.precision`; its own configs tie the two with "
                "`precision: ${policy.precision}`")


def _nemo_rl_yaml(ctx: CheckContext) -> Iterator[Pairing]:
    from precisionlint.sources.tree import root_map

    root = root_map(ctx.document.tree)
    policy = _walk(root, "policy")
    if policy is None or policy.kind != "map" or _walk(policy, "generation.vllm_cfg") is None:
        return
    backend = _walk(policy, "generation.backend")
    if backend is not None and backend.kind == "scalar" and backend.value != "vllm":
        return
    actor, actor_span, _ = _scalar(ctx, policy, "precision")
    rollout, rollout_span, _ = _scalar(ctx, policy, "generation.vllm_cfg.precision")
    if actor is None or rollout is None:
        return
    yield Pairing("NeMo-RL", Side(actor, "policy.precision", actor_span, ""),
                  Side(rollout, "policy.generation.vllm_cfg.precision", rollout_span, ""), _NEMO_EFFECT)


# --- TRL ----------------------------------------------------------------------------------------------------------

_TRL_EFFECT = ("TRL 0.15 hands GRPOConfig's `vllm_dtype` to vLLM (`LLM(..., dtype=self.args.vllm_dtype)` in "
               "trl/trainer/grpo_trainer.py) while the policy trains under fp16/bf16 autocast")


def _trl_mapping(ctx: CheckContext) -> Iterator[Pairing]:
    """A TRL config file (read by TrlParser into GRPOConfig): `vllm_dtype` beside `fp16: true` / `bf16: true`."""
    from precisionlint.sources.tree import root_map

    root = root_map(ctx.document.tree)
    if root is None or root.get("vllm_dtype") is None:
        return
    rollout, rollout_span, _ = _scalar(ctx, root, "vllm_dtype")
    for name in ("fp16", "bf16"):
        node = _walk(root, name)
        if rollout is not None and node is not None and node.kind == "scalar" and node.value is True:
            side = Side(name, name, ctx.document.span_of(node.start, node.end), "")
            yield Pairing("TRL", side, Side(rollout, "vllm_dtype", rollout_span, ""), _TRL_EFFECT)


def _trl_python(ctx: CheckContext) -> Iterator[Pairing]:
    if "vllm_dtype" not in ctx.document.text:
        return
    from precisionlint.sources.positions import node_span
    from precisionlint.sources.python_index import PythonIndex

    for call in PythonIndex.of(ctx.document).calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not name.endswith("GRPOConfig"):
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        vllm = keywords.get("vllm_dtype")
        rollout = canonical(vllm.value) if isinstance(vllm, ast.Constant) else None
        if rollout is None or vllm is None:
            continue
        for flag in ("fp16", "bf16"):
            value = keywords.get(flag)
            if isinstance(value, ast.Constant) and value.value is True:
                yield Pairing("TRL", Side(flag, f"{flag}=True", node_span(ctx.document, value), ""),
                              Side(rollout, "vllm_dtype", node_span(ctx.document, vllm), ""), _TRL_EFFECT)


# --- launch lines -------------------------------------------------------------------------------------------------

_OPENRLHF_EFFECT = ("OpenRLHF's vLLM engines always load bfloat16 (`\"dtype\": \"bfloat16\"` in "
                    "create_vllm_engines, openrlhf/trainer/ray/vllm_engine.py, every release from 0.5.0 to 0.11.0), "
                    "and the weight sync after the first training step asserts that the two agree (\"mismatch "
                    "dtype: src torch.float16, dst torch.bfloat16\", openrlhf/trainer/ray/vllm_worker_wrap.py)")
_OPENRLHF_ENGINE = "hard-coded in OpenRLHF"


def _launch_lines(ctx: CheckContext) -> Iterator[Pairing]:
    launches = ctx.document.tree if isinstance(ctx.document.tree, list) else []
    for launch in launches:
        target = launch.module or launch.script or ""
        overrides = getattr(launch, "overrides", {})
        if any(key.startswith("actor_rollout_ref.") for key in overrides):
            yield from _verl_launch(ctx, launch, target, overrides)
        if target == "openrlhf.cli.train_ppo_ray" or target.endswith("train_ppo_ray.py"):
            yield from _openrlhf_launch(launch)
    yield from _trl_serve(ctx, launches)


def _verl_launch(ctx: CheckContext, launch: Any, target: str, overrides: dict[str, Any]) -> Iterator[Pairing]:
    prefix = "actor_rollout_ref.actor."
    written = {key[len(prefix):]: _flag_dtype(flag) for key, flag in overrides.items() if key.startswith(prefix)}
    strategy_flag = overrides.get(f"{prefix}strategy")
    strategy = _strategy(strategy_flag.value) if strategy_flag is not None else None
    actor, unknown = _verl_actor(written, strategy, prefix)
    rollout_flag = overrides.get("actor_rollout_ref.rollout.dtype")
    if unknown or (rollout_flag is not None and canonical(rollout_flag.value) is None):
        return
    if actor is None and rollout_flag is None:
        return  # neither dtype is on the line: the configs and defaults are reported where they are written
    own_rollout: Side | None = None
    if actor is None or rollout_flag is None:
        # A side not on the line is read from the project's config the line names (`--config-path` and
        # `--config-name`), where it is written there; else it is verl's default, when the run uses verl's own
        # config or a project config that composes only verl's.
        config_name = launch.script_flags.get("config_name")
        name = config_name.value if config_name is not None else "ppo_trainer"
        if target != "verl.trainer.main_ppo":
            return
        if "config_path" in launch.script_flags or name not in _VERL_BASES:
            named = _named_config(ctx, launch, name)
            if named is None:
                return
            config_actor, own_rollout, config_strategy, composes_verl = named
            strategy = strategy or config_strategy
            actor = actor or config_actor
            if (actor is None or (rollout_flag is None and own_rollout is None)) and not composes_verl:
                return  # a side is set by a config the named one composes, which we do not read
        else:
            strategy = strategy or _VERL_BASES[name]
        defaults = _verl_defaults(ctx)
        actor = actor or _default_actor(defaults, strategy)
        if actor is None:
            return
    if rollout_flag is not None:
        rollout = Side(canonical(rollout_flag.value) or "", "actor_rollout_ref.rollout.dtype", rollout_flag.span, "")
    elif own_rollout is not None:
        rollout = own_rollout
    else:
        dtype, where = _verl_defaults(ctx)["rollout"]
        rollout = Side(dtype, "actor_rollout_ref.rollout.dtype", None, where)
    yield Pairing("verl", actor, rollout, _VERL_EFFECT)


def _named_config(ctx: CheckContext, launch: Any,
                  name: str) -> tuple[Side | None, Side | None, str | None, bool] | None:
    """What the project's Hydra config named by a launch line (`--config-path DIR --config-name NAME`, the path
    taken from the launch script's folder, then the project's) writes: the actor's side and the rollout's (each
    None where not written), the actor's strategy, and whether it composes only verl's own trainer config (so
    that a side it does not write has verl's default). None when the config cannot be found or read, or writes
    a side that cannot be read (an interpolation)."""
    import os

    from precisionlint.project import disk_path, display_path
    from precisionlint.project.hydra import defaults
    from precisionlint.sources.tree import root_map

    config_path = launch.script_flags.get("config_path")
    folder = config_path.value if config_path is not None else ""
    if not isinstance(folder, str) or not isinstance(name, str) or "$" in folder + name:
        return None
    path = ctx.project.resolve(disk_path(ctx.document), os.path.join(folder, name if name.endswith(".yaml")
                                                                     else f"{name}.yaml"))
    document = ctx.project.document(path) if path is not None else None
    root = root_map(document.tree) if document is not None and document.format == "yaml" else None
    if root is None or document is None or path is None:
        return None
    entries = [entry for entry in defaults(document) if entry is not None]
    composes_verl = bool(entries) and all(not e.group and e.option in _VERL_BASES for e in entries)
    where = f"written in {display_path(path)}"
    section = _walk(root, "actor_rollout_ref")
    if section is None or section.kind != "map":
        return None, None, _VERL_BASES[entries[0].option] if composes_verl else None, composes_verl
    written: dict[str, tuple[str | None, Span | None, bool]] = {}
    for key in ("dtype", "fsdp_config.dtype", "megatron.dtype", "fsdp_config.mixed_precision.param_dtype"):
        node = _walk(section, f"actor.{key}")
        if node is not None:
            written[key] = (canonical(node.value) if node.kind == "scalar" else None, None, True)
    strategy_node = _walk(section, "actor.strategy")
    strategy = _strategy(strategy_node.value) if strategy_node is not None and strategy_node.kind == "scalar" \
        else (_VERL_BASES[entries[0].option] if composes_verl else None)
    actor, unknown = _verl_actor(written, strategy, "actor_rollout_ref.actor.")
    rollout_node = _walk(section, "rollout.dtype")
    if unknown or (rollout_node is not None and (rollout_node.kind != "scalar" or canonical(rollout_node.value)
                                                 is None)):
        return None
    if actor is not None:
        actor = actor._replace(where=where)
    rollout = None
    if rollout_node is not None:
        rollout = Side(canonical(rollout_node.value) or "", "actor_rollout_ref.rollout.dtype", None, where)
    return actor, rollout, strategy, composes_verl


def _flag_dtype(flag: Any) -> tuple[str | None, Span | None, bool]:
    return canonical(flag.value), flag.span, True


def _openrlhf_launch(launch: Any) -> Iterator[Pairing]:
    flags = launch.script_flags
    dtype_flag = flags.get("ds.param_dtype") or flags.get("param_dtype")
    engines = flags.get("vllm.num_engines") or flags.get("vllm_num_engines")
    if dtype_flag is None or engines is None or canonical(dtype_flag.value) != "fp16":
        return
    if not isinstance(engines.value, str) or not engines.value.isdigit() or int(engines.value) == 0:
        return  # no vLLM engine (0 turns vLLM off), or a number the line does not say
    key = "--ds.param_dtype" if "ds.param_dtype" in flags else "--param_dtype"
    yield Pairing("OpenRLHF", Side("fp16", key, dtype_flag.span, ""),
                  Side("bf16", "create_vllm_engines", None, _OPENRLHF_ENGINE), _OPENRLHF_EFFECT)


# `trl vllm-serve --model M --dtype float16` (also `vllm_serve`, and the module form); read from the text, since
# it starts no training program.
_TRL_SERVE = lazy_pattern(
    globals(), "_TRL_SERVE", r"(?:\btrl\s+vllm[-_]serve\b|-m\s+trl\.scripts\.vllm_serve\b)(?P<rest>[^\n;&|]*)")
_DTYPE_FLAG = lazy_pattern(globals(), "_DTYPE_FLAG", r"--dtype(?:=|\s+)(['\"]?)(?P<value>[A-Za-z0-9_.$]+)\1")
_TRL_SERVE_EFFECT = ("`trl vllm-serve --dtype` sets the dtype vLLM generates in, and TRL's trainer computes the "
                     "policy's log-probabilities under its own fp16/bf16 autocast (trl/scripts/vllm_serve.py: "
                     "`dtype` defaults to \"auto\", the checkpoint's)")


def _trl_serve(ctx: CheckContext, launches: list[Any]) -> Iterator[Pairing]:
    serve = trl_serve_dtype(ctx)
    if serve is None:
        return
    dtype, span = serve
    for launch in launches:
        for name in ("fp16", "bf16"):
            flag = launch.script_flags.get(name)
            if flag is not None and str(flag.value).lower() in ("true", "1", "yes"):
                yield Pairing("TRL", Side(name, f"--{name}", flag.span, ""),
                              Side(dtype, "trl vllm-serve --dtype", span, ""), _TRL_SERVE_EFFECT)


def trl_serve_dtype(ctx: CheckContext) -> tuple[str, Span] | None:
    """The dtype a launch script's `trl vllm-serve` line pins, with its span."""
    text = ctx.document.text
    if "vllm" not in text:
        return None
    joined = text.replace("\\\r\n", "  ").replace("\\\n", " ")  # same length: offsets stay those of `text`
    for match in _TRL_SERVE.finditer(joined):
        flag = _DTYPE_FLAG.search(match.group("rest"))
        if flag is None:
            continue
        dtype = canonical(flag.group("value"))
        if dtype is None:
            continue
        start = match.start("rest") + flag.start("value")
        return dtype, ctx.document.span_of(start, start + len(flag.group("value")))
    return None


def is_deliberate_fp16(ctx: CheckContext) -> bool:
    """The document pins its rollout engine to float16 next to float16 training: an RL recipe that trains and
    samples in fp16 on purpose (arXiv 2510.26788), which bf16 would undo."""
    if any(p.actor.dtype == "fp16" and p.rollout.dtype == "fp16" for p in pairings(ctx)):
        return True
    if ctx.document.format == "shell":
        serve = trl_serve_dtype(ctx)
        return serve is not None and serve[0] == "fp16"
    if ctx.document.format == "python" and "LLM" in ctx.document.text:
        return _vllm_llm_fp16(ctx)
    return False


def _vllm_llm_fp16(ctx: CheckContext) -> bool:
    """A `vllm.LLM(..., dtype="float16")` (or "half", torch.float16) built in the file."""
    from precisionlint.sources.python_index import PythonIndex

    index = PythonIndex.of(ctx.document)
    aliases = index.import_aliases()
    for call in index.calls:
        func = call.func
        if isinstance(func, ast.Name):
            origin = aliases.get(func.id, "")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            origin = f"{aliases.get(func.value.id, func.value.id)}.{func.attr}"
        else:
            continue
        if origin not in ("vllm.LLM", "vllm.AsyncEngineArgs", "vllm.EngineArgs"):
            continue
        for keyword in call.keywords:
            if keyword.arg == "dtype" and _python_dtype(keyword.value) == "fp16":
                return True
    return False


def _python_dtype(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant):
        return canonical(node.value)
    if isinstance(node, ast.Attribute):
        return canonical(node.attr)
    return None


def side_text(side: Side) -> str:
    """`key`, or `key`, and where its default is set (for a side that is not written)."""
    return f"`{side.key}`" if side.span is not None else f"`{side.key}`, {side.where}"


