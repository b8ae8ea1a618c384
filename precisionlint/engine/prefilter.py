"""The cheap text prefilter: whether a file's bytes can hold a finding at all, before they are decoded."""

from __future__ import annotations

from collections.abc import Sequence

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Format
from precisionlint.sources.decoding import wide_encoding

if TYPE_CHECKING:
    from precisionlint.checks import Rule


# The cheap text prefilter: a file that contains none of these byte strings cannot hold a finding of any
# rule, so it is neither decoded nor parsed. They are the words the rules and the frameworks declare (CONFIG_WORDS,
# PYTHON_WORDS next to each check and in each framework module), as the generated catalog copies them: a rule that
# can fire without one of the words it declares must declare the word (tests/test_engine.py checks every rule case
# against these lists, tests/test_gate_words.py each rule's cases against its own words).
def _declared(python: bool) -> tuple[bytes, ...]:
    from precisionlint.checks.catalog import FRAMEWORK_WORDS, RULE_WORDS

    words = {word for _, config, script, _, _ in RULE_WORDS for word in (script if python else config)}
    if python:  # a file whose tree a rule reads for a word holds the word
        words.update(word.encode() for *_, tree in RULE_WORDS for word in tree)
    words.update(word for _, config, script in FRAMEWORK_WORDS for word in (script if python else config))
    return tuple(sorted(words))


CONFIG_KEYWORDS: tuple[bytes, ...] = _declared(python=False)  # TOML, YAML, JSON and launch scripts
PYTHON_KEYWORDS: tuple[bytes, ...] = _declared(python=True)  # Python files and notebooks


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


def _searched(data: bytes) -> bytes:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff", b"\x00\x00"):
        wide = wide_encoding(data)
        if wide is not None:
            # UTF-16/32 (a byte-order mark): look for the words in the decoded text, so that a config saved by
            # a Windows tool is reported as unreadable (see decode_source) rather than silently skipped.
            return data.decode(wide, "replace").encode("utf-8", "replace")
    return data


def might_hold_findings(data: bytes, fmt: Format) -> bool:
    """Whether `data` holds any of the format's keywords (PYTHON_KEYWORDS or CONFIG_KEYWORDS)."""
    plan = _PYTHON_PLAN if fmt in ("python", "notebook") else _CONFIG_PLAN
    data = _searched(data)
    for gate, words in plan:
        if gate in data and (not words or any(word in data for word in words)):
            return True
    return False


# Each rule's own words with those of the frameworks it reads (READS; any-framework: every framework), per format
# kind: (config words, Python words). A rule none of whose words a file holds has nothing to report on it (the
# declarations' promise, which tests/test_gate_words.py holds every rule's cases to), so the engine neither imports
# nor runs it there: a one-file check of a training script imports the script rules it needs, not the settings
# rules of frameworks the script never names. A rule that declares no words (and reads no framework) runs on every
# file that is read.
_RULE_WORDS: dict[str, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {}


def _words_of(module: str, reads: tuple[str, ...]) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    from precisionlint.checks.catalog import FRAMEWORK_WORDS, RULE_WORDS

    config: set[bytes] = set()
    python: set[bytes] = set()
    for name, own_config, own_python, _, own_tree in RULE_WORDS:
        if name == module:
            config.update(own_config)
            python.update(own_python)
            python.update(word.encode() for word in own_tree)
    for framework, framework_config, framework_python in FRAMEWORK_WORDS:
        if framework in reads or "any-framework" in reads:
            config.update(framework_config)
            python.update(framework_python)
    return tuple(sorted(config)), tuple(sorted(python))


def rules_that_may_report(rules: Sequence[Rule], data: bytes, fmt: Format) -> list[Rule]:
    """The rules of `rules` that may report on a file of these bytes: those that declare no words, and those of
    which the file holds a word (for Python files and notebooks their Python words, for the other formats their
    config words)."""
    python = fmt in ("python", "notebook")
    data = _searched(data)
    # Rules share words (every rule that reads any framework has all the frameworks' words): each word is looked
    # for once per file, not once per rule that declares it (19 distinct Python words among 111 declarations).
    held: dict[bytes, bool] = {}
    kept = []
    for rule in rules:
        if rule.module is not None:
            words = _RULE_WORDS.get(rule.module)
            if words is None:
                words = _RULE_WORDS[rule.module] = _words_of(rule.module, rule.reads)
            wanted = words[1] if python else words[0]
            if wanted and not any(_holds(held, data, word) for word in wanted):
                continue
        kept.append(rule)
    return kept


def _holds(held: dict[bytes, bool], data: bytes, word: bytes) -> bool:
    found = held.get(word)
    if found is None:
        found = held[word] = word in data
    return found
