"""The README's Neovim set-up for releases before 0.11, run in a real Neovim: it starts `precisionlint server`
and the findings of a file appear as diagnostics. The snippet for 0.7 runs where Neovim 0.7 is installed (Debian
12's); the one for 0.8 to 0.10 is loaded there too, to prove it parses (its `vim.lsp.start` needs 0.8)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _snippet(marker: str) -> str:
    block = README.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]
    match = re.search(r"```lua\n(.*?)```", block, re.DOTALL)
    assert match, f"README.md lacks the lua block of {marker}"
    return match.group(1)


def _nvim_version() -> tuple[int, int] | None:
    nvim = shutil.which("nvim")
    if nvim is None:
        return None
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    match = re.search(r"v(\d+)\.(\d+)", first)
    return (int(match.group(1)), int(match.group(2))) if match else None


def test_readme_gives_a_set_up_and_a_check_for_older_neovim() -> None:
    assert "vim.lsp.start(" in _snippet("neovim-0.8")
    assert "vim.lsp.start_client(" in _snippet("neovim-0.7")
    assert ":checkhealth vim.lsp" in README and ":LspInfo" in README


@pytest.mark.skipif(_nvim_version() is None or _nvim_version() >= (0, 11), reason="needs Neovim 0.7 to 0.10")
def test_older_neovim_shows_the_findings_of_a_file(tmp_path: Path) -> None:
    version = _nvim_version()
    assert version is not None
    snippet = _snippet("neovim-0.8" if version >= (0, 8) else "neovim-0.7")
    # `precisionlint` on the editor's PATH, running this checkout.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "precisionlint"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m precisionlint "$@"\n')
    wrapper.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    config = project / "trainer.yaml"
    config.write_text("trainer:\n  max_epochs: 3\n  precision: 16\nmodel:\n  lr: 0.1\n")
    found = tmp_path / "diagnostics.txt"
    init = tmp_path / "init.lua"
    init.write_text(snippet)
    script = tmp_path / "run.lua"
    script.write_text(
        f'vim.cmd("edit {config}")\n'
        "vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)\n"
        "local lines = {}\n"
        "for _, d in ipairs(vim.diagnostic.get(0)) do\n"
        "  table.insert(lines, (d.lnum + 1) .. ':' .. (d.col + 1) .. ' ' .. tostring(d.code))\n"
        "end\n"
        f'vim.fn.writefile(lines, "{found}")\n'
        'vim.cmd("qall!")\n'
    )
    if version < (0, 8):  # the 0.8 snippet must at least parse
        check = tmp_path / "parse.lua"
        check.write_text(f"assert(loadstring({_snippet('neovim-0.8')!r}))\nvim.cmd('qall!')\n")
        parsed = subprocess.run(["nvim", "--headless", "-u", "NONE", "-c", f"luafile {check}"],
                                capture_output=True, text=True, timeout=60)
        assert parsed.returncode == 0, parsed.stderr
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_DATA_HOME": str(tmp_path / "data")}
    subprocess.run(["nvim", "--headless", "-u", str(init), "-c", f"luafile {script}"], cwd=project, env=env,
                   capture_output=True, text=True, timeout=120)
    assert found.read_text().split() == ["3:14", "PL102"]
