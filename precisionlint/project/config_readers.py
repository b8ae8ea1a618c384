"""Who reads a config: the project's scripts that load it and hand a section of it to a framework call.

A config's reader is guessed from its keys unless code of the project says who reads it. This module reads the
project's Python files (through `ast`, never executed) for the loads of a config file whose path it can resolve
and for what each load hands on:

- `yaml.safe_load(open("configs/train.yaml"))`, `yaml.load(f, ...)` with `with open(PATH) as f`, `json.load`,
  `OmegaConf.load(PATH)`; PATH a literal, a name bound once to one, `os.path.join` / `Path(...) / ...` of them,
  or an argparse option's default (`parser.add_argument("--config", default="configs/train.yaml")`, read as
  `args.config`);
- Hydra's `@hydra.main(config_path=..., config_name=...)` (and NeMo's `@hydra_runner`, which takes the same):
  the decorated function's parameter is the config;
- `HfArgumentParser((..., TrainingArguments)).parse_yaml_file(PATH)` / `parse_json_file(PATH)`: the whole file
  is TrainingArguments';

then, in the same function (or module), a framework call of frameworks.python_calls.CALLS that takes a section
as its keyword arguments (`Trainer(**cfg["trainer"])`, `Trainer(**cfg.trainer)`, `TrainingArguments(**cfg)`)
or one key of it (`Trainer(precision=cfg["train"]["precision"])`), directly or through a name bound to the
section (`tcfg = cfg["trainer"]`). Such a section's reader is certain. A key the script writes before the call
(`cfg["trainer"]["precision"] = args.precision`) is not what the framework reads: it is left out.

A path relative to the script resolves from the script's folder, then the project root (the working directory a
launcher at the root gives), as project.Project.resolve does.
"""

from __future__ import annotations

import os

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.project.reads import SKIPPED_FOLDERS, Read, project_files

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python
    from typing import Any, NamedTuple

    from precisionlint.core.model import Document
    from precisionlint.project import Project
    from precisionlint.project.model import ProjectModel
else:
    from precisionlint.core.light_typing import NamedTuple


# Words one of the loads above needs in a script's text: a script without any is not parsed.
LOAD_WORDS = ("safe_load", "yaml.load", "full_load", "json.load", "OmegaConf.load", "hydra.main", "hydra_runner",
              "parse_yaml_file", "parse_json_file", "default_config_files")
_YAML_LOADS = frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "yaml.unsafe_load", "json.load",
                         "omegaconf.OmegaConf.load", "omegaconf.omegaconf.OmegaConf.load"})
_MAX_SCRIPTS = 2000  # Python files of one project read for loads
_MAX_SCRIPT_BYTES = 1_000_000
_SKIPPED_FOLDERS = SKIPPED_FOLDERS


def readers(project: Project, config_path: str) -> list[Read]:
    """The reads of one config file (by its path on disk) by the scripts of its project."""
    model = project.model
    index = model.config_reads.get(project.root)  # one per project root: each folder has its own Project
    if index is None:
        scripts = project_files(project.root, (".py",), _MAX_SCRIPTS, _SKIPPED_FOLDERS)
        index = model.config_reads[project.root] = _index(project, scripts)
    real = os.path.realpath(config_path)
    found = list(index.get(real, []))
    from precisionlint.project.launch_configs import launch_reads, launch_root

    top = launch_root(project, real)
    if top is not None:  # the configs the project's launch lines name (accelerate launch, LightningCLI)
        launched = model.config_reads_launched.get(top)
        if launched is None:
            launched = model.config_reads_launched[top] = launch_reads(project, top)
        found += launched.get(real, [])
    # The scripts of the config's own folder and the folders above it (a Hydra script beside its conf/), read
    # even where the project holds more scripts than the walk reads (NeMo's examples).
    folder = os.path.dirname(os.path.abspath(config_path))
    root = os.path.abspath(project.root)
    for _ in range(16):
        near = model.config_reads_near.get(folder)
        if near is None:
            near = model.config_reads_near[folder] = _index(project, _scripts_in(folder))
        found += [read for read in near.get(real, []) if read not in found]
        if folder == root or os.path.dirname(folder) == folder or not folder.startswith(root):
            break
        folder = os.path.dirname(folder)
    return found


def _scripts_in(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entry.path for entry in entries if entry.name.endswith(".py") and entry.is_file())
    except OSError:
        return []


def _index(project: Project, scripts: list[str]) -> dict[str, list[Read]]:
    found: dict[str, list[Read]] = {}
    model = project.model
    ahead = model.load_scripts  # folder -> its scripts that hold a load word, for the folders scanned ahead
    # a script's reads as found before (for another index, or by the first worker before the others forked),
    # not for the language server, whose editor buffers change under the same path
    on_disk = model.open_buffer is None
    known = model.script_reads if on_disk else None
    for path in scripts:
        holding = ahead.get(os.path.dirname(path)) if ahead else None
        if holding is not None and path not in holding:
            continue  # scanned before the workers forked: too large, unreadable, or without a load word
        before = known.get(path) if known is not None else None
        if before is not None and all(project.resolve(base, literal) == resolved
                                      for base, literal, resolved in before[0]):
            reads = before[1]  # each path it resolved resolves alike for this project: the same reads
        else:
            recorder = _Resolutions(project)
            made = _script_reads(recorder, path, holding is not None, on_disk)
            if made is None:
                continue
            if known is not None and recorder.only_resolved:
                known[path] = (tuple(recorder.resolved), made)
            reads = made
        for read in reads:
            found.setdefault(read.config, []).append(read)
    return found


def _script_reads(project: Any, path: str, holds_word: bool, on_disk: bool) -> list[Read] | None:
    """The reads of one script that may load a config (None: it cannot be read, holds no load word, or does not
    parse); `holds_word`: the first worker's scan found a load word in it; `on_disk`: the model reads no editor
    buffers (a run, not the language server)."""
    if holds_word:
        from precisionlint.project.pins import read_text

        text = read_text(path)
    else:
        text = _loading_text(path, on_disk)
    if text is None:
        return None
    import ast  # here: most projects' scripts load no config, and a config's check parses no Python

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    script = ScriptReads(project, path, tree)
    reads = script.reads()
    if "default_config_files" in text:
        from precisionlint.project.lightning_cli import default_config_reads

        reads += default_config_reads(project, path, tree, script.shown)
    return reads


class _Resolutions:
    """Stands for a project while a script's reads are found: what they take of the project is the file each
    path written in the script resolves to (Project.resolve, which looks in the folders of the project's chain),
    recorded, so that another project of the same files reuses the reads where each path resolves alike."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.resolved: list[tuple[str, str, str | None]] = []
        self.only_resolved = True  # nothing but resolve was asked of the project

    def resolve(self, base_file: str, literal: str) -> str | None:
        found = self.project.resolve(base_file, literal)
        self.resolved.append((base_file, literal, found))
        return found

    def __getattr__(self, name: str) -> Any:
        self.only_resolved = False  # something else decided the reads: they are not reused
        return getattr(self.project, name)


# The load words as bytes, in groups that each hold a fragment every word of the group contains: a script is
# searched for the five fragments and for a group's words only where its fragment is (each of the ten words
# searched in every script of a project was a third of the index's CPU). The words are ASCII, and an ASCII byte
# decodes to itself whatever surrounds it (UTF-8 with replacement, a BOM dropped, line ends made "\n"): a word
# is in the bytes exactly when it is in the text pins.read_text gives.
_LOAD_GROUPS = tuple((fragment.encode(), tuple(word.encode() for word in LOAD_WORDS if fragment in word))
                     for fragment in ("_load", ".load", "hydra", "parse_", "default_config_files"))


def _holds_load_word(data: bytes) -> bool:
    return any(fragment in data and any(word in data for word in words) for fragment, words in _LOAD_GROUPS)


def _may_load(path: str) -> bool:
    """Whether the script at `path` is one _index parses: within the size limit, readable, holding a load word
    (read from the disk: not for the language server, whose editor buffers read_text reads)."""
    from precisionlint.core.bounded_read import read_bytes
    from precisionlint.project.pins import MAX_PIN_FILE

    try:
        if os.path.getsize(path) > _MAX_SCRIPT_BYTES:
            return False
        data = read_bytes(path, MAX_PIN_FILE)
    except (OSError, ValueError):
        return False
    return _holds_load_word(data)


def _loading_text(path: str, on_disk: bool) -> str | None:
    """The text of a script that may load a config (a load word in it), None for any other."""
    from precisionlint.project.pins import read_text

    if on_disk:
        if not _may_load(path):  # its bytes, searched before any decoding: most scripts load no config
            return None
        return read_text(path)
    try:
        if os.path.getsize(path) > _MAX_SCRIPT_BYTES:
            return None
    except OSError:
        return None
    text = read_text(path)
    return text if text is not None and any(word in text for word in LOAD_WORDS) else None


def scan_ahead(model: ProjectModel, config_paths: list[str]) -> None:
    """Which Python files of the projects of these configs may load a config (_may_load), kept in
    `model.load_scripts` per folder for the folders the index's walk lists whole. A run's first worker does this
    before it forks the others (run.parallel's warm-up): each worker that checks a config of a project built the
    index of the project's scripts, and read and searched every script of it for a load word, for itself (on
    four real repositories 0.45 s of each worker's CPU). The index then reads only the scripts that hold one."""
    roots = dict.fromkeys(model.project_for(path).root for path in config_paths)
    found = model.load_scripts
    none: frozenset[str] = frozenset()
    for root in roots:
        by_folder: dict[str, list[str]] = {}
        # the walk readers() makes: every folder it lists is listed whole (its limit stops it between folders)
        for path in project_files(root, (".py",), _MAX_SCRIPTS, _SKIPPED_FOLDERS):
            folder = os.path.dirname(path)
            if folder in found:
                continue  # listed in the walk of another root
            holding = by_folder.setdefault(folder, [])
            if _may_load(path):
                holding.append(path)
        for folder, holding in by_folder.items():
            found[folder] = frozenset(holding) if holding else none
        # and the reads of the scripts that hold one (parsed once for all workers), with the paths they resolved
        # for this root's project: a worker whose config is in another folder of it reuses them where each of
        # those paths resolves alike from that folder's project (_index)
        _index(model.project_of_folder(root), [path for holding in by_folder.values() for path in holding])


class _Config(NamedTuple):
    """A name bound to (a section of) a loaded config."""

    config: str
    section: tuple[str, ...]


class ScriptReads:
    """The config reads of one parsed script."""

    def __init__(self, project: Project, path: str, tree: ast.Module) -> None:
        import ast

        from precisionlint.sources.python_index import aliases_of, walk

        self.project = project
        self.path = path
        self.tree = tree
        # the nodes of one walk (ast.walk's order), for every pass below: each walked the whole tree again
        self.nodes = walk(tree)
        # the imports in the walk's order, as python_calls.import_aliases takes them (without a walk of its own)
        self.aliases = aliases_of([node for node in self.nodes if type(node) is ast.Import
                                   or type(node) is ast.ImportFrom])
        self.options = _argparse_defaults(tree, self.nodes)
        self.constants = _constants(tree.body)
        from precisionlint.project import display_path

        self.shown = display_path(path)
        # Attributes the script assigns anywhere (`training_args.bf16 = True`): a flag the arguments file leaves
        # out may be set there, so its default is not known.
        self.assigned = frozenset(node.attr for node in self.nodes
                                  if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store))

    def reads(self) -> list[Read]:
        import ast

        found: list[Read] = []
        module_names = self._bindings(self.tree.body, {})
        scopes: list[tuple[list[ast.stmt], dict[str, _Config]]] = [(self.tree.body, module_names)]
        for node in self.nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = dict(module_names)
                hydra = self._hydra_config(node)
                if hydra is not None and node.args.args:
                    names[node.args.args[0].arg] = _Config(hydra, ())
                scopes.append((node.body, self._bindings(node.body, names)))
        for body, names in scopes:
            if names:
                found.extend(self._calls(body, names))
        found.extend(self._argument_files())
        return found

    # -- where a config comes from --------------------------------------------------------------------------

    def _bindings(self, body: list[ast.stmt], inherited: dict[str, _Config]) -> dict[str, _Config]:
        """Names bound, in this body (not in nested functions), to a loaded config or a section of one."""
        import ast

        names = dict(inherited)
        files: dict[str, str] = {}  # `with open(PATH) as f`: f -> the config
        for node in _statements(body):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if isinstance(item.optional_vars, ast.Name) and _is_open(item.context_expr):
                        path = self._path(item.context_expr.args[0])  # type: ignore[attr-defined]
                        if path is not None:
                            files[item.optional_vars.id] = path
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found = self._config_of(node.value, names, files)
                if found is not None:
                    names[node.targets[0].id] = found
                elif node.targets[0].id in names:
                    del names[node.targets[0].id]  # rebound to something else
        return names

    def _config_of(self, value: ast.expr, names: dict[str, _Config], files: dict[str, str]) -> _Config | None:
        """The config (and section) an expression stands for: a load, a name bound to one, a section of it."""
        import ast

        keys: list[str] = []
        while True:
            if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
                    and isinstance(value.slice.value, str):
                keys.append(value.slice.value)
                value = value.value
            elif isinstance(value, ast.Attribute) and isinstance(value.value, (ast.Name, ast.Subscript,
                                                                                 ast.Attribute, ast.Call)):
                if isinstance(value.value, ast.Name) and value.value.id in self.aliases:
                    break  # a module's attribute (`yaml.safe_load`), not a key
                keys.append(value.attr)
                value = value.value
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
                    and value.args and isinstance(value.args[0], ast.Constant) \
                    and isinstance(value.args[0].value, str):
                keys.append(value.args[0].value)
                value = value.func.value
            else:
                break
        keys.reverse()
        base: _Config | None = None
        if isinstance(value, ast.Name) and value.id in names:
            base = names[value.id]
        elif isinstance(value, ast.Call):
            base = self._load(value, files)
        if base is None:
            return None
        return _Config(base.config, (*base.section, *keys))

    def _load(self, call: ast.Call, files: dict[str, str]) -> _Config | None:
        import ast

        from precisionlint.frameworks.python_calls import dotted_name

        callee = dotted_name(call.func, self.aliases)
        if callee not in _YAML_LOADS or not call.args:
            return None
        argument = call.args[0]
        if isinstance(argument, ast.Name) and argument.id in files:
            path: str | None = files[argument.id]
        elif _is_open(argument):
            path = self._path(argument.args[0])  # type: ignore[attr-defined]
        elif callee.endswith("OmegaConf.load"):
            path = self._path(argument)
        else:
            path = None
        if path is None:
            return None
        resolved = self.project.resolve(self.path, path)
        return _Config(os.path.realpath(resolved), ()) if resolved is not None else None

    def _path(self, node: ast.expr) -> str | None:
        """A path written as a literal, a name bound once to one, an argparse default, or a join of them."""
        import ast

        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self.options.get(node.attr)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self._path(node.left), self._path(node.right)
            return os.path.join(left, right) if left is not None and right is not None else None
        if isinstance(node, ast.Call) and node.args and not node.keywords:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("join", "Path", "PurePath"):
                parts = [self._path(arg) for arg in node.args]
                if all(part is not None for part in parts):
                    return os.path.join(*parts)  # type: ignore[arg-type]
        return None

    def _hydra_config(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        """The config file of `@hydra.main(config_path="conf", config_name="config")`, resolved from the script."""
        import ast

        from precisionlint.frameworks.python_calls import dotted_name

        for decorator in function.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            named = dotted_name(decorator.func, self.aliases) or ""
            if named != "hydra.main" and not (named.startswith("nemo.") and named.endswith(".hydra_runner")):
                continue  # NeMo's hydra_runner takes Hydra's config_path and config_name
            values = {k.arg: k.value for k in decorator.keywords if k.arg}
            folder = self._path(values["config_path"]) if "config_path" in values else None
            name = self._path(values["config_name"]) if "config_name" in values else None
            if folder is None or name is None:
                return None
            base = os.path.dirname(os.path.abspath(self.path))
            for suffix in ("", ".yaml", ".yml"):
                candidate = os.path.normpath(os.path.join(base, folder, name + suffix))
                if os.path.isfile(candidate) and (suffix or name.endswith((".yaml", ".yml"))):
                    return os.path.realpath(candidate)
        return None

    def _argument_files(self) -> list[Read]:
        """`HfArgumentParser((ModelArguments, TrainingArguments)).parse_yaml_file(PATH)`: the whole file is read
        into the dataclasses, TrainingArguments among them."""
        import ast

        from precisionlint.frameworks.call_words import HF_ARGUMENT_CLASSES
        from precisionlint.frameworks.python_calls import dotted_name

        parsers: set[str] = set()
        found: list[Read] = []
        for node in self.nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call):
                callee = dotted_name(node.value.func, self.aliases) or ""
                if callee.endswith("HfArgumentParser") and callee.startswith(("transformers", "trl")):
                    named = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "")
                             for arg in node.value.args for n in ast.walk(arg)}
                    if named & set(HF_ARGUMENT_CLASSES):
                        parsers.add(node.targets[0].id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("parse_yaml_file", "parse_json_file") \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in parsers and node.args:
                path = self._path(node.args[0])
                resolved = self.project.resolve(self.path, path) if path is not None else None
                if resolved is not None:
                    found.append(Read(os.path.realpath(resolved), (), None, "hf", "transformers.TrainingArguments",
                                      self.shown, node.lineno, self.assigned))
        return found

    # -- where it goes ----------------------------------------------------------------------------------------

    def _calls(self, body: list[ast.stmt], names: dict[str, _Config]) -> list[Read]:
        import ast

        from precisionlint.frameworks.python_calls import CALLS, dotted_name

        found: list[Read] = []
        written: set[tuple[str, tuple[str, ...]]] = set()  # (config, key path) the body assigns
        for statement in _statements(body):
            for node in _walk_statement(statement):
                if isinstance(node, (ast.Assign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for stored in targets:
                        if isinstance(stored, (ast.Subscript, ast.Attribute)):
                            config = self._config_of(stored, names, {})
                            if config is not None:
                                written.add((config.config, config.section))
                if not isinstance(node, ast.Call):
                    continue
                callee = dotted_name(node.func, self.aliases)
                if callee is None:
                    continue
                package, last = callee.split(".", 1)[0], callee.rsplit(".", 1)[-1]
                calls = [call for call in CALLS if last in call.names and package in call.modules]
                if not calls:
                    continue
                framework = calls[0].framework
                target = f"{package}.{last}"
                for keyword in node.keywords:
                    config = self._config_of(keyword.value, names, {})
                    if config is None:
                        continue
                    if keyword.arg is None:  # **section
                        overridden = frozenset(path[-1] for cfg, path in written
                                               if cfg == config.config and path[:-1] == config.section and path)
                        if framework == "hf":
                            overridden |= self.assigned
                        found.append(Read(config.config, config.section, None, framework, target, self.shown,
                                          node.lineno, overridden))
                        continue
                    canonical = next((call.keywords[keyword.arg] for call in calls if keyword.arg in call.keywords),
                                     None)
                    if canonical is None or not config.section or (config.config, config.section) in written:
                        continue
                    found.append(Read(config.config, config.section[:-1], ((config.section[-1], canonical),),
                                      framework, target, self.shown, node.lineno))
        return found


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a body in order, those of nested blocks included, not those of nested functions or
    classes."""
    import ast

    found: list[ast.stmt] = []
    pending = list(reversed(body))
    while pending:
        node = pending.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                pending.extend(reversed([item for item in inner if isinstance(item, ast.stmt)]))
                for handler in inner:
                    if isinstance(handler, ast.ExceptHandler):
                        pending.extend(reversed(handler.body))
        if isinstance(node, ast.Match):
            for case in node.cases:
                pending.extend(reversed(case.body))
    return found


def _walk_statement(statement: ast.stmt) -> list[ast.AST]:
    """The nodes of one statement without those of the statements nested in it (they come in their turn)."""
    import ast

    found: list[ast.AST] = [statement]
    pending: list[ast.AST] = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, ast.stmt)]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.stmt, ast.ExceptHandler, ast.match_case)):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _is_open(node: ast.expr) -> bool:
    import ast

    return isinstance(node, ast.Call) and bool(node.args) and (
        (isinstance(node.func, ast.Name) and node.func.id == "open")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "open"))


def _constants(body: list[ast.stmt]) -> dict[str, str]:
    """Module-level names bound exactly once, to a string literal."""
    import ast

    counts: dict[str, int] = {}
    values: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    counts[target.id] = counts.get(target.id, 0) + 1
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        values[target.id] = node.value.value
    return {name: value for name, value in values.items() if counts.get(name) == 1}


def _argparse_defaults(tree: ast.Module, nodes: list[ast.AST] | None = None) -> dict[str, str]:
    """`parser.add_argument("--config", default="configs/train.yaml")`: option destination -> its literal
    default (what `args.config` holds when the launch line does not say). `nodes`: the tree's, in ast.walk's
    order, when the caller has them."""
    import ast

    found: dict[str, str] = {}
    for node in nodes if nodes is not None else ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if not (isinstance(default, ast.Constant) and isinstance(default.value, str)):
            continue
        dest = next((k.value.value for k in node.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)),
                    None)
        if dest is None:
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = [f for f in flags if f.startswith("--")]
            chosen = long[0] if long else (flags[0] if flags else None)
            dest = chosen.lstrip("-").replace("-", "_") if chosen else None
        if isinstance(dest, str):
            found[dest] = default.value
    return found


def attribute_by_readers(document: Document) -> None:
    """Give the sections of a config that the project's scripts hand to a framework call their certain reader:
    the settings that guessing by keys found in those mappings are replaced by the reader's (its framework, its
    keys, evidence "read by train.py:12 into lightning.Trainer"); a key the script overwrites before the call is
    left out."""
    if document.format not in ("yaml", "json", "toml"):
        return
    if not document.settings:
        from precisionlint.frameworks.unclaimed import unclaimed_keys

        if not unclaimed_keys(document):
            return  # no precision key: whoever reads it, no rule has anything to say
    from precisionlint.project import disk_path, project_of

    reads = readers(project_of(document), disk_path(document))
    if not reads:
        return
    from precisionlint.frameworks import section_settings
    from precisionlint.frameworks.base import CERTAIN, Row, Section
    from precisionlint.frameworks.registry import framework as framework_module
    from precisionlint.sources.tree import roots

    tops = [root for root in roots(document.tree) if getattr(root, "kind", None) == "map"]
    if len(tops) != 1:
        return  # a YAML stream of several documents: which one a load reads is not known here
    from precisionlint.core.model import Related, Span

    settings = list(document.settings)
    related: dict[Span, Related] = {}  # a setting's value and key -> the call that reads it
    complete: dict[str, Read] = {}  # scope -> a read of the whole section, whose absent keys take their defaults
    overrides: dict[str, Read] = {}  # a key's dotted path -> the read that replaces its value (a launch flag)
    for read in reads:
        node = tops[0]
        for key in read.section:
            entry = node.get(key) if node.kind == "map" else None
            node = entry.value if entry is not None else None
            if node is None:
                break
        if node is None or node.kind != "map":
            continue
        for key in read.overridden & set(node.keys()) if read.keys is None else ():
            overrides.setdefault(".".join((*read.section, key)), read)
        module = framework_module(read.framework)
        if read.keys is None:
            rows = tuple(row for row in getattr(module, "ROWS", ()) if row.path[0] not in read.overridden)
        else:
            rows = tuple(Row(read.framework, (key,), canonical) for key, canonical in read.keys)
        scope = ".".join(read.section) or read.framework
        if read.keys is None:
            complete[scope] = read
        found = section_settings(document, Section(read.framework, scope, node, read.section, rows, CERTAIN,
                                                   read.evidence()))
        depth = len(read.section) + 1
        if read.keys is None:  # the reader takes the whole mapping: what was guessed of it is replaced
            settings = [s for s in settings if not (s.key_path[:depth - 1] == read.section
                                                    and len(s.key_path) == depth)]
        offsets = {s.value_offsets for s in found}
        settings = [s for s in settings if s.value_offsets not in offsets] + found
        place = Related(read.script, Span.point(read.line, 1), f"read here into {read.target}")
        for setting in found:
            related[setting.span] = related[setting.key_span] = place
    document.settings = settings
    document.reader_related = related
    document.complete_reads = complete
    document.reader_overrides = overrides


def overridden_keys(document: Document) -> dict[str, Read]:
    """The config's keys that its reader replaces before the framework reads them (dotted path -> the read):
    what the file says there is not what runs, so they are neither checked nor unread."""
    return document.reader_overrides or {}


def reads_whole(document: Document, scope: str, keys: tuple[str, ...]) -> Read | None:
    """The read that hands the whole section of `scope` to its framework, when none of `keys` can be set
    anywhere else (the script does not assign them): then a key the section leaves out takes the framework's
    default, as in `HfArgumentParser.parse_yaml_file` or `TrainingArguments(**cfg)`. None otherwise."""
    read: Read | None = (document.complete_reads or {}).get(scope)
    if read is None or read.overridden & set(keys):
        return None
    return read
