"""Configuration: discovery and validation.

For each checked file, the nearest of these, searched from the file's directory upward, applies (as in ruff):
`.precisionlint.toml`, `precisionlint.toml` (keys at top level) or a `pyproject.toml` with a
`[tool.precisionlint]` table. `--config FILE` names one file for every checked file instead.

    [tool.precisionlint]
    select = ["ALL"]                 # rule names, codes or code prefixes (default: every rule that is on by default)
    extend-select = ["unused-suppression"]
    ignore = ["PL209"]
    extend-ignore = []
    per-file-ignores = { "tests/**" = ["missing-grad-scaler"] }   # gitignore-style globs
    exclude = ["fixtures/", "*.generated.yaml"]
    fail-on = "warning"              # error | warning | info
    gpus = ["A100"]                  # target GPUs for hardware rules
    max-file-size = 100_000_000      # bytes
    max-nodes = 5_000_000            # tree nodes walked per file (YAML alias bombs)
    max-depth = 200                  # nesting levels of a config file
    max-parse-time = 60              # CPU seconds to parse and check one file (0: no limit)
    max-memory = 2_000_000_000       # bytes one file's analysis may use (estimated before parsing)
    respect-gitignore = true
    cache-dir = ".precisionlint_cache"   # results kept between runs, relative to this file's folder
    target-versions = { torch = "2.4", lightning = "2.2" }   # versions to assume where nothing is pinned

Unknown keys, wrong types, a key spelled two ways (`fail-on` and `fail_on`) and bad globs are errors that name
the file and the key (exit code 2).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Severity
from precisionlint.sources import DEFAULT_LIMITS

if TYPE_CHECKING:
    from typing import Any

# The file names searched in each directory, in order of precedence (as ruff: the dedicated files first).
CONFIG_NAMES = (".precisionlint.toml", "precisionlint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration problem: the CLI prints it on one line and exits with code 2."""


class UsageError(Exception):
    """A mistake in the command line or its values (an unknown rule or GPU); the CLI shows it as click's usage
    error (exit 2)."""


class Config:
    """The validated settings. A plain class, like the engine's other per-run objects: `check` starts on every
    commit, and the dataclasses module costs it more than every class it would save."""

    def __init__(
        self,
        path: Path | None = None,  # the file it came from
        root: Path | None = None,  # patterns are relative to this directory (default: the current one)
        select: list[str] | None = None,
        ignore: list[str] | None = None,
        per_file_ignores: dict[str, list[str]] | None = None,
        exclude: list[str] | None = None,
        fail_on: Severity = Severity.WARNING,
        gpus: list[str] | None = None,
        max_file_size: int = DEFAULT_LIMITS.max_file_size,
        max_nodes: int = DEFAULT_LIMITS.max_nodes,
        max_depth: int = DEFAULT_LIMITS.max_depth,
        max_parse_time: float = DEFAULT_LIMITS.max_parse_time,
        max_memory: int = DEFAULT_LIMITS.max_memory,
        respect_gitignore: bool = True,
        extend_select: list[str] | None = None,
        extend_ignore: list[str] | None = None,
        custom_gpus: dict[str, dict[str, Any]] | None = None,
        cache_dir: str | None = None,
    ) -> None:
        self.path = path
        self.root = root if root is not None else Path.cwd()
        self.select = select  # None: the default selection (every rule that is on by default)
        self.ignore = ignore if ignore is not None else []
        self.per_file_ignores = per_file_ignores if per_file_ignores is not None else {}
        self.exclude = exclude if exclude is not None else []
        self.fail_on = fail_on
        self.gpus = gpus if gpus is not None else []
        self.max_file_size = max_file_size
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.max_parse_time = max_parse_time
        self.max_memory = max_memory
        self.respect_gitignore = respect_gitignore
        self.extend_select = extend_select if extend_select is not None else []
        self.extend_ignore = extend_ignore if extend_ignore is not None else []
        self.custom_gpus = custom_gpus if custom_gpus is not None else {}
        self.cache_dir = cache_dir
        # Read by the project model from the pyproject.toml it belongs to (precisionlint.project); kept here
        # so that a wrong value is a configuration error like any other key's.
        self.target_versions: dict[str, str] = {}
        self.set_keys: list[str] = []  # the keys the file gave, in its spelling (for --show-settings)
        # extend-exclude: added to exclude once the table is read. Both add to the built-in skips (.git, virtual
        # environments, ...), which always hold; the two names exist because ruff users write either.
        self.extend_exclude: list[str] = []

    @property
    def label(self) -> str:
        """How messages name this configuration: its file, or "the defaults"."""
        return str(self.path) if self.path is not None else "(defaults: no configuration file)"


def _str_list(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of strings")
    return list(value)


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"'{key}' must be a positive integer")
    return value


def _seconds(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 86_400:
        raise ConfigError(f"'{key}' must be a number of seconds from 0 (no limit) to 86400")
    return float(value)


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"'{key}' must be true or false")
    return value


def _severity(key: str, value: Any) -> Severity:
    if not isinstance(value, str):
        raise ConfigError(f"'{key}' must be one of \"error\", \"warning\", \"info\"")
    try:
        return Severity.parse(value)
    except ValueError:
        raise ConfigError(f"'{key}' must be one of \"error\", \"warning\", \"info\", not {value!r}") from None


def _path(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"'{key}' must be a path (a non-empty string)")
    return value


def _target_versions(key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"'{key}' must be a table of package = \"version\" (e.g. {{ torch = \"2.4\" }})")
    from precisionlint.project.versions import parse_specifier

    for name, spec in value.items():
        if parse_specifier(spec) is None:
            raise ConfigError(f"'{key}.{name}' is not a version or version range: {spec!r}")
    return {str(name): spec for name, spec in value.items()}


def _globs(key: str, value: Any) -> list[str]:
    patterns = _str_list(key, value)
    for pattern in patterns:
        problem = glob_problem(pattern)
        if problem:
            raise ConfigError(f"'{key}': invalid glob {pattern!r}: {problem}")
    return patterns


def _per_file(key: str, value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise ConfigError(f"'{key}' must be a table of glob = [rules]")
    for pattern in value:
        problem = glob_problem(str(pattern))
        if problem:
            raise ConfigError(f"'{key}': invalid glob {str(pattern)!r}: {problem}")
    return {str(pattern): _str_list(f"{key}.{pattern}", rules) for pattern, rules in value.items()}


def _custom_gpus(key: str, value: Any) -> dict[str, dict[str, Any]]:
    """`[tool.precisionlint.custom-gpus]`: cards the built-in table lacks, by compute capability (or gfx ISA)
    and optional datasheet peaks. Validated here; hardware/targets.py builds the cards."""
    if not isinstance(value, dict):
        raise ConfigError(f"'{key}' must be a table of name = {{ compute-capability = \"8.9\", ... }}")
    known = {"compute-capability", "gfx-arch", "bf16", "tf32", "fp8", "peak-tflops", "memory-gb"}
    cards: dict[str, dict[str, Any]] = {}
    for name, spec in value.items():
        where = f"{key}.{name}"
        if not isinstance(spec, dict):
            raise ConfigError(f"'{where}' must be a table")
        spec = {str(k).replace("_", "-"): v for k, v in spec.items()}
        for field in spec:
            if field not in known:
                raise ConfigError(f"unknown key '{where}.{field}' (known: {', '.join(sorted(known))})")
        cc = spec.get("compute-capability")
        gfx = spec.get("gfx-arch")
        if (cc is None) == (gfx is None):
            raise ConfigError(f"'{where}' needs exactly one of compute-capability (NVIDIA) or gfx-arch (AMD)")
        if cc is not None:
            text = str(cc)
            if not isinstance(cc, (str, float)) or not re.fullmatch(r"\d{1,2}\.\d", text):
                raise ConfigError(f"'{where}.compute-capability' must be a string such as \"8.9\"")
        if gfx is not None and (not isinstance(gfx, str) or not re.fullmatch(r"gfx[0-9a-f]{3,4}", gfx.lower())):
            raise ConfigError(f"'{where}.gfx-arch' must be a gfx ISA name such as \"gfx942\"")
        for flag in ("bf16", "tf32", "fp8"):
            if flag in spec and not isinstance(spec[flag], bool):
                raise ConfigError(f"'{where}.{flag}' must be true or false")
        peaks = spec.get("peak-tflops", {})
        if not isinstance(peaks, dict) or not all(
            k in ("fp32", "tf32", "fp16", "bf16", "fp8") and isinstance(v, (int, float)) and not isinstance(v, bool)
            and v > 0 for k, v in peaks.items()
        ):
            raise ConfigError(f"'{where}.peak-tflops' must map fp32/tf32/fp16/bf16/fp8 to positive numbers")
        memory = spec.get("memory-gb")
        if memory is not None and (isinstance(memory, bool) or not isinstance(memory, (int, float)) or memory <= 0):
            raise ConfigError(f"'{where}.memory-gb' must be a positive number")
        cards[str(name)] = spec
    return cards


_KEYS = {
    "select": ("select", _str_list),
    "extend-select": ("extend_select", _str_list),
    "ignore": ("ignore", _str_list),
    "extend-ignore": ("extend_ignore", _str_list),
    "per-file-ignores": ("per_file_ignores", _per_file),
    "exclude": ("exclude", _globs),
    "extend-exclude": ("extend_exclude", _globs),
    "fail-on": ("fail_on", _severity),
    "gpus": ("gpus", _str_list),
    "custom-gpus": ("custom_gpus", _custom_gpus),
    "max-file-size": ("max_file_size", _positive_int),
    "max-nodes": ("max_nodes", _positive_int),
    "max-depth": ("max_depth", _positive_int),
    "max-parse-time": ("max_parse_time", _seconds),
    "max-memory": ("max_memory", _positive_int),
    "respect-gitignore": ("respect_gitignore", _bool),
    "cache-dir": ("cache_dir", _path),
    "target-versions": ("target_versions", _target_versions),
}


def _table_name(path: Path | None) -> str:
    return "[tool.precisionlint]" if path is None or path.name == "pyproject.toml" else "configuration"


def parse_table(table: Any, path: Path | None) -> Config:
    where = f"{path}: " if path else ""
    table_name = _table_name(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where}{table_name} must be a table")
    config = Config(path=path, root=path.parent if path else Path.cwd())
    seen: dict[str, str] = {}
    for key, value in table.items():
        spelled = key.replace("_", "-")
        if spelled not in _KEYS:
            import difflib  # only for the message

            close = difflib.get_close_matches(spelled, list(_KEYS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(_KEYS)})"
            raise ConfigError(f"{where}unknown key '{key}' in {table_name}{hint}")
        if spelled in seen:
            # TOML forbids a key twice, but not `fail-on` beside `fail_on`: which one wins would be a guess.
            raise ConfigError(f"{where}{table_name} gives '{seen[spelled]}' and '{key}': they are the same "
                              "setting; keep one")
        seen[spelled] = key
        attribute, convert = _KEYS[spelled]
        try:
            setattr(config, attribute, convert(key, value))
        except ConfigError as exc:
            raise ConfigError(f"{where}{table_name} {exc}") from None
        config.set_keys.append(spelled)
    config.exclude = [*config.exclude, *config.extend_exclude]
    return config


# A configuration is a few kilobytes; this only stops a link to /dev/zero from being read without end.
MAX_CONFIG_FILE = 10_000_000


def _read_config_text(path: Path) -> str:
    """A configuration's text: a regular file only (a FIFO would block), bounded, UTF-8, newlines as Python's
    text mode gives them."""
    from precisionlint.core.bounded_read import read_text

    return read_text(path, MAX_CONFIG_FILE).replace("\r\n", "\n").replace("\r", "\n")


def _read_toml(path: Path) -> dict[str, Any]:
    text = _read_config_text(path)
    try:
        import tomllib  # Python 3.11+: faster than tomlkit, and enough for reading

        return tomllib.loads(text)
    except ImportError:
        import tomlkit

        return tomlkit.parse(text).unwrap()


def _load_file(path: Path, shown: str) -> Config:
    try:
        data = _read_toml(path)
    except (OSError, UnicodeDecodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{shown}: cannot read configuration: {detail}") from None
    except Exception as exc:  # tomllib.TOMLDecodeError / tomlkit ParseError
        raise ConfigError(f"{shown}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{shown}: 'tool' must be a table")
        table = tool.get("precisionlint", {})
    else:  # a dedicated precisionlint.toml holds the keys at top level ([tool.precisionlint] is accepted too)
        tool = data.get("tool")
        table = tool["precisionlint"] if isinstance(tool, dict) and "precisionlint" in tool else data
    return parse_table(table, path.resolve())


def load_config(explicit: str | None = None, start: Path | None = None) -> Config:
    """The explicit --config file, else the configuration nearest to `start` (default: the current directory)."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{explicit}: configuration file not found")
        return _load_file(path, explicit)
    found = ConfigFinder().for_directory(start or Path.cwd())
    return found if found is not None else Config(root=Path(os.getcwd()))


class ConfigFinder:
    """Finds the nearest configuration of each directory, reading each file once per run.

    Folders are handled as strings, and a folder's real path is its parent's real path and its name unless it is
    a symbolic link itself: a warm run over a large tree spends its time here otherwise (pathlib, and a system
    call per path component to resolve each folder)."""

    def __init__(self) -> None:
        self._by_directory: dict[str, Config | None] = {}  # by real path
        self._by_folder_name: dict[str, Config | None] = {}  # as a file's folder is spelled, before resolving
        self._real: dict[str, str] = {}

    def for_directory(self, directory: Path) -> Config | None:
        return self._for_folder(os.path.abspath(directory))

    def _for_folder(self, absolute: str) -> Config | None:
        try:
            start = self._real_path(absolute)
        except (OSError, ValueError, RecursionError):
            return None
        walked: list[str] = []
        found: Config | None = None
        folder = start
        while True:
            if folder in self._by_directory:
                found = self._by_directory[folder]
                break
            walked.append(folder)
            found = self._here(folder)
            if found is not None or os.path.exists(os.path.join(folder, ".git")):
                break  # as before: the search ends at the repository's root
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for key in walked:
            self._by_directory[key] = found
        return found

    def _real_path(self, folder: str) -> str:
        """os.path.realpath of an absolute, normalised folder, from its parent's (memoised)."""
        found = self._real.get(folder)
        if found is None:
            parent = os.path.dirname(folder)
            if parent == folder or os.path.islink(folder):
                found = os.path.realpath(folder)
            else:
                found = os.path.join(self._real_path(parent), os.path.basename(folder))
            self._real[folder] = found
        return found

    def remember(self, config: Config) -> None:
        """Use this already loaded configuration for its own directory."""
        if config.path is not None:
            self._by_directory[str(config.path.parent)] = config

    def for_file(self, fs_path: str) -> Config | None:
        # Once per folder, not per file, and looked up by the folder as the path spells it (one run has one
        # working directory).
        spelled = os.path.dirname(fs_path)
        try:
            return self._by_folder_name[spelled]
        except KeyError:
            found = self._by_folder_name[spelled] = self._for_folder(os.path.dirname(os.path.abspath(fs_path)))
            return found

    @staticmethod
    def _here(folder: str) -> Config | None:
        for name in CONFIG_NAMES:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            candidate = Path(path)
            if name == "pyproject.toml":
                try:
                    text = _read_config_text(candidate)
                except (OSError, UnicodeDecodeError):
                    continue
                if "precisionlint" not in text:  # cheap: most pyproject files have no such table
                    continue
                try:
                    data = _read_toml(candidate)
                except Exception as exc:
                    raise ConfigError(f"{candidate}: invalid TOML: {exc}") from None
                tool = data.get("tool")
                if not isinstance(tool, dict) or "precisionlint" not in tool:
                    continue
            return _load_file(candidate, str(candidate))
        return None


# --- globs ------------------------------------------------------------------------------------------------------


def glob_problem(pattern: str) -> str | None:
    """Why a glob is invalid, or None. Accepted: gitignore-style globs (`*`, `?`, `[...]`, `**` as a whole
    path component)."""
    if not pattern.strip():
        return "empty pattern"
    depth = 0
    for char in pattern:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
    if depth:
        return "unclosed '['"
    for part in pattern.strip("/").split("/"):
        if "**" in part and part != "**":
            return "'**' must be a whole path component (as in 'a/**/b' or '**/*.yaml')"
    return None


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    cached = _GLOB_CACHE.get(pattern)
    if cached is not None:
        return cached
    bare = pattern.rstrip("/")
    anchored = "/" in bare
    bare = bare.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(bare):
        if bare.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif bare.startswith("/**", i) and i + 3 == len(bare):
            out.append("/.*")
            i += 3
        elif bare.startswith("**", i):
            out.append(".*")
            i += 2
        elif bare[i] == "*":
            out.append("[^/]*")
            i += 1
        elif bare[i] == "?":
            out.append("[^/]")
            i += 1
        elif bare[i] == "[":
            end = bare.index("]", i + 1)
            body = bare[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(bare[i]))
            i += 1
    # A pattern without a slash matches at any depth; either kind also matches everything under a directory.
    prefix = "" if anchored else "(?:.*/)?"
    compiled = re.compile(f"^{prefix}{''.join(out)}(?:/.*)?$")
    _GLOB_CACHE[pattern] = compiled
    return compiled


def glob_matches(relative: str, pattern: str) -> bool:
    """gitignore-style matching of a path relative to the configuration's directory: `**/*.yaml` matches
    `a.yaml` at the root too, `*.yaml` matches at any depth, `tests/` everything under tests."""
    try:
        return _glob_regex(pattern).match(relative) is not None
    except (ValueError, re.error):
        return False
