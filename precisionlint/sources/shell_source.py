"""Shell launch scripts (`*.sh`): the training commands they run, read with `shlex`, never executed.

Each command line that starts a training program becomes a Launch: `accelerate launch`, `torchrun`,
`python -m torch.distributed.run|launch`, `deepspeed`, `python [-m module | script.py]`, with the flags given to
the launcher and those given to the script (`--mixed_precision bf16`, `--fp16`, `--bf16 True`, `--precision 16`,
`--deepspeed ds.json`), each with its span. Lines are joined at a trailing backslash; environment assignments
(`CUDA_VISIBLE_DEVICES=0`) and wrappers (`nohup`, `srun`, `env`, `time`) before the command are skipped; a value
that holds a shell expansion (`$CFG`, `$(...)`) is unresolved.

The Document has no canonical settings (a flag means nothing until the script that reads it is known); the rules
that read launchers take `document.tree`, the list of Launches.
"""

from __future__ import annotations

import re
import shlex

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import UNRESOLVED, Document, Span
from precisionlint.sources import Limits

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

# Flags whose value matters to precision rules (spelled with underscores; `--mixed-precision` is read too).
PRECISION_FLAGS = ("mixed_precision", "fp16", "bf16", "precision", "deepspeed", "deepspeed_config",
                   "deepspeed_config_file", "config_file", "tf32",
                   # OpenRLHF's actor dtype and vLLM engines (0.9.2-0.10.1 spelling, then 0.10.2's dotted one),
                   # and a Hydra app's own config (verl): read by rl-actor-rollout-dtype-mismatch
                   "param_dtype", "ds.param_dtype", "vllm_num_engines", "vllm.num_engines", "config_name",
                   "config_path")
_BOOLEAN_FLAGS = ("fp16", "bf16", "tf32")
_WRAPPERS = {"nohup", "srun", "env", "time", "exec", "sudo", "numactl", "taskset", "stdbuf", "nice", "mpirun"}
_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)?)?$")
_LAUNCH_MODULES = ("torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch", "deepspeed")


class Flag(NamedTuple):
    name: str  # without dashes, '-' read as '_'
    value: object  # str, True (a boolean flag given alone), or UNRESOLVED
    span: Span  # the value's span (the flag's own for a boolean flag given alone)
    flag_span: Span


class Option(NamedTuple):
    word: str  # the option string as written, without `=value` ("--precision", "-p")
    value: object  # the word after it or after `=`, UNRESOLVED for a shell expansion, None when none follows
    span: Span  # the value's span (the option's own when it has none)
    flag_span: Span


class Word(NamedTuple):
    """One word of a command as the shell passes it (quotes removed), with where it is written."""

    text: str
    span: Span


class Launch(NamedTuple):
    launcher: str  # "accelerate" | "torchrun" | "deepspeed" | "python"
    script: str | None  # the script path as written (None for `-m module`)
    module: str | None
    script_span: Span | None
    launcher_flags: dict[str, Flag]
    script_flags: dict[str, Flag]
    span: Span  # the whole command
    # Every option word given to the script, as written (`--precision`, `-p`), whatever it names: the script's
    # own parser decides what it means (project.launched reads them against its argparse and click options).
    options: tuple[Option, ...] = ()
    # Hydra overrides given to the script (`actor_rollout_ref.rollout.dtype=float16`, `+a.b=c`), by their dotted
    # key without the `+`/`++` that adds a key; the Flag's span is the value's.
    overrides: dict[str, Flag] = {}  # noqa: RUF012 (never mutated: each Launch gets its own)
    # Every word after the script in order (subcommands too: `main.py fit --config c.yaml`), as its own parser
    # reads them (project/launch_options.py, project/lightning_cli.py).
    script_words: tuple[Word, ...] = ()


class _Token(NamedTuple):
    text: str
    start: int
    end: int


def _logical_lines(text: str) -> list[list[_Token]]:
    """Commands as token lists with offsets into `text`; a trailing backslash continues a command.

    Only the commands that can start a training program are tokenized (shlex reads a character at a time, and
    most lines of a launch script set variables or print): a logical line whose text names no launcher, once
    the characters that quoting and escaping remove are taken out, holds no Launch, and is left out."""
    commands: list[list[_Token]] = []
    current: list[tuple[str, int]] = []  # the physical lines of the logical line: (body, offset)
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        continued = line.endswith("\\") and not line.endswith("\\\\")
        current.append((line[:-1] if continued else line, offset))
        offset += len(raw)
        if not continued:
            commands.extend(_commands(current))
            current = []
    commands.extend(_commands(current))
    return commands


def _commands(lines: list[tuple[str, int]]) -> list[list[_Token]]:
    if not lines or not _MAY_LAUNCH.search("".join(body for body, _ in lines).translate(_UNQUOTED)):
        return []
    tokens = [token for body, offset in lines for token in _tokens(body, offset)]
    return _split_commands(tokens) if tokens else []


# The words a command's head must hold to be a launcher (_launch), and the characters shlex removes from words.
_MAY_LAUNCH = re.compile(r"python|torchrun|deepspeed|accelerate")
_UNQUOTED = str.maketrans("", "", "'\"\\")


def _tokens(line: str, base: int) -> list[_Token]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found: list[_Token] = []
    position = 0
    try:
        for word in lexer:
            # Where the word stands in the line: its first character from where the last one ended (quotes
            # make the written form longer than the word; the span then covers what could be matched).
            start = _locate(line, word, position)
            end = min(len(line), start + len(word))
            while end < len(line) and not line[end].isspace() and line[end] not in ";&|":
                end += 1
            found.append(_Token(word, base + start, base + end))
            position = end
    except ValueError:  # an unterminated quote: the line says nothing we can read
        return []
    return found


def _locate(line: str, word: str, position: int) -> int:
    index = line.find(word, position)
    if index != -1:
        return index
    while position < len(line) and line[position].isspace():
        position += 1
    return position


def _split_commands(tokens: list[_Token]) -> list[list[_Token]]:
    commands: list[list[_Token]] = [[]]
    for token in tokens:
        if token.text and set(token.text) <= set(";&|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def _flag_name(text: str) -> str | None:
    if not text.startswith("--") or len(text) < 3:
        return None
    return text[2:].split("=", 1)[0].replace("-", "_")


def _value(text: str) -> object:
    return UNRESOLVED if "$" in text or "`" in text else text


def _read_flags(
    document: Document, tokens: list[_Token], start: int, stop: int, value_flags: set[str] | None = None
) -> dict[str, Flag]:
    """The precision flags among tokens[start:stop]. A boolean flag takes the next word as its value only when
    it reads as a boolean (`--bf16 True`); other flags take the next word unless it is another option."""
    flags: dict[str, Flag] = {}
    index = start
    while index < stop:
        token = tokens[index]
        name = _flag_name(token.text)
        index += 1
        if name is None or name not in PRECISION_FLAGS:
            continue
        flag_span = document.span_of(token.start, token.end)
        if "=" in token.text:
            raw = token.text.split("=", 1)[1]
            equals = document.text.find("=", token.start, token.end)
            value_span = document.span_of(equals + 1, token.end) if equals != -1 else flag_span
            flags[name] = Flag(name, _value(raw), value_span, flag_span)
            continue
        following = tokens[index] if index < stop else None
        if name in _BOOLEAN_FLAGS:
            if following is not None and following.text.lower() in ("true", "false", "1", "0", "yes", "no"):
                flags[name] = Flag(name, following.text, document.span_of(following.start, following.end), flag_span)
                index += 1
            elif following is not None and _value(following.text) is UNRESOLVED:
                # `--bf16 $USE_BF16`: HfArgumentParser reads the next word as the value, whatever it expands to
                flags[name] = Flag(name, UNRESOLVED, document.span_of(following.start, following.end), flag_span)
                index += 1
            else:
                flags[name] = Flag(name, True, flag_span, flag_span)
            continue
        if following is not None and not following.text.startswith("-"):
            flags[name] = Flag(name, _value(following.text), document.span_of(following.start, following.end),
                               flag_span)
            index += 1
    return flags


# A Hydra override: a dotted key (optionally `+`/`++` to add it), `=`, a value. `~key` deletes and is not kept.
_OVERRIDE = re.compile(r"^(?:\+\+?)?([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)+)=")


def _read_overrides(document: Document, tokens: list[_Token], start: int) -> dict[str, Flag]:
    """The Hydra overrides among tokens[start:]: `key.path=value` words that are no option's value."""
    found: dict[str, Flag] = {}
    for index in range(start, len(tokens)):
        token = tokens[index]
        match = _OVERRIDE.match(token.text)
        if match is None or (index > start and tokens[index - 1].text.startswith("-")
                             and "=" not in tokens[index - 1].text):
            continue  # `--opt a.b=c` hands the word to the option
        raw = token.text[match.end():]
        equals = document.text.find("=", token.start, token.end)
        flag_span = document.span_of(token.start, token.end)
        value_span = document.span_of(equals + 1, token.end) if equals != -1 else flag_span
        found[match.group(1)] = Flag(match.group(1), _value(raw), value_span, flag_span)
    return found


def _launch(document: Document, tokens: list[_Token]) -> Launch | None:
    index = 0
    words = [t.text for t in tokens]
    if words[:3] == ["ray", "job", "submit"] and "--" in words:
        index = words.index("--") + 1  # `ray job submit [options] -- python3 -m ...`: the command after `--`
    while index < len(tokens) and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[index].text)
                                   or tokens[index].text in _WRAPPERS):
        index += 1
    if index >= len(tokens):
        return None
    head = tokens[index].text
    if head == "accelerate" and index + 1 < len(tokens) and words[index + 1] == "launch":
        launcher, first = "accelerate", index + 2
    elif head in ("torchrun", "deepspeed"):
        launcher, first = head, index + 1
    elif _PYTHON.match(head):
        first = index + 1
        while first < len(tokens) and tokens[first].text in ("-u", "-O", "-B", "-W", "-X"):
            first += 1
        if first + 1 < len(tokens) and words[first] == "-m" and words[first + 1] in _LAUNCH_MODULES:
            launcher = "accelerate" if words[first + 1].startswith("accelerate") else (
                "deepspeed" if words[first + 1] == "deepspeed" else "torchrun")
            first += 2
            if launcher == "accelerate" and first < len(tokens) and words[first] == "launch":
                first += 1
        else:
            launcher = "python"
    else:
        return None
    # The script: the first `*.py` word after the launcher's options, or `-m module` for python.
    script = module = None
    script_at = None
    for position in range(first, len(tokens)):
        word = words[position]
        # `python -m pkg.train`, `torchrun -m`, `accelerate launch -m`; the launchers also spell it `--module`
        # (`deepspeed --module pkg.train`), a switch whose following word is the module
        if (word == "-m" or word == "--module" and launcher != "python") and position + 1 < len(tokens):
            module, script_at = words[position + 1], position + 1
            break
        if word.endswith(".py") and not word.startswith("-"):
            script, script_at = word, position
            break
        if launcher == "python" and not word.startswith("-"):
            return None  # `python tool` without a .py: not a script we can follow
    if script_at is None:
        return None
    span = document.span_of(tokens[index].start, tokens[-1].end)
    launcher_flags = _read_flags(document, tokens, first, script_at) if launcher != "python" else {}
    script_flags = _read_flags(document, tokens, script_at + 1, len(tokens))
    script_token = tokens[script_at]
    passed = tuple(Word(token.text, document.span_of(token.start, token.end)) for token in tokens[script_at + 1:])
    return Launch(launcher, script if script and "$" not in script else None, module,
                  document.span_of(script_token.start, script_token.end), launcher_flags, script_flags, span,
                  _options(document, tokens, script_at + 1, len(tokens)),
                  _read_overrides(document, tokens, script_at + 1), passed)


def _options(document: Document, tokens: list[_Token], start: int, stop: int) -> tuple[Option, ...]:
    """Every option word among tokens[start:stop], each with the word that follows it (or its `=value`). Whether
    that word is the option's value depends on the option (a `store_true` flag takes none): the reader decides."""
    found: list[Option] = []
    for index in range(start, stop):
        token = tokens[index]
        text = token.text
        if not text.startswith("-") or text in ("-", "--") or _NUMBER.match(text):
            continue
        flag_span = document.span_of(token.start, token.end)
        if "=" in text:  # argparse splits `--precision=bf16` and `-p=bf16` alike
            word, raw = text.split("=", 1)
            equals = document.text.find("=", token.start, token.end)
            value_span = document.span_of(equals + 1, token.end) if equals != -1 else flag_span
            found.append(Option(word, _value(raw), value_span, flag_span))
            continue
        following = tokens[index + 1] if index + 1 < stop else None
        if following is None or (following.text.startswith("-") and not _NUMBER.match(following.text)):
            found.append(Option(text, None, flag_span, flag_span))
        else:
            found.append(Option(text, _value(following.text), document.span_of(following.start, following.end),
                                flag_span))
    return tuple(found)


_NUMBER = re.compile(r"^-\d")  # `-1`, `-0.5`: a value, not an option


def load(path: str, text: str, limits: Limits) -> Document:
    document = Document(path=path, text=text, format="shell", tree=None)
    launches = []
    for tokens in _logical_lines(text):
        found = _launch(document, tokens)
        if found is not None:
            launches.append(found)
    document.tree = launches
    return document
