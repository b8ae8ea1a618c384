"""Rules the engine itself reports (a file it cannot read or parse, a limit hit, a crash inside a rule).

They have documentation like every other rule, but no check() of their own: the engine produces them.
"""

from __future__ import annotations

from collections.abc import Iterable

from precisionlint.checks import Rule
from precisionlint.core.model import Finding, Severity


def _never(_ctx: object) -> Iterable[Finding]:
    return ()


PARSE_ERROR_DOC = """\
## What it does
Reports a file that cannot be parsed as TOML, YAML, JSON or Python, or that is not valid UTF-8, with the
parser's own line and column. A key that appears twice in one TOML table is reported too: TOML forbids it.
(A key repeated in one YAML mapping or JSON object is not a parse error: PyYAML, OmegaConf and Python's `json`
load it last-wins, so the file is checked that way and the repetition is reported by `duplicate-key`.) JSON
with `//` and `/* */` comments is read as DeepSpeed (hjson) and Coqui TTS read it: valid once its comments are
blanked, it is not a parse error. Nor are two kinds of file that are not meant to be read as they are: a JSON
template whose values are placeholders a launcher substitutes (`"train_batch_size": CONFIG_BATCH_SIZE`, as
Megatron-DeepSpeed's `sed`-filled configs), and a Databricks notebook exported as `.py` (`# Databricks notebook
source`) with IPython lines such as `!deepspeed ...`. Both are skipped, not reported.
Python that only a newer interpreter can parse is reported by `newer-python-syntax` instead. A Python file is
parsed only when some rule reads it: one that merely mentions a precision word (a `precision` metric, `half` of a
list, a `float16` cast in inference code) and holds nothing any rule checks (no autocast, GradScaler, TF32
setting, torch.optim optimizer beside a half-precision cast, framework call passing a precision, link to a
DeepSpeed config, or suppression comment) is not, so its syntax errors are not reported: precisionlint checks
mixed precision, not Python syntax (a Python 2 `print` statement in a vendored evaluation script is none of its
business).

## Why is this bad?
A configuration that does not parse will stop the training job at start-up (or, worse, a tool that reads it
with a more lenient parser will silently use other values). precisionlint cannot check what it cannot read;
the other files of the run are still checked.

## Example
```yaml
trainer:
  precision: "bf16-mixed
```

## Use instead
```yaml
trainer:
  precision: "bf16-mixed"
```

## Fix safety
No fix: only the author knows what was meant.

## References
- TOML 1.0: https://toml.io/en/v1.0.0
- YAML 1.2: https://yaml.org/spec/1.2.2/
- JSON: https://www.rfc-editor.org/rfc/rfc8259
"""

IO_ERROR_DOC = """\
## What it does
Reports a file that exists in the list of paths but cannot be read: permission denied, removed while the run
was going on, or a special file (a FIFO, a device). A symbolic link that leads nowhere is not a finding: met
while walking a directory it is skipped (`--show-files` names it), and named on the command line it is an
error (exit code 2), as a path that does not exist is.

## Why is this bad?
A file that cannot be read was not checked; the run says so instead of passing silently.

## Example
`chmod 000 configs/train.yaml` followed by `precisionlint check configs/`.

## Use instead
Make the file readable, or exclude it (`exclude` in `[tool.precisionlint]`).

## Fix safety
No fix.

## References
- https://docs.python.org/3/library/exceptions.html#OSError
"""

LIMIT_DOC = """\
## What it does
Reports a file that was skipped because checking it would cost more than one of the per-file limits allow:
the memory its analysis would take, estimated from its bytes before it is parsed (`max-memory`, default
2 GB), the CPU time spent on it (`max-parse-time`, default 60 seconds, POSIX only), the nodes walked in its
tree (`max-nodes`, default 5,000,000, which stops YAML alias bombs), its nesting depth (`max-depth`, default
200 levels of a config; Python code as deep as the interpreter can parse), or its size on disk
(`max-file-size`, default 100 MB, checked before the file is read).

## Why is this bad?
The defaults let big ordinary files through (a 5 MB training script, a 20 MB JSON config); a file over them
is generated data, a fixture, or an attack (a "billion laughs" YAML, a megabyte of one dense literal), and
checking it would cost more than the rest of the repository. The limit is reported so that the skip is
visible, never silent.

## Example
A 200 MB `fixtures/huge.json` inside a checked directory.

## Use instead
Exclude the file (`exclude = ["fixtures/"]`), or raise the limit in `[tool.precisionlint]`
(`max-file-size = 500_000_000`).

## Fix safety
No fix.

## References
- https://en.wikipedia.org/wiki/Billion_laughs_attack
"""

INTERNAL_ERROR_DOC = """\
## What it does
Reports an unexpected exception inside precisionlint while it checked a file. The other files are still
checked, and the run exits with code 2.

## Why is this bad?
It is a bug in precisionlint, not in your file. The finding names the rule and the exception.

## Example
Any file that triggers the bug.

## Use instead
Please report it with the file (or a reduced copy) at the project's issue tracker. Until then, the rule can be
turned off for that file with `per-file-ignores`.

## Fix safety
No fix.

## References
- The project's issue tracker.
"""


NEWER_SYNTAX_DOC = """\
## What it does
Reports a Python file written in a grammar newer than the Python that runs precisionlint (PEP 695 generics
and `type` aliases, new f-string syntax, `except*`, ...), naming the Python version the grammar needs. The file
is not checked by the script rules.

## Why is this bad?
It is not: the code is valid for the Python it targets. precisionlint parses scripts with the running
interpreter's own `ast`, so it cannot read grammar added after that version. The finding is informational so
that the gap is visible (and does not fail a run with the default `fail-on = warning`).

## Example
```python
def first[T](items: list[T]) -> T:  # Python 3.12 (PEP 695), checked with Python 3.11
    return items[0]
```

## Use instead
Run precisionlint with the Python version the project targets (or newer).

## Fix safety
No fix.

## References
- PEP 695: https://peps.python.org/pep-0695/
- PEP 701 (f-strings): https://peps.python.org/pep-0701/
- PEP 654 (`except*`): https://peps.python.org/pep-0654/
"""


def _meta(
    code: str, name: str, summary: str, doc: str, severity: Severity = Severity.ERROR, reads: str = "every-file"
) -> Rule:
    return Rule(
        code=code,
        name=name,
        severity=severity,
        summary=summary,
        doc=doc,
        target="engine",
        needs_gpu=False,
        fixable=False,
        func=_never,
        reads=(reads,),
    )


PARSE_ERROR = _meta("PL001", "parse-error", "The file cannot be parsed (or decoded as UTF-8).", PARSE_ERROR_DOC)
IO_ERROR = _meta("PL002", "io-error", "The file cannot be read.", IO_ERROR_DOC)
LIMIT_EXCEEDED = _meta("PL003", "limit-exceeded", "The file exceeds a per-file limit and was skipped.", LIMIT_DOC)
INTERNAL_ERROR = _meta(
    "PL009", "internal-error", "precisionlint crashed on this file (a bug: please report it).", INTERNAL_ERROR_DOC
)

NEWER_SYNTAX = _meta(
    "PL005", "newer-python-syntax", "Python grammar newer than the interpreter running precisionlint; not checked.",
    NEWER_SYNTAX_DOC, Severity.INFO, "python",
)

META_RULES = {r.code: r for r in (PARSE_ERROR, IO_ERROR, LIMIT_EXCEEDED, NEWER_SYNTAX, INTERNAL_ERROR)}
