"""Readers of the files that declare a project's dependencies: each returns {package: VersionRange}.

pyproject.toml (PEP 621 `dependencies`, `optional-dependencies`, `requires-python`, `[dependency-groups]`,
Poetry's `[tool.poetry.*dependencies]`), requirements*.txt (with `-r` / `-c` includes), setup.py (literal
`install_requires` / `python_requires` read through `ast`, never executed), setup.cfg, conda's
environment.yml, and a Dockerfile's `pip install` commands in RUN instructions and the torch release of its
official PyTorch base image (`FROM pytorch/pytorch:1.10.0-cuda11.3-cudnn8-devel`; NVIDIA's containers of 2023
and before, `nvcr.io/nvidia/pytorch:23.10-py3`, as `torch<2.3`). `python` is recorded like a
package. Anything unreadable yields nothing: a broken pin file is not this tool's finding, and unknown stays
unknown.
"""

from __future__ import annotations

import os
import re

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import lazy_pattern
from precisionlint.project.versions import VersionRange, parse_specifier

if TYPE_CHECKING:
    from typing import Any

Pins = dict[str, VersionRange]

MAX_PIN_FILE = 2_000_000  # bytes; a larger "requirements" file is not one
_NAME = lazy_pattern(globals(), "_NAME", r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def normalize(name: str) -> str:
    if "_" not in name and "." not in name and "--" not in name:
        return name.lower()  # nothing to replace ("torch"): the pattern is not compiled at every start for it
    return re.sub(r"[-_.]+", "-", name).lower()


def _add(pins: Pins, name: str, found: VersionRange | None) -> None:
    if found is None:
        return
    key = normalize(name)
    pins[key] = pins[key].union(found) if key in pins else found


def read_text(path: str) -> str | None:
    from precisionlint.project.model import current

    unsaved = current().buffer_text(path)  # open in an editor (the language server): its text, saved or not
    if unsaved is not None:
        return unsaved if len(unsaved) <= MAX_PIN_FILE else None
    from precisionlint.core.bounded_read import read_text as read_bounded

    try:  # a regular file only, and never more than the limit: a link to /dev/zero or a FIFO says nothing
        return read_bounded(path, MAX_PIN_FILE, errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, ValueError):
        return None


def add_requirement(pins: Pins, line: str, source: str) -> None:
    """One PEP 508 requirement: `torch[extra]>=2.1,<2.5; python_version>'3.8'`. URLs and paths say nothing."""
    line = line.split(";", 1)[0].strip()
    if not line or "@" in line or "://" in line:
        return
    match = _NAME.match(line)
    if match is None:
        return
    spec = match.group(3).strip().strip("()")
    if spec:
        _add(pins, match.group(1), parse_specifier(spec, f"{source}: {match.group(1)}{spec}"))


def read_requirements(path: str, pins: Pins, seen: set[str] | None = None, display: str | None = None) -> None:
    seen = seen if seen is not None else set()
    real = os.path.realpath(path)
    if real in seen or len(seen) > 50:
        return
    seen.add(real)
    text = read_text(path)
    if text is None:
        return
    source = display or os.path.basename(path)
    for raw in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        include = re.match(r"^(?:-r|--requirement|-c|--constraint)\s*=?\s*(\S+)", line)
        if include:
            target = os.path.join(os.path.dirname(path), include.group(1))
            read_requirements(target, pins, seen, os.path.relpath(target, os.path.dirname(path)))
            continue
        if line.startswith("-"):
            continue  # -e ., --index-url, --find-links ...
        add_requirement(pins, line, source)


def _requirements(pins: Pins, lines: Any, source: str) -> None:
    if isinstance(lines, str):
        lines = lines.splitlines()
    if isinstance(lines, list):
        for line in lines:
            if isinstance(line, str):
                add_requirement(pins, line, source)


def read_pyproject(data: dict[str, Any], pins: Pins, source: str = "pyproject.toml") -> None:
    project = data.get("project")
    if isinstance(project, dict):
        _requirements(pins, project.get("dependencies"), source)
        extras = project.get("optional-dependencies")
        if isinstance(extras, dict):
            for lines in extras.values():
                _requirements(pins, lines, source)
        python = project.get("requires-python")
        if isinstance(python, str):
            _add(pins, "python", parse_specifier(python, f"{source}: requires-python {python}"))
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for lines in groups.values():
            _requirements(pins, lines, source)
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        group = poetry.get("group")
        if isinstance(group, dict):
            tables += [g.get("dependencies") for g in group.values() if isinstance(g, dict)]
        for table in tables:
            if isinstance(table, dict):
                for name, spec in table.items():
                    _poetry(pins, str(name), spec, source)


def _poetry(pins: Pins, name: str, spec: Any, source: str) -> None:
    if isinstance(spec, dict):
        spec = spec.get("version")
    elif isinstance(spec, list):  # multiple constraints by marker: the loosest reading of them all
        for item in spec:
            _poetry(pins, name, item, source)
        return
    if isinstance(spec, str):
        _add(pins, name, parse_specifier(spec, f"{source}: {name} = \"{spec}\""))


def read_setup_py(text: str, pins: Pins, source: str = "setup.py") -> None:
    """Literal `install_requires=[...]`, `extras_require={...}` and `python_requires=` of a setup() call, or
    a module-level name bound once to such a literal. Nothing is executed."""
    import ast  # only for a setup.py: most runs never read one

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if callee != "setup":
            continue
        for keyword in call.keywords:
            value = names.get(keyword.value.id, keyword.value) if isinstance(keyword.value, ast.Name) else keyword.value
            try:
                literal = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if keyword.arg == "install_requires":
                _requirements(pins, literal, source)
            elif keyword.arg == "extras_require" and isinstance(literal, dict):
                for lines in literal.values():
                    _requirements(pins, lines, source)
            elif keyword.arg == "python_requires" and isinstance(literal, str):
                _add(pins, "python", parse_specifier(literal, f"{source}: python_requires {literal}"))


def read_setup_cfg(text: str, pins: Pins, source: str = "setup.cfg") -> None:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if parser.has_section("options"):
        _requirements(pins, parser.get("options", "install_requires", fallback=""), source)
        python = parser.get("options", "python_requires", fallback="").strip()
        if python:
            _add(pins, "python", parse_specifier(python, f"{source}: python_requires {python}"))
    if parser.has_section("options.extras_require"):
        for _, lines in parser.items("options.extras_require"):
            _requirements(pins, lines, source)


_CONDA = lazy_pattern(globals(), "_CONDA", r"^\s*(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


def _simple_environment(text: str) -> list[Any] | None:
    """The `dependencies:` list of the block-style file conda writes (`- pytorch=1.13`, `- pip:` and its nested
    list), read line by line: checking a script should not pay for importing a YAML library. None when the
    file has any other shape (flow style, anchors, ...), which the YAML library then reads."""
    lines = [line.split(" #", 1)[0].rstrip() for line in text.splitlines()]
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip() == "dependencies:")
    except StopIteration:
        return None
    items: list[Any] = []
    pip: list[str] | None = None
    pip_indent = 0
    for line in lines[start + 1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            if stripped.startswith("-"):
                return None  # a list written at column 0 (`dependencies:` then `- pytorch=1.13`): YAML allows it
            break  # the next top-level key
        if not stripped.startswith("- "):
            return None
        value = stripped[2:].strip().strip("'\"")
        if any(ch in value for ch in "[]{}&*|>"):
            return None
        if value == "pip:":
            pip, pip_indent = [], indent
            items.append({"pip": pip})
        elif pip is not None and indent > pip_indent:
            pip.append(value)
        else:
            pip = None
            items.append(value)
    return items


def read_environment_yml(text: str, pins: Pins, source: str = "environment.yml") -> None:
    """conda's `dependencies:` (`pytorch=1.13`, `pytorch-lightning==1.9.5`, `python=3.10`) and its `pip:` list.
    A file without that key (a config named like an environment file, `env.yaml`) is not parsed at all."""
    if "dependencies" not in text:
        return
    dependencies: Any = _simple_environment(text)
    if dependencies is None:
        try:
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(text)
        except Exception:  # any YAML error: an unreadable environment file declares nothing we can use
            return
        dependencies = data.get("dependencies") if isinstance(data, dict) else None
    if not isinstance(dependencies, list):
        return
    for item in dependencies:
        if isinstance(item, dict):
            _requirements(pins, item.get("pip"), source)
            continue
        if not isinstance(item, str):
            continue
        match = _CONDA.match(item)
        if match is None:
            continue
        spec = match.group(2).strip()
        build = spec.split("=")
        if spec.startswith("=") and not spec.startswith("=="):
            spec = "=" + spec[1:].split("=", 1)[0]  # name=version=build: the build says nothing here
        elif len(build) == 1 and spec and spec[0].isdigit():
            spec = spec.split()[0]
        name = "torch" if normalize(match.group(1)) == "pytorch" else match.group(1)
        if spec:
            _add(pins, name, parse_specifier(spec, f"{source}: {item.strip()}", conda=True))


def read_target_versions(table: Any, pins: Pins, source: str) -> None:
    """`[tool.precisionlint] target-versions = { torch = "2.4", lightning = ">=2.1" }`: a bare version means
    that release series (2.4 -> 2.4.*); these replace whatever the pin files say."""
    if not isinstance(table, dict):
        return
    for name, spec in table.items():
        if not isinstance(spec, str):
            continue
        text = spec.strip()
        conda = bool(re.fullmatch(r"\d+(\.\d+)*", text))
        found = parse_specifier(text, f"{source}: target-versions {name} = \"{spec}\"", conda=conda)
        if found is not None:
            pins[normalize(str(name))] = found


# `pip install` options that take a value (the value is not a requirement).
_PIP_VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--src", "--platform", "--python-version",
    "--implementation", "--abi", "--trusted-host", "--upgrade-strategy", "--progress-bar", "--cache-dir",
    "--log", "--report", "--only-binary", "--no-binary", "--config-settings", "-C", "--global-option",
})
_SHELL_SEPARATOR = lazy_pattern(globals(), "_SHELL_SEPARATOR", r"&&|\|\||[;|]")
_PIP_INSTALL = lazy_pattern(
    globals(), "_PIP_INSTALL",
    r"^(?:\S*/)?(?:(?:python3?(?:\.\d+)?\s+-m\s+)?pip3?(?:\.\d+)?|uv\s+pip)\s+install\b(.*)$")


def read_dockerfile(text: str, pins: Pins, source: str = "Dockerfile") -> None:
    """The requirements of each `pip install` in a RUN instruction (`RUN pip install torch==2.1.2 \\`
    `pytorch-lightning==1.8.6`): the image's environment is declared there as much as in a requirements file.
    Words holding a shell variable (`torch==$TORCH`) or a path say nothing."""
    import shlex

    logical: list[str] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and pending:
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    if pending:
        logical.append(pending)
    arguments: dict[str, str] = {}
    base: tuple[str, str] | None = None  # (image, torch release) of the last stage (the stage that runs)
    installed = False  # a pip install in that stage names torch: what it installs is what runs
    stages: dict[str, tuple[tuple[str, str] | None, bool]] = {}  # `FROM image AS name`: what a later FROM inherits
    stage: str | None = None
    for instruction in logical:
        keyword, _, rest = instruction.partition(" ")
        if keyword.upper() == "ARG":
            name, equals, default = rest.strip().partition("=")
            if equals:
                arguments[name.strip()] = default.strip().strip("'\"")
            continue
        if keyword.upper() == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]  # --platform=...
            if words and words[0].lower() in stages:  # `FROM builder`: an earlier stage, with what it installed
                base, installed = stages[words[0].lower()]
            else:
                base, installed = _base_image_torch(words, arguments), False
            stage = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
            if stage is not None:
                stages[stage] = (base, installed)
            continue
        if keyword.upper() != "RUN":
            continue
        # `conda install pytorch=2.4`, `pip install torch --index-url ...`, `pip install -r requirements.txt`
        # naming torch in a file: the base image's torch may be replaced, by a version read here or not.
        installed = installed or _REINSTALLS_TORCH.search(rest) is not None
        for command in _SHELL_SEPARATOR.split(rest):
            match = _PIP_INSTALL.match(command.strip())
            if match is None:
                continue
            try:
                words = shlex.split(match.group(1))
            except ValueError:  # an unbalanced quote: say nothing rather than guess
                continue
            skip_value = False
            for word in words:
                if skip_value:
                    skip_value = False
                    continue
                if word.startswith("-"):
                    skip_value = word in _PIP_VALUE_OPTIONS
                    continue
                if "$" in word or "/" in word or word.startswith("."):
                    continue
                installed = installed or normalize(_NAME.sub(r"\1", word)) == "torch"
                add_requirement(pins, word, source)
        if stage is not None:
            stages[stage] = (base, installed)
    if base is not None and not installed:
        image, specifier = base
        _add(pins, "torch", parse_specifier(specifier, f"{source} FROM {image}: torch{specifier}"))


_REINSTALLS_TORCH = lazy_pattern(
    globals(), "_REINSTALLS_TORCH", r"\b(?:conda|mamba|micromamba)\s+install\b[^;&|]*\bpytorch\b"
                                    r"|\binstall\b[^;&|]*(?<![\w.-])(?:py)?torch(?![\w.-])")
# The official PyTorch images are tagged with the torch release they hold: `pytorch/pytorch:1.10.0-cuda11.3-
# cudnn8-devel`, `pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime`. NVIDIA's monthly containers
# (`nvcr.io/nvidia/pytorch:YY.MM-py3`) ship a pre-release build whose API is not that of any release, so they
# pin no version; but every container of 2023 or before holds a build from before the 2.3 development cycle
# (23.12 and 24.01: 2.2.0a0; 23.10: 2.1.0a0; 22.12: 1.14.0a0, per NVIDIA's framework support matrix), which is
# declared as `<2.3`: nothing of 2.3 or later is in it (NVIDIA DeepLearningExamples builds every model on one).
_PYTORCH_IMAGE = lazy_pattern(
    globals(), "_PYTORCH_IMAGE", r"^(?:docker\.io/)?pytorch/pytorch:(\d+\.\d+(?:\.\d+)?)(?:-|$)")
_NGC_IMAGE = lazy_pattern(globals(), "_NGC_IMAGE", r"^nvcr\.io/nvidia/pytorch:(\d\d)\.(\d\d)(?:\.\d+)?-py3(?:-|$)")
_NGC_BEFORE_2_3 = 23  # the last year whose containers all hold a build older than torch 2.3


def _base_image_torch(words: list[str], arguments: dict[str, str]) -> tuple[str, str] | None:
    """(image, torch specifier) of `FROM image [AS name]`, `${ARG}` / `$ARG` taken from the ARG defaults above."""
    if not words:
        return None
    image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: arguments.get(m.group(1) or m.group(2), "$"), words[0])
    match = _PYTORCH_IMAGE.match(image)
    if match:
        return (image, f"=={match.group(1)}")
    ngc = _NGC_IMAGE.match(image)
    if ngc and int(ngc.group(1)) <= _NGC_BEFORE_2_3:
        return (image, "<2.3")
    return None



# A `[[package]]` table of uv.lock and poetry.lock: its name, then its version, each on a line of its own.
_LOCKED = lazy_pattern(
    globals(), "_LOCKED", r'^\[\[package\]\]\s*\nname\s*=\s*"([^"\n]+)"\s*\nversion\s*=\s*"([^"\n]+)"', re.MULTILINE)


def read_lock(text: str, pins: Pins, source: str) -> None:
    """The exact versions of uv.lock and poetry.lock (`[[package]]`, `name = "torch"`, `version = "2.5.1"`),
    read with a pattern rather than a TOML parser: a lock file runs to megabytes, and only the name and
    version of each package matter here. A package locked twice (uv forks by platform) keeps both."""
    for match in _LOCKED.finditer(text):
        name, version = match.group(1), match.group(2)
        _add(pins, name, parse_specifier(f"=={version}", f"{source}: {name}=={version}"))


def read_pixi(data: dict[str, Any], pins: Pins, source: str = "pixi.toml") -> None:
    """pixi's `[dependencies]` (conda match specs: `pytorch = ">=2.1,<2.5"`, `"2.4.*"`) and
    `[pypi-dependencies]`, of the workspace and of each `[feature.NAME]`; a table's `version` where the
    spec is one (`torch = { version = ">=2.1", index = ... }`)."""
    tables: list[Any] = [data]
    features = data.get("feature")
    if isinstance(features, dict):
        tables += [feature for feature in features.values() if isinstance(feature, dict)]
    for table in tables:
        for key in ("dependencies", "pypi-dependencies"):
            entries = table.get(key)
            if not isinstance(entries, dict):
                continue
            for name, spec in entries.items():
                if isinstance(spec, dict):
                    spec = spec.get("version")
                if not isinstance(spec, str) or not spec.strip() or spec.strip() == "*":
                    continue
                package = "torch" if normalize(str(name)) == "pytorch" else str(name)
                conda = key == "dependencies" and bool(re.fullmatch(r"[\d.*]+", spec.strip()))
                _add(pins, package, parse_specifier(spec, f"{source}: {name} = \"{spec}\"", conda=conda))
