"""Files that cannot be trainer configs, recognised before a full parse.

A tokenizer vocabulary (150,000 keys, one of which may well be "precision"), a lock file, a package.json or a
JSON data dump is never read by a trainer as its configuration, and parsing it costs more than the rest of a
repository. The decision uses the file's name and the first few kilobytes only.
"""

from __future__ import annotations

from precisionlint.core.patterns import lazy_pattern

# File names (lower-cased) that are always someone else's format.
NAMES = frozenset({
    "package.json", "package-lock.json", "npm-shrinkwrap.json", "composer.json", "composer.lock", "tsconfig.json",
    "jsconfig.json", "lerna.json", "bower.json", "renovate.json", ".eslintrc.json", ".prettierrc.json",
    "manifest.json", "pnpm-lock.yaml", "pnpm-workspace.yaml", "pixi.lock", "pipfile.lock", ".pre-commit-config.yaml",
    "vocab.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "merges.json", "vocabulary.json", "spiece.json", "codecov.yml", "codecov.yaml", "mkdocs.yml", "mkdocs.yaml",
    "dependabot.yml", "dependabot.yaml", "environment.yml", "environment.yaml", "conda.yaml", "meta.yaml",
})
_NAME_PATTERNS = lazy_pattern(globals(), "_NAME_PATTERNS",
    r"(-lock|\.lock|_lock)\.(json|ya?ml)$|(^|[._-])vocab[^/]*\.json$|^tokenizer[^/]*\.json$"
    r"|(^|[._-])template([._-][^/]*)?\.(json|ya?ml|toml)$"  # filled in by a script before anything reads it
)
# Above this size, a JSON file whose beginning is a flat mapping of scalars or an array of records is data.
DATA_SIZE = 100_000
_SAMPLE = 8192
# The `tokenizers` library writes these keys first, in this order (tokenizer.json saved under any name).
_TOKENIZER = lazy_pattern(
    globals(), "_TOKENIZER", rb'\{\s*"version"\s*:\s*"[^"]*"\s*,\s*"truncation"\s*:[\s\S]*?"added_tokens"\s*:\s*\[')
# Between two records of a list: `}, {`. A config lists a few objects; a data file (COCO or VQA annotations,
# `{"annotations": [{...}, {...}, ...]}`) has dozens in its first kilobytes.
_RECORD_BREAK = lazy_pattern(globals(), "_RECORD_BREAK", rb"\}\s*,\s*\{")
_RECORDS_IN_SAMPLE = 40
_FLAT_PAIR = lazy_pattern(
    globals(), "_FLAT_PAIR", rb'"(?:[^"\\]|\\.)*"\s*:\s*(?:-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|true|false|null)\s*,')


def reason(display: str, data: bytes, fmt: str) -> str | None:
    """Why the file is not a trainer config, or None when it may be one."""
    name = display.replace("\\", "/").rsplit("/", 1)[-1].lower()
    # Each of _NAME_PATTERNS' choices holds one of these words: a name without them is not compared with it (whose
    # compilation costs a tenth of the rest of a one-file check).
    if name in NAMES or (any(word in name for word in ("lock", "vocab", "tokenizer", "template"))
                         and _NAME_PATTERNS.search(name)):
        return f"{name}: a lock file, package manifest, tokenizer vocabulary or template, never a trainer config"
    if fmt == "json" and _json_lines(data):
        return "JSON Lines (one record per line): data, not a config"
    if fmt == "json" and len(data) > DATA_SIZE:
        head = data[:_SAMPLE].lstrip(b"\xef\xbb\xbf \t\r\n")
        if head.startswith(b"[") and head[1:].lstrip().startswith((b"{", b"[")):
            return "a large array of records: data, not a config"
        if _TOKENIZER.match(head):
            return "a Hugging Face tokenizers file (version, truncation, padding, added_tokens): not a config"
        if head.startswith(b"{"):
            body = head[1:]
            if b"{" not in body and b"[" not in body and len(_FLAT_PAIR.findall(body)) >= 50:
                return "a large flat mapping of scalars (a vocabulary or data): not a config"
            if len(_RECORD_BREAK.findall(head)) >= _RECORDS_IN_SAMPLE:
                return "a large object holding lists of records (annotations or other data): not a config"
    return None


def _json_lines(data: bytes) -> bool:
    """Two or more JSON objects, one per line, in a file named .json (a data set)."""
    head = data[:_SAMPLE].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{"):
        return False
    first, newline, rest = head.partition(b"\n")
    if not newline or not rest.lstrip().startswith(b"{") or not first.rstrip().endswith(b"}"):
        return False
    import json

    try:
        json.loads(first)
    except (ValueError, RecursionError):  # not one JSON value per line, or nested too deep to be a record
        return False
    return True


def not_a_config(display: str, data: bytes, fmt: str) -> bool:
    return fmt != "python" and reason(display, data, fmt) is not None
