"""## What it does
Finds a key written twice in one YAML mapping or JSON object, and a YAML mapping with more than one `<<` merge
key where the merges disagree (two of them supply one key with different values that the mapping does not set
itself). The last occurrence, the one that silently overrides the others, is reported once; the earlier ones are
its related locations. Repeated merges that agree on every key they share load to the same mapping in any
order, and are not reported.

## Why is this bad?
YAML forbids duplicate keys, but the loaders training code uses accept them: PyYAML (`yaml.safe_load`, which
Transformers, Accelerate and most training scripts call) and OmegaConf keep the *last* value, and PyYAML applies
every `<<` merge, a later one overriding an earlier one. Strict loaders (ruamel.yaml, yamllint, many editors)
refuse the file. The config therefore says two things: a reader sees the first `precision: 16-mixed` and
believes it, while the job runs with the `precision: bf16-true` three lines below. precisionlint checks the
file as PyYAML loads it (last value wins) and reports the duplicate.

JSON's grammar allows a repeated name (RFC 8259 only says names SHOULD be unique), and Python's `json`, which
the Transformers Trainer, Accelerate and Coqui TTS read configs with, keeps the last value. A DeepSpeed config
is read two ways: Transformers and Accelerate open it with `json.load` (the last value wins, and the job runs
with it) and hand DeepSpeed a dict; DeepSpeed itself, when it is given the path (`deepspeed --deepspeed_config
ds.json`, `deepspeed.initialize(config="ds.json")`), loads it with a hook that refuses the file ("Duplicate keys
in DeepSpeed config"). Which one reads a file is not known from the file, so the finding is a warning and says
both. A JSON document in a `.yaml` file (Accelerate's `deepspeed_config_file: zero3.yaml`) is read the same way.

Only files that may hold a precision setting are read (the same quick text filter as every config rule).

## Example
```yaml
trainer:
  precision: 16-mixed
  devices: 8
  precision: bf16-true
```

## Use instead
```yaml
trainer:
  devices: 8
  precision: bf16-true
```

## Fix safety
No fix: which occurrence the author meant to keep is their decision (the one that runs is the last).

## References
- YAML 1.2, mappings: "the keys of a mapping must be unique": https://yaml.org/spec/1.2.2/#mapping
- PyYAML `SafeConstructor.construct_mapping` / `flatten_mapping` (last value wins; every merge applied)
- Merge key type: https://yaml.org/type/merge.html
- RFC 8259, section 4 (names within an object SHOULD be unique): https://www.rfc-editor.org/rfc/rfc8259#section-4
- DeepSpeed `DeepSpeedConfig`: `hjson.load(..., object_pairs_hook=dict_raise_error_on_duplicate_keys)`
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import SAME_FILE, Finding, Related, Severity, Span

CODE = "PL004"
NAME = "duplicate-key"
SEVERITY = Severity.WARNING
SUMMARY = "A YAML or JSON key (or a YAML `<<` merge) repeated in one mapping; loaders keep the last one."
TARGET = "settings"
READS = "yaml, json"


def check(ctx: CheckContext) -> Iterator[Finding]:
    readers, refusal = "PyYAML and OmegaConf", "strict YAML loaders refuse the file"
    document = ctx.document
    json_text = document.format == "json" or document.text.lstrip("\ufeff \t\r\n").startswith("{")
    if json_text:
        readers, refusal = "Python's json", "other JSON readers may keep the first or refuse the file"
        if any(setting.framework == "deepspeed" for setting in ctx.settings):
            # Transformers and Accelerate json.load a DeepSpeed config (the job runs with the last value);
            # DeepSpeed refuses the file only when it opens the path itself.
            readers = "Python's json (as Transformers and Accelerate read a DeepSpeed config)"
            refusal = ("DeepSpeed refuses the file when it is given the path itself "
                       "(`--deepspeed_config`, `deepspeed.initialize(config=path)`)")
    keep = "keeps" if json_text else "keep"
    for key, positions in ctx.document.duplicate_keys:
        lines = ", ".join(str(line) for line, _ in positions)
        shown = key if len(key) <= 60 else key[:57] + "..."
        *earlier, (line, column) = positions
        if key == "<<":
            message = (f"{len(positions)} `<<` merge keys in one mapping (lines {lines}): PyYAML applies all of "
                       "them, the later overriding the earlier; strict YAML loaders refuse the file. Use one "
                       "`<<: [*a, *b]`")
            what = "an earlier `<<` merge, overridden where this one sets the same key"
        else:
            ignored = "the earlier one is" if len(earlier) == 1 else "the earlier ones are"
            message = (f"key '{shown}' appears {len(positions)} times in this mapping (lines {lines}); this last "
                       f"value is the one {readers} {keep}, {ignored} ignored, and {refusal}")
            what = f"an earlier '{shown}', ignored by {readers}"
        related = tuple(Related(SAME_FILE, Span.point(at_line, at_column, len(key)), what)
                        for at_line, at_column in earlier)
        yield ctx.report(Span.point(line, column, len(key)), message, related=related)
