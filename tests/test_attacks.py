"""The attacks that once lost data, hung or crashed a run, kept as tests (README, "What check guarantees").

Each test reproduces one attack through the real CLI (a subprocess), real files and, for the language server,
a real LSP client. The writer's races are made deterministic by running the real writer in this process with
the other program's save injected at the moment that once lost it.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from precisionlint.fix import write as fix_write

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file systems")

TOML = b"[trainer_config]\nprecision = 16\n"
TOML_FIXED = b'[trainer_config]\nprecision = "16-mixed"\n'
LATIN1_SCRIPT = (
    b"# -*- coding: latin-1 -*-\n"
    b"import torch\n"
    b'name = "Jos\xe9"\n'
    b"model = torch.nn.Linear(2, 2).half()\n"
    b"opt = torch.optim.Adam(model.parameters())\n"
    b"for x in range(3):\n"
    b'    with torch.autocast("cuda", dtype=torch.float16):\n'
    b"        loss = model(x)\n"
    b"    loss.backward()\n"
    b"    opt.step()\n"
)
LIGHTNING_YAML = b"trainer:\n  accelerator: gpu\n  precision: 16\n"


def signals_as_from_a_terminal() -> None:
    """The child's signals as a terminal's shell leaves them. A test run started under `nohup` passes SIGHUP on
    ignored, and precisionlint rightly keeps an ignored SIGHUP ignored: then a SIGHUP test would see no signal."""
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def run(*args: str, cwd: Path, timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "precisionlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def check(*args: str, cwd: Path, timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return run("check", "--no-progress", "--no-cache", *args, cwd=cwd, timeout=timeout, **kwargs)


# --- 1, 5: --add-noqa and advise --write write as --fix does ------------------------------------------------


def test_add_noqa_keeps_the_declared_latin1_coding(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_bytes(LATIN1_SCRIPT)
    done = check("--add-noqa", "train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = script.read_bytes()
    assert b'name = "Jos\xe9"\n' in data  # latin-1 still, not UTF-8 under a latin-1 declaration
    assert b"# precisionlint: ignore[" in data
    assert check("train.py", cwd=tmp_path).returncode == 0


def test_add_noqa_keeps_crlf_line_endings(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_bytes(LATIN1_SCRIPT.replace(b"\n", b"\r\n"))
    assert check("--add-noqa", "train.py", cwd=tmp_path).returncode == 0
    data = script.read_bytes()
    assert b"# precisionlint: ignore[" in data
    assert data.count(b"\r\n") == data.count(b"\n") == LATIN1_SCRIPT.count(b"\n")


@pytest.mark.parametrize("protection", ["read-only", "hard link"])
def test_add_noqa_refuses_protected_files(tmp_path: Path, protection: str) -> None:
    script = tmp_path / "train.py"
    script.write_bytes(LATIN1_SCRIPT)
    if protection == "read-only":
        script.chmod(0o444)
    else:
        os.link(script, tmp_path / "other_name.py")
    done = check("--add-noqa", "train.py", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    reason = "read-only file" if protection == "read-only" else "has 2 hard links"
    assert f"train.py: {reason}" in done.stderr
    assert script.read_bytes() == LATIN1_SCRIPT


@pytest.mark.parametrize("protection", ["read-only", "hard link"])
def test_advise_write_refuses_protected_files(tmp_path: Path, protection: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(LIGHTNING_YAML)
    if protection == "read-only":
        config.chmod(0o444)
    else:
        os.link(config, tmp_path / "other.yaml")
    done = run("advise", "--gpu", "A100", "--write", "config.yaml", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    reason = "read-only file" if protection == "read-only" else "has 2 hard links"
    assert f"config.yaml: {reason}" in done.stderr
    assert config.read_bytes() == LIGHTNING_YAML
    assert "Traceback" not in done.stderr


def test_advise_write_keeps_bom_and_crlf(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_bytes(b"\xef\xbb\xbf" + LIGHTNING_YAML.replace(b"\n", b"\r\n"))
    done = run("advise", "--gpu", "A100", "--write", "config.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert config.read_bytes() == b"\xef\xbb\xbftrainer:\r\n  accelerator: gpu\r\n  precision: bf16-mixed\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]


# --- 2, 3: another program's save always wins --------------------------------------------------------------


def _fix_in_process(root: Path) -> Any:
    from precisionlint.cli.rule_selection import default_rules
    from precisionlint.run.config import load_config
    from precisionlint.run.runner import RunRequest, run_check

    request = RunRequest(paths=[str(root)], config=load_config(None, root), rules=default_rules(), fix=True,
                         unsafe_fixes=True, jobs=1, progress=False)
    return run_check(request)


EDITOR = b"[trainer_config]\nprecision = 32  # saved by the editor\n"


def _rename_save(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".editor~")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _in_place_save(path: Path, data: bytes) -> None:
    """Truncate, then write: a two-write save, by another process (the writer's lease would make this process
    wait for itself). If the save blocks, because precisionlint holds a lease that the save breaks, it is left
    to finish once precisionlint lets go."""
    code = f"import sys\nwith open({str(path)!r}, 'r+b') as f:\n    f.truncate(0)\n    f.write({data!r})\n"
    editor = subprocess.Popen([sys.executable, "-c", code])
    EDITORS.append(editor)
    try:
        editor.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        pass


EDITORS: list[subprocess.Popen[bytes]] = []


@pytest.mark.parametrize("save", [_rename_save, _in_place_save])
def test_an_editor_save_during_the_write_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, save: Any) -> None:
    """The save lands while the fixed file is flushed to disk (once a second-long window before the rename) and,
    in a second run, right before the swap: either way the editor's bytes are what the file holds after."""
    config = tmp_path / "train.toml"
    real = {"fsync": os.fsync, "swap": fix_write._exchange}
    for hook in ("fsync", "swap"):
        config.write_bytes(TOML)
        saved: list[bool] = []

        def editor_saves(*args: Any, _hook: str = hook, _saved: list[bool] = saved, **kwargs: Any) -> Any:
            if not _saved:
                _saved.append(True)
                save(config, EDITOR)
            return real[_hook](*args, **kwargs)

        if hook == "fsync":
            monkeypatch.setattr(fix_write.os, "fsync", editor_saves)
        else:
            monkeypatch.setattr(fix_write, "_exchange", editor_saves)
        outcome = _fix_in_process(tmp_path)
        monkeypatch.undo()
        while EDITORS:
            assert EDITORS.pop().wait(timeout=60) == 0
        assert saved
        if hook == "fsync":  # the change was seen before the swap: the editor's content is fixed in its turn
            assert config.read_bytes() == EDITOR.replace(b"32", b'"32-true"'), outcome.errors
        else:  # seen only after the swap: the swap is undone, and the user told
            assert config.read_bytes() == EDITOR
            assert outcome.errors == [f"{config}: changed by another program while being written; left as that "
                                      "program saved it (run again to change the new content)"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["train.toml"]


def test_a_file_being_rewritten_in_place_is_left_to_its_writer(tmp_path: Path) -> None:
    """Another program has the file open and has written the first half of its new content: --fix must not
    fix the half and replace the file (the second half would go to the replaced file and be lost)."""
    functions = [f"def f{i}():\n    return {i}\n" for i in range(40)]
    whole = ("import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n" + "".join(functions)).encode()
    script = tmp_path / "train.py"
    script.write_bytes(b"")
    half = whole.index(b"def f20")  # the half written so far parses, and is fixable
    with open(script, "r+b") as writer:
        writer.write(whole[:half])
        writer.flush()
        done = check("--fix", "--unsafe-fixes", "train.py", cwd=tmp_path)
        writer.write(whole[half:])
    if sys.platform.startswith("linux"):
        assert "train.py: kept changing while being fixed; left as it is" in done.stderr, done.stderr
    assert script.read_bytes() == whole


def test_add_noqa_leaves_a_file_saved_since_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An editor saves the script after the check read it and before --add-noqa writes: a line added at the top
    moves every finding down. The directives belong to the lines that were checked, so the file is left as the
    editor saved it and the user told (--add-noqa put them on the lines of the new text, one line off)."""
    from precisionlint.cli import check_command
    from precisionlint.cli.check_options import parse_fast
    from precisionlint.run import runner

    script = tmp_path / "train.py"
    script.write_bytes(LATIN1_SCRIPT)
    saved = LATIN1_SCRIPT.replace(b"import torch\n", b"import torch\nimport os  # added in the editor\n")
    checked = runner.run_check

    def check_then_editor_saves(request: Any) -> Any:
        outcome = checked(request)
        _rename_save(script, saved)
        return outcome

    monkeypatch.setattr(runner, "run_check", check_then_editor_saves)
    monkeypatch.chdir(tmp_path)
    values = parse_fast(["--no-progress", "--no-cache", "--add-noqa", "train.py"])
    assert values is not None
    code = check_command.execute(values)
    err = capsys.readouterr().err
    assert script.read_bytes() == saved, err
    assert "train.py: changed by another program since it was checked; left as it is" in err
    assert code == 2
    monkeypatch.setattr(runner, "run_check", checked)  # unchanged since the check: written as before
    assert check_command.execute(values) == 0
    assert b"# precisionlint: ignore[" in script.read_bytes()


# --- 7: a FIFO named by advise ---------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--write", "--config"])
def test_advise_refuses_a_fifo(tmp_path: Path, option: str) -> None:
    os.mkfifo(tmp_path / "config.yaml")
    done = run("advise", "--gpu", "A100", option, "config.yaml", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert f"Invalid value for {option}: config.yaml: is a FIFO (named pipe), not a regular file" in done.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / "config.yaml").st_mode)


# --- 4: the cache stays in its own folder, inside the project ------------------------------------------------


def _old(path: Path) -> None:
    os.utime(path, ns=(1_000_000_000_123_456_789,) * 2)  # 2001: past every clean-up age (not a whole second)


def test_a_linked_cache_folder_is_never_cleaned_or_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    (project / ".precisionlint_cache").mkdir(parents=True)
    elsewhere.mkdir()
    precious = [elsewhere / name for name in ("work.tmp", "run.results", "list.files")]
    for path in precious:
        path.write_text("keep me\n")
        _old(path)
    (project / ".precisionlint_cache" / "1").symlink_to(elsewhere)
    (project / "train.toml").write_bytes(TOML)
    _settled(project / "train.toml", project)
    done = run("check", "--no-progress", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert all(path.read_text() == "keep me\n" for path in precious)
    assert sorted(p.name for p in elsewhere.iterdir()) == sorted(p.name for p in precious)


def _settled(*paths: Path) -> None:
    """Old times, and a pause past the racy-git margin: the run may keep its results (and so write its cache)."""
    import time

    for path in paths:
        _old(path)
    time.sleep(0.3)


@pytest.mark.parametrize("setting", ["../..", "..", "ELSEWHERE"])
def test_cache_dir_outside_the_project_writes_nothing_there(tmp_path: Path, setting: str) -> None:
    outside = tmp_path / "home"
    project = outside / "clone"
    project.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    setting = setting.replace("ELSEWHERE", str(tmp_path / "elsewhere"))
    (project / ".precisionlint.toml").write_text(f'cache-dir = "{setting}"\n')
    (project / "train.toml").write_bytes(TOML)
    _settled(project / ".precisionlint.toml", project / "train.toml", project)
    before = {p for p in tmp_path.rglob("*")}
    done = run("check", "--no-progress", ".", cwd=project)
    assert done.returncode == 1, done.stderr
    assert {p for p in tmp_path.rglob("*")} == before
    # Said once, not silently: the cache is off, and how to put it there on purpose
    assert done.stderr == (f"precisionlint: warning: cache-dir {setting!r} (in {project / '.precisionlint.toml'}) "
                           "leads outside the project, so results are not cached; set PRECISIONLINT_CACHE_DIR to "
                           "cache them there\n")
    quiet = run("check", "--no-progress", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert quiet.returncode == 1 and quiet.stderr == ""  # no cache asked for: nothing to say
    elsewhere = tmp_path / "chosen"
    chosen = run("check", "--no-progress", ".", cwd=project,
                 env={**os.environ, "PRECISIONLINT_CACHE_DIR": str(elsewhere)})
    assert chosen.returncode == 1 and chosen.stderr == "", chosen.stderr
    assert elsewhere.is_dir()  # the user's own choice is used as given


def test_an_existing_folder_of_other_files_is_not_made_a_cache(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine\n")
    (tmp_path / ".precisionlint.toml").write_text('cache-dir = "notes"\n')
    (tmp_path / "train.toml").write_bytes(TOML)
    _settled(tmp_path / ".precisionlint.toml", tmp_path / "train.toml", tmp_path)
    assert run("check", "--no-progress", ".", cwd=tmp_path).returncode == 1
    assert [p.name for p in (tmp_path / "notes").iterdir()] == ["todo.txt"]


def test_a_cache_entry_of_wrong_types_is_a_miss(tmp_path: Path) -> None:
    """The checksum is valid (the entry was written so), but the values are not what a finding holds."""
    import json

    from precisionlint.core.digest import content_digest
    from precisionlint.run.cache import FORMAT_VERSION, MAGIC

    (tmp_path / "train.toml").write_bytes(TOML)
    _settled(tmp_path / "train.toml", tmp_path)
    first = run("check", "--no-progress", "--output-format", "json", ".", cwd=tmp_path)
    [results] = (tmp_path / ".precisionlint_cache" / FORMAT_VERSION).glob("*.results")
    entries = json.loads(results.read_bytes().partition(b"\n")[2])
    for entry in entries.values():
        for row in entry[1]:
            row[3] = "two"  # the line
            row[7] = {"not": "a message"}
    body = json.dumps(entries).encode()
    results.write_bytes(f"{MAGIC} {FORMAT_VERSION} {len(body)} {content_digest(body)}\n".encode() + body)
    again = run("check", "--no-progress", "--output-format", "json", ".", cwd=tmp_path)
    assert again.returncode == 1, again.stderr
    assert again.stdout == first.stdout


# --- 6: files nobody named are read bounded, and only when regular --------------------------------------------

PIN_NAMES = ["requirements.txt", "pyproject.toml", "setup.cfg", "environment.yml", "Dockerfile",
             ".precisionlint.toml"]
SCRIPT = b"import torch\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    y = 1\n"


@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/urandom", "fifo"])
def test_hostile_pin_files_neither_hang_nor_grow(tmp_path: Path, kind: str) -> None:
    import resource

    (tmp_path / "train.py").write_bytes(SCRIPT)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_bytes(b'{"fp16": {"enabled": true}}\n')
    for name in PIN_NAMES:
        if kind == "fifo":
            os.mkfifo(tmp_path / name)
        else:
            (tmp_path / name).symlink_to(kind)

    def limit_memory() -> None:  # a read without limit would pass this within a second
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = check("train.py", "configs/ds.json", cwd=tmp_path, timeout=60, preexec_fn=limit_memory)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "train.py" in done.stdout


# --- 10, 12, 13: one file's oddity is that file's finding, never an internal error -----------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text)


def test_a_json_whose_first_line_nests_deep_is_that_file_only(tmp_path: Path) -> None:
    deep = '{"a":' * 1000 + '"fp16"' + "}" * 1000
    _write(tmp_path, {"deep.json": f'{deep}\n{{"fp16": 1}}\n', "train.toml": TOML.decode()})
    done = check(".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr + done.stdout
    assert "train.toml:2:13: PL102" in done.stdout


def test_a_pin_of_more_than_4300_digits_is_no_version(tmp_path: Path) -> None:
    _write(tmp_path, {"requirements.txt": "torch==2." + "1" * 5000 + "\n",
                      "train.py": "import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n"})
    done = check(".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "PL009" not in done.stdout and "internal error" not in done.stdout
    assert "train.py:2:6: PL207" in done.stdout


def test_numbers_too_large_for_a_float(tmp_path: Path) -> None:
    huge = "1" + "0" * 400
    _write(tmp_path, {
        "ds.json": f'{{"fp16": {{"enabled": true, "loss_scale": {huge}}}}}\n',
        "train.py": ("import torch\nmodel = torch.nn.Linear(2, 2).half()\n"
                     f"opt = torch.optim.Adam(model.parameters(), eps={huge})\n"
                     "for x in range(3):\n    loss = model(x)\n    loss.backward()\n    opt.step()\n"),
    })
    done = check(".", cwd=tmp_path)
    assert "PL009" not in done.stdout and "internal error" not in done.stdout, done.stdout
    assert "ds.json:1:42: PL106 [warning] static loss_scale 1.00e+400" in done.stdout


def test_a_mapping_that_merges_its_own_anchor_is_skipped_not_an_error(tmp_path: Path) -> None:
    _write(tmp_path, {"self.yaml": "trainer: &x\n  precision: 16\n  sub:\n    <<: *x\n", "train.toml": TOML.decode()})
    done = check(".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "self.yaml" not in done.stdout  # PyYAML reads it: no parse error; ruamel cannot, so it is not read
    assert "NoneType" not in done.stdout + done.stderr


# --- 8, 9: the language server recovers from bad framing, answers every request, keeps no finished notification --


@pytest.fixture
def raw_server(tmp_path: Path) -> Any:
    from tests.raw_lsp import RawClient

    client = RawClient(tmp_path)
    client.initialize()
    yield client
    client.close()


def test_a_content_length_counted_in_characters_is_recovered(tmp_path: Path, raw_server: Any) -> None:
    config = tmp_path / "train.yaml"
    text = "# réglages d'entraînement\ntrainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
    config.write_text(text)
    raw_server.notify("textDocument/didOpen", {"textDocument": {
        "uri": config.as_uri(), "languageId": "yaml", "version": 1, "text": text}}, count_characters=True)
    published = raw_server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                    and m["params"]["uri"] == config.as_uri())
    assert published is not None, "the miscounted message was lost, or nothing after it was handled"
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["PL102"]
    answer = raw_server.response(raw_server.request("textDocument/hover", {
        "textDocument": {"uri": config.as_uri()}, "position": {"line": 2, "character": 14}}))
    assert answer is not None and "result" in answer


def test_a_request_with_invalid_params_is_answered(raw_server: Any) -> None:
    answer = raw_server.response(raw_server.request("textDocument/hover", {
        "textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": "first"}}))
    assert answer is not None and answer["error"]["code"] == -32602  # InvalidParams
    assert raw_server.response(raw_server.request("workspace/executeCommand", {"command": "x"})) is not None


def test_requests_after_shutdown_are_answered_and_exit_ends_the_server(raw_server: Any) -> None:
    assert raw_server.response(raw_server.request("shutdown")) is not None
    answer = raw_server.response(raw_server.request("textDocument/hover", {
        "textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}}), timeout=10)
    assert answer is not None and answer["error"]["code"] == -32600  # InvalidRequest
    raw_server.notify("exit", None)
    assert raw_server.process.wait(timeout=10) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_server_memory_stays_flat_over_open_close_cycles(tmp_path: Path, raw_server: Any) -> None:
    """pygls kept one finished future per notification (46 -> 89 MB over 8,000); 3,000 here: flat after warm-up."""
    from tests.raw_lsp import rss_kib

    path = tmp_path / "train.py"
    path.write_text(SCRIPT.decode())
    readings = []
    for cycle in range(1500):
        if cycle in (500, 1499):
            raw_server.round_trip()
            readings.append(rss_kib(raw_server.process.pid))
        raw_server.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": cycle, "text": SCRIPT.decode()}})
        raw_server.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
    assert readings[1] - readings[0] < 1024, readings  # KiB; it grew by about 3.8 MiB over these 2,000


# --- 11: a file-size limit below the workers' arena --------------------------------------------------------


def test_a_small_file_size_limit_does_not_break_a_parallel_run(tmp_path: Path) -> None:
    import resource

    from tests.test_faults import make_tree

    make_tree(tmp_path)  # large enough for the process pool
    filler = b"# a comment line that makes the tree larger than the file-size limit\n" * 1500
    for path in tmp_path.rglob("*.py"):
        path.write_bytes(path.read_bytes() + filler)  # 80 Python files of 100 kB: 8 MB to hand to the workers

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))

    serial = check("--jobs", "1", ".", cwd=tmp_path, timeout=300)
    parallel = check("--jobs", "2", ".", cwd=tmp_path, timeout=300, preexec_fn=limit_file_size)
    assert parallel.returncode == serial.returncode == 1, parallel.stderr
    assert parallel.stdout == serial.stdout


# --- 14: names rebound to each other do not make the analysis grow as the cube of the file -------------------


def test_module_names_rebound_before_every_step_are_analysed_in_linear_time() -> None:
    import time

    from benchmarks.script_scaling import rebound
    from precisionlint.cli.rule_selection import default_rules
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions

    options = EngineOptions(rules=default_rules(), gpus=(), prefilter=False)
    text = rebound(400)  # 90 kB; it took far over the 10 s limit (a limit-exceeded finding), now well under 2 s
    began = time.process_time()
    result = check_bytes("train.py", text.encode(), "python", options)
    assert not [f for f in result.findings if f.code in ("PL003", "PL009")], result.findings[:2]
    assert time.process_time() - began < 5.0


# --- 15: signals at start-up, and the signals a terminal sends --------------------------------------------


@pytest.mark.parametrize("signame", ["SIGINT", "SIGHUP", "SIGQUIT"])
def test_a_signal_during_start_up_is_one_line_not_a_traceback(tmp_path: Path, signame: str) -> None:
    import signal
    import time

    signum = getattr(signal, signame)
    (tmp_path / "train.toml").write_bytes(TOML)
    # while the interpreter imports precisionlint's modules
    for delay in (0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18):
        process = subprocess.Popen([sys.executable, "-m", "precisionlint", "check", "--no-cache", "."],
                                   cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   preexec_fn=signals_as_from_a_terminal)
        time.sleep(delay)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
        if b"Traceback" in err and not re.search(rb'precisionlint.cli.entry\.py", line \d+, in main\n', err):
            continue  # before the entry point's main() ran (Python's start-up, runpy, the imports of entry.py)
        assert b"Traceback" not in err, (delay, err.decode())
        if process.returncode not in (0, 1) and err:
            assert process.returncode == 128 + signum, (delay, err.decode())
            assert err.decode().strip().splitlines()[-1] in ("precisionlint: error: interrupted",
                                                             "precisionlint: error: terminated")



@pytest.mark.parametrize("signame", ["SIGINT", "SIGHUP", "SIGQUIT"])
def test_a_signal_while_the_run_imports_its_modules_is_one_line(tmp_path: Path, signame: str) -> None:
    """The signal lands at a fixed point of the start-up, whatever the speed of the machine: when the console
    script's main() starts importing the check command (the process sends it to itself from an import hook).
    The test above draws a delay instead, and on a loaded machine every delay falls before main() runs (a
    traceback there is Python's, not ours), so it passes with or without the early handler. Without it, SIGINT
    printed a KeyboardInterrupt traceback through main(), and SIGHUP and SIGQUIT ended the process by their
    default action, without a word."""
    import signal

    signum = getattr(signal, signame)
    (tmp_path / "train.toml").write_bytes(TOML)
    code = ("import os, runpy, signal, sys\n"
            "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"  # as from a terminal, not under nohup (see below)
            "class SignalOnImport:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'precisionlint.cli.check_command':\n"
            f"            os.kill(os.getpid(), signal.{signame})\n"
            "        return None\n"
            "sys.meta_path.insert(0, SignalOnImport())\n"
            "sys.argv[0] = 'precisionlint'\n"
            "runpy.run_module('precisionlint', run_name='__main__', alter_sys=True)\n")
    done = subprocess.run([sys.executable, "-c", code, "check", "--no-progress", "--no-cache", "train.toml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 128 + signum, (done.returncode, done.stderr)
    assert done.stderr == ("precisionlint: error: interrupted\n" if signame == "SIGINT"
                           else "precisionlint: error: terminated\n")


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGQUIT"])
def test_a_terminal_signal_while_the_fixed_file_is_written_leaves_no_temporary_file(tmp_path: Path,
                                                                                    signame: str) -> None:
    """The signal lands exactly while --fix flushes its new file (the process sends it to itself from inside
    os.fsync): it waits until that file is gone or in place, then ends the run with one line. By their default
    action SIGHUP and SIGQUIT ended the process there and left `.train.toml.*.tmp` beside the file."""
    import signal

    signum = getattr(signal, signame)
    (tmp_path / "train.toml").write_bytes(TOML)
    code = ("import os, runpy, signal, sys\n"
            "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"  # as from a terminal, not under nohup (see below)
            "flush = os.fsync\n"
            "def fsync(fd):\n"
            f"    os.kill(os.getpid(), signal.{signame})\n"
            "    return flush(fd)\n"
            "os.fsync = fsync\n"
            "sys.argv[0] = 'precisionlint'\n"
            "runpy.run_module('precisionlint', run_name='__main__', alter_sys=True)\n")
    arguments = ["check", "--no-progress", "--no-cache", "--fix", "--unsafe-fixes", "train.toml"]
    done = subprocess.run([sys.executable, "-c", code, *arguments], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 128 + signum, (done.returncode, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == "precisionlint: error: terminated", done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.toml"]
    assert (tmp_path / "train.toml").read_bytes() in (TOML, TOML_FIXED)


def test_file_names_with_control_characters_are_escaped_in_text_output(tmp_path: Path) -> None:
    name = "evil\nfake.yaml:1:1: PL001 [error] forged\x1b[2K.toml"
    (tmp_path / name).write_bytes(TOML)
    done = check("--output-format", "full", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout and "\nfake.yaml" not in done.stdout
    assert "evil\\nfake.yaml:1:1: PL001 [error] forged\\x1b[2K.toml:2:13: PL102" in done.stdout
    concise = check(".", cwd=tmp_path)
    assert "evil\\nfake.yaml:1:1: PL001 [error] forged\\x1b[2K.toml:2:13: PL102" in concise.stdout


def test_json_fix_locations_count_lone_cr_lines_as_the_findings_do(tmp_path: Path) -> None:
    import json

    (tmp_path / "train.py").write_bytes(b"import torch\rx = 1\r\rwith torch.cuda.amp.autocast():\r    y = 1\r")
    (tmp_path / "cli.yaml").write_bytes(
        b"a: 1\r\rtrainer:\r  precision: 16\r  _target_: lightning.pytorch.Trainer\r")
    done = check("--unsafe-fixes", "--output-format", "json", ".", cwd=tmp_path)
    findings = json.loads(done.stdout)
    assert {f["path"] for f in findings} == {"train.py", "cli.yaml"}
    for finding in findings:
        assert [e["location"]["line"] for e in finding["fix"]["edits"]][0] == finding["line"], finding


LONE_CR_DIRECTIVES = {  # a used directive, an unused one after a value, and an unused one on a line of its own
    "train.py": "import torch\rx = 1  # precisionlint: ignore[PL104]\r\rwith torch.cuda.amp.autocast():  "
                "# precisionlint: ignore[deprecated-amp-api]\r    y = 1\r# precisionlint: file-ignore[PL104]\r",
    "cli.yaml": "a: 1  # precisionlint: ignore[PL104]\r\rtrainer:\r  precision: 16  "
                "# precisionlint: ignore[legacy-precision-value]\r  _target_: lightning.pytorch.Trainer\r"
                "# precisionlint: file-ignore[PL104]\r",
}


@pytest.mark.parametrize("name", sorted(LONE_CR_DIRECTIVES))
def test_suppressions_count_lone_cr_lines_as_the_findings_do(tmp_path: Path, name: str) -> None:
    """In a Python or YAML file with lone-CR line endings a directive's line is the line its findings count:
    it suppresses them, its own findings (unused-suppression) name the line their fix edits, --fix applies
    that fix, and --add-noqa puts its comments on the findings' lines. In Python the directives were read on
    lines that end at a newline only: the directive suppressed nothing, a directive on a line of its own was
    said not to be, unused-suppression named line 1 where its fix edited line 2 or 6, and --add-noqa added
    nothing (as in YAML), reporting success."""
    import json

    original = LONE_CR_DIRECTIVES[name]
    (tmp_path / name).write_bytes(original.encode())
    select = ("--extend-select", "unused-suppression")
    findings = json.loads(check(*select, "--output-format", "json", name, cwd=tmp_path).stdout)
    first = (2, 8) if name == "train.py" else (1, 7)  # after `x = 1  ` / `a: 1  `
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("PL007", *first), ("PL007", 6, 1)], findings
    text = original
    for finding in findings:
        assert finding["fix"]["applicability"] == "safe"
        [edit] = finding["fix"]["edits"]
        assert edit["location"]["line"] == finding["line"], finding
    for edit in sorted((f["fix"]["edits"][0] for f in findings), key=lambda e: e["start"], reverse=True):
        text = text[:edit["start"]] + edit["content"] + text[edit["end"]:]
    done = check(*select, "--fix", name, cwd=tmp_path)
    assert "Fixed 2 findings." in done.stdout, done.stdout
    assert (tmp_path / name).read_bytes() == text.encode()
    assert "\n" not in text and text.count("\r") == original.count("\r") - 1  # the directive's line is gone

    bare = re.sub(r"  # precisionlint: ignore\[[^]]*\]", "", text)
    (tmp_path / name).write_bytes(bare.encode())
    added = check("--add-noqa", name, cwd=tmp_path)
    assert added.returncode == 0 and "Added 1 suppression comment" in added.stdout, (added.stdout, added.stderr)
    assert (tmp_path / name).read_bytes() == text.encode()  # the directive back on the finding's line
    assert check(*select, name, cwd=tmp_path).returncode == 0


# --- 15: a fix that the JSON output calls safe is one that --fix applies --------------------------------------

UNUSED_DIRECTIVE = {  # a whole-line directive that suppresses nothing: PL007 offers to remove the line
    "train.toml": '[trainer_config]\nprecision = "bf16-mixed"\n# precisionlint: file-ignore[PL104]\n',
    "train.yaml": "trainer:\n  precision: bf16-mixed\n  _target_: lightning.pytorch.Trainer\n"
                  "# precisionlint: file-ignore[PL104]\n",
    # the directive holds the file's only precision word: the fixed script is one no rule reads
    "train.py": "import torch\nx = 1\n# precisionlint: file-ignore[PL104]\n",
}


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("name", sorted(UNUSED_DIRECTIVE))
def test_a_safe_fix_in_the_json_output_is_applied_by_fix(tmp_path: Path, name: str, ending: str) -> None:
    """--fix writes exactly what the JSON output's safe fix says. It refused the removal of a directive line in
    a CRLF config ("the edit does not cover exactly one value or entry") and, in a script, reported the fixed
    text as over a limit ("could not be checked again") because no rule reads what is left."""
    import json

    original = UNUSED_DIRECTIVE[name].replace("\n", ending).encode()
    (tmp_path / name).write_bytes(original)
    select = ("--extend-select", "unused-suppression")
    [finding] = json.loads(check(*select, "--output-format", "json", name, cwd=tmp_path).stdout)
    assert finding["code"] == "PL007" and finding["fix"]["applicability"] == "safe", finding
    text = original.decode()
    for edit in sorted(finding["fix"]["edits"], key=lambda e: e["start"], reverse=True):
        text = text[:edit["start"]] + edit["content"] + text[edit["end"]:]
    done = check(*select, "--fix", name, cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert "Fixed 1 finding." in done.stdout
    assert (tmp_path / name).read_bytes() == text.encode()


# --- 15: a memory limit (ulimit -v) is one line or a finding, never a traceback ----------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux enforces it")
def test_running_out_of_memory_is_one_line_or_a_finding_never_a_traceback(tmp_path: Path) -> None:
    """The real CLI under a memory limit (RLIMIT_AS, as `ulimit -v` sets it). Where the limit is met depends on
    the machine, so limits are tried from 10 MB up in steps of 2 MB until a run has room, then the band
    between the first limit that reached precisionlint's code and the first with room again in steps of 1 MB,
    and every one must end well. The limit is met while the run's modules are imported (a MemoryError
    traceback and exit 1; a SystemError or ValueError from CPython's compiler; an ImportError from a shared
    library that cannot be mapped), while a file is analysed (one per-file finding, not one per rule and not
    an internal error with exit 2 and nothing said), or not at all. Limits at which Python itself cannot start
    our code (the dynamic loader, its own start-up, runpy) are not ours to report and are passed over."""
    import resource
    import shutil

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "examples" / "project", tmp_path / "project")
    whole = check(".", cwd=tmp_path)
    assert whole.returncode == 1, whole.stderr
    seen = {"one line": 0, "finding": 0, "whole": 0}

    def run_under(kilobytes: int) -> str:
        def limit_memory() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (kilobytes << 10, kilobytes << 10))

        done = check(".", cwd=tmp_path, preexec_fn=limit_memory)
        ours = re.search(r'precisionlint[/\\][\w/\\]+\.py", line \d+', done.stderr)
        if done.returncode == 127 or done.stderr.startswith("Fatal Python error") or (
                "Traceback" in done.stderr and not ours):
            return "not ours"  # the loader or the interpreter failed before any code of precisionlint ran
        assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, (kilobytes, done.stderr)
        if done.returncode == 2:
            assert done.stderr.startswith("precisionlint: error: out of memory: "), (kilobytes, done.stderr)
            assert len(done.stderr.splitlines()) == 1, (kilobytes, done.stderr)
            kind = "one line"
        else:
            assert done.returncode == 1, (kilobytes, done.returncode, done.stderr)
            assert "internal error" not in done.stdout + done.stderr, (kilobytes, done.stdout)
            lines = [line for line in done.stdout.splitlines() if "ran out of memory" in line]
            assert len(lines) <= len({line.split(":")[0] for line in lines}), lines  # one per file at most
            assert all(": PL003 [error] ran out of memory" in line for line in lines), lines
            kind = "finding" if lines else "whole"
            if not lines:
                assert done.stdout == whole.stdout, kilobytes
        seen[kind] += 1
        return kind

    band: list[int] = []
    for megabytes in range(10, 200, 2):
        kind = run_under(megabytes << 10)
        if kind != "not ours" and not band:
            band.append(megabytes << 10)
        if kind == "whole":
            band.append(megabytes << 10)
            break  # the limits above are as roomy
    step = int(os.environ.get("PRECISIONLINT_MEMORY_STEP_KB", "1024"))  # 128 for a long run before a release
    for kilobytes in range(band[0] + step, band[-1], step):
        run_under(kilobytes)
    assert seen["one line"] and seen["whole"], seen


def _framed_with_extra(message: dict[str, Any], extra: int) -> bytes:
    """A message whose Content-Length counts `extra` bytes past its end (a client bug)."""
    import json

    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return f"Content-Length: {len(body) + extra}\r\n\r\n".encode() + body


def test_a_content_length_too_large_is_answered_not_waited_for(raw_server: Any) -> None:
    """The client sends a request whose Content-Length promises 40 bytes more than it sends, and waits for the
    answer: the server answered nothing, waiting for those bytes for ever."""
    raw_server.send_bytes(_framed_with_extra({"id": 7, "method": "workspace/executeCommand",
                                              "params": {"command": "x"}}, 40))
    assert raw_server.response(7, timeout=20) is not None, "the server waits for bytes that never come"
    raw_server.round_trip(timeout=20)  # and reads the next messages as before


def test_a_content_length_too_large_followed_by_the_next_message(tmp_path: Path, raw_server: Any) -> None:
    """The count runs into the next message's header, which arrives with it: both messages are handled."""
    config = tmp_path / "train.yaml"
    text = "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n"
    config.write_text(text)
    from tests.raw_lsp import frame

    opened = _framed_with_extra({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": config.as_uri(), "languageId": "yaml", "version": 1, "text": text}}}, 25)
    request = frame({"jsonrpc": "2.0", "id": 8, "method": "workspace/executeCommand", "params": {"command": "x"}})
    raw_server.send_bytes(opened + request)
    seen: dict[str, Any] = {}

    def both(message: dict[str, Any]) -> bool:  # in whichever order they come
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == config.as_uri():
            seen["published"] = message
        elif message.get("id") == 8 and "method" not in message:
            seen["answer"] = message
        return len(seen) == 2

    assert raw_server.wait_for(both, timeout=30) is not None, seen
    assert [d["code"] for d in seen["published"]["params"]["diagnostics"]] == ["PL102"]
