"""The project model: declared versions from every kind of pin file, the project boundary, target-versions,
links resolved relative to the file and the root, and fix safety that follows the torch pin (real files on
disk, the real CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from precisionlint.project.model import current
from precisionlint.project.versions import parse_specifier


@pytest.fixture(autouse=True)
def _fresh() -> None:
    current().forget()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize(
    "spec,floor,ceiling",
    [
        ("==1.13.1", (1, 13, 1), (1, 13, 1)),
        (">=1.12,<2.0", (1, 12), (2,)),
        ("^2.1", (2, 1), (3,)),
        ("^0.9.2", (0, 9, 2), (0, 10)),
        ("~=2.1.3", (2, 1, 3), (2, 2)),
        ("~=2.1", (2, 1), (3,)),
        ("==2.1.*", (2, 1), (2, 2)),
        (">=2.0.0+cu118", (2,), None),
        ("~1.2", (1, 2), (1, 3)),
        ("!=2.0.1,>=1.13", (1, 13), None),
    ],
)
def test_specifiers_become_a_floor_and_a_ceiling(spec: str, floor, ceiling) -> None:
    found = parse_specifier(spec)
    assert found is not None
    assert (found.floor.version if found.floor else None) == floor
    assert (found.ceiling.version if found.ceiling else None) == ceiling


def test_unreadable_specifiers_say_nothing() -> None:
    assert parse_specifier("*") is None
    assert parse_specifier("") is None
    assert parse_specifier("latest") is None


def test_every_pin_file_kind(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.10"\n'
                          'dependencies = ["transformers>=4.40,<5"]\n'
                          '[project.optional-dependencies]\ngpu = ["deepspeed==0.14.4"]\n'
                          '[tool.poetry.dependencies]\naccelerate = { version = "^1.2" }\n',
        "requirements.txt": "# comment\n-r requirements/base.txt\n--extra-index-url https://example.invalid\n"
                            "-e .\ntorch==2.1.2+cu118 ; sys_platform == 'linux'\n",
        "requirements/base.txt": "pytorch_lightning>=1.8,<2.0\n",
        "src/train.py": "",
    })
    project = current().project_for(str(tmp_path / "src" / "train.py"))
    assert project.version("torch").describe() == "==2.1.2"
    assert project.version("lightning").describe() == ">=1.8,<2.0"
    assert project.version("transformers").describe() == ">=4.40,<5.0"
    assert project.version("deepspeed").describe() == "==0.14.4"
    assert project.version("accelerate").describe() == ">=1.2,<2.0"
    assert project.version("python").describe() == ">=3.10"
    assert project.version("tensorflow") is None


def test_setup_py_is_read_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _write(tmp_path, {
        "setup.py": f"open({str(marker)!r}, 'w').write('x')\nfrom setuptools import setup\n"
                    "REQS = ['torch>=1.12,<1.14']\nsetup(name='x', install_requires=REQS, python_requires='>=3.8')\n",
        "train.py": "",
    })
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("torch").describe() == ">=1.12,<1.14"
    assert not marker.exists()


def test_setup_cfg_and_conda_environment(tmp_path: Path) -> None:
    _write(tmp_path, {
        "setup.cfg": "[options]\ninstall_requires =\n    lightning>=2.1\n",
        "environment.yml": "dependencies:\n  - python=3.10\n  - pytorch::pytorch=1.13.1=py3.10_cuda11.7_0\n"
                           "  - pip:\n    - transformers==4.30.2\n",
        "train.py": "",
    })
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("torch").describe() == ">=1.13.1,<1.13.2"
    assert project.version("transformers").describe() == "==4.30.2"
    assert project.version("lightning").describe() == ">=2.1"


def test_nearest_declaration_wins_and_the_boundary_stops_the_walk(tmp_path: Path) -> None:
    _write(tmp_path, {
        "requirements.txt": "torch==1.10\n",  # above the boundary: not this project's
        "repo/pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.0"]\n',
        "repo/examples/old/requirements.txt": "torch==1.13\n",
        "repo/examples/old/train.py": "",
        "repo/src/train.py": "",
    })
    assert current().project_for(str(tmp_path / "repo/examples/old/train.py")).version("torch").describe() == "==1.13"
    assert current().project_for(str(tmp_path / "repo/src/train.py")).version("torch").describe() == ">=2.0"


def test_target_versions_replace_the_pins(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch==1.13"]\n'
                          '[tool.precisionlint]\ntarget-versions = { torch = "2.4", lightning = ">=2.2" }\n',
        "train.py": "",
    })
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("torch").describe() == ">=2.4,<2.5"
    assert project.version("lightning").describe() == ">=2.2"


def test_each_pin_file_is_read_once_per_run(tmp_path: Path, monkeypatch) -> None:
    from precisionlint.project import pins

    _write(tmp_path, {"requirements.txt": "torch==2.4\n", **{f"pkg{i}/train.py": "" for i in range(5)}})
    reads: list[str] = []
    original = pins.read_text
    monkeypatch.setattr(pins, "read_text", lambda path: reads.append(path) or original(path))
    for i in range(5):
        assert current().project_for(str(tmp_path / f"pkg{i}/train.py")).version("torch") is not None
    assert reads == [str(tmp_path / "requirements.txt")]


def test_links_resolve_relative_to_the_file_then_the_root(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n',
        "configs/ds.json": "{}",
        "scripts/train.py": "",
    })
    script = str(tmp_path / "scripts/train.py")
    project = current().project_for(script)
    assert project.resolve(script, "configs/ds.json") == str(tmp_path / "configs/ds.json")
    assert project.resolve(script, "../configs/ds.json") == str(tmp_path / "configs/ds.json")
    assert project.resolve(script, "missing.json") is None
    assert project.resolve(script, "https://example.invalid/ds.json") is None


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "--no-progress", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )


DEPRECATED = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"


@pytest.mark.parametrize(
    "pins,applicability",
    [("torch>=2.4\n", "safe"), ("torch==2.3.1\n", "safe"), ("torch>=2.1\n", "unsafe"), ("numpy\n", "unsafe"),
     ("torch==2.1.2\n", None)],
)
def test_deprecated_amp_fix_is_safe_only_where_the_torch_floor_has_the_replacement(
    tmp_path: Path, pins: str, applicability: str | None
) -> None:
    """Where every declared torch is older than the replacement (torch==2.1.2 for torch.amp.GradScaler, 2.3), no
    fix is offered at all: it would write an API that does not exist there, which framework-version-mismatch
    then reports (VITS-fast-fine-tuning pins torch==2.1.2)."""
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": pins, "train.py": DEPRECATED})
    result = _check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", "train.py")
    finding = json.loads(result.stdout)[0]
    assert (finding["fix"] and finding["fix"]["applicability"]) == applicability
    if applicability == "unsafe":
        assert "needs torch 2.3 or newer" in finding["fix"]["description"]
    _check(tmp_path, "--select", "deprecated-amp-api", "--fix", "--unsafe-fixes", "train.py")
    fixed = (tmp_path / "train.py").read_text()
    assert ('torch.amp.GradScaler("cuda")' in fixed) == (applicability is not None)


def test_each_run_in_one_process_reads_the_pins_afresh(tmp_path: Path, monkeypatch) -> None:
    """A run makes its own project model: a second run in the same process (an editor plugin or a tool calling
    the command in-process) sees the pins as they are then, not what an earlier run read."""
    from click.testing import CliRunner

    from precisionlint.cli.commands import main

    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": "torch==2.1.2\n",
                      "train.py": DEPRECATED})
    command = ["check", "--no-progress", "--no-cache", "--select", "deprecated-amp-api", "--output-format", "json",
               "train.py"]
    first = CliRunner().invoke(main, command)
    assert json.loads(first.output)[0]["fix"] is None  # torch 2.1.2 has no torch.amp.GradScaler
    _write(tmp_path, {"requirements.txt": "torch>=2.4\n"})
    second = CliRunner().invoke(main, command)
    assert json.loads(second.output)[0]["fix"]["applicability"] == "safe"


def test_target_versions_are_validated_as_configuration(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[tool.precisionlint]\ntarget-versions = { torch = "latest" }\n',
                      "train.py": "x = 1\n"})
    result = _check(tmp_path, "train.py")
    assert result.returncode == 2
    assert "'target-versions.torch' is not a version or version range: 'latest'" in result.stderr
    _write(tmp_path, {"pyproject.toml": '[tool.precisionlint]\ntarget-versions = { torch = "2.4" }\n'})
    assert _check(tmp_path, "train.py").returncode == 0


SCALER = 'import torch\n\nscaler = torch.amp.GradScaler("cuda")\n'


def test_a_changed_pin_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": "torch==2.4\n",
                      "train.py": SCALER})
    first = _check(tmp_path, "--select", "framework-version-mismatch", ".")
    assert first.returncode == 0, first.stdout + first.stderr
    (tmp_path / "requirements.txt").write_text("torch==1.13.1\n")
    second = _check(tmp_path, "--select", "framework-version-mismatch", ".")
    assert second.returncode == 1 and "torch==1.13.1 (requirements.txt)" in second.stdout


def test_identical_files_under_different_pins_get_their_own_findings(tmp_path: Path) -> None:
    _write(tmp_path, {
        "old/pyproject.toml": '[project]\nname = "old"\ndependencies = ["torch==1.13.1"]\n', "old/train.py": SCALER,
        "new/pyproject.toml": '[project]\nname = "new"\ndependencies = ["torch>=2.4"]\n', "new/train.py": SCALER,
    })
    result = _check(tmp_path, "--select", "framework-version-mismatch", "--no-cache", "old", "new")
    assert "old/train.py:3:10: PL401" in result.stdout
    assert "new/train.py" not in result.stdout


def test_environment_files_in_flow_style_are_read_too(tmp_path: Path) -> None:
    flow = "name: x\ndependencies: [python=3.10, pytorch=1.13, {pip: [lightning==1.9.5]}]\n"
    _write(tmp_path, {"environment.yml": flow, "train.py": ""})
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("torch").describe() == ">=1.13,<1.14"
    assert project.version("lightning").describe() == "==1.9.5"


def test_environment_list_written_at_column_zero_is_read(tmp_path: Path) -> None:
    """YAML lets a block list start at its key's column; hand-written environment.yml files often do."""
    text = "name: x\ndependencies:\n- python=3.10\n- pytorch=1.13\n- pip:\n  - lightning==1.9.5\n"
    _write(tmp_path, {"environment.yml": text, "train.py": ""})
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("torch").describe() == ">=1.13,<1.14"
    assert project.version("lightning").describe() == "==1.9.5"


def test_a_script_check_does_not_import_a_yaml_library_for_environment_yml(tmp_path: Path) -> None:
    _write(tmp_path, {"environment.yml": "dependencies:\n  - pytorch=1.13  # pinned\n  - pip:\n      - x==1\n",
                      "pyproject.toml": '[project]\nname = "x"\n', "train.py": SCALER})
    code = ("import sys; from precisionlint.cli.commands import main\n"
            "try:\n    main(['check', '--no-cache', 'train.py'])\nexcept SystemExit as exit:\n"
            "    print('ruamel' in sys.modules, exit.code)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "False 1", result.stdout + result.stderr


LEGACY_YAML = "trainer:\n  precision: 16\n  max_epochs: 3\n  _target_: lightning.pytorch.Trainer\n"


@pytest.mark.parametrize(
    "pins,expected",
    # A floor below 2.0 promises that Lightning 1.8 runs the config, which rejects '16-mixed': nothing to say.
    [("pytorch-lightning==1.9.5\n", None), ("pytorch-lightning>=1.8\n", None), ("pytorch-lightning<2.2\n", "unsafe"),
     ("lightning>=2.1\n", "safe")],
)
def test_legacy_precision_follows_the_lightning_pin(tmp_path: Path, pins: str, expected: str | None) -> None:
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": pins,
                      "config.yaml": LEGACY_YAML})
    result = _check(tmp_path, "--select", "legacy-precision-value", "--output-format", "json", "config.yaml")
    found = json.loads(result.stdout)
    if expected is None:
        assert found == []  # 16 is the Lightning 1.x spelling
    else:
        assert [f["fix"]["applicability"] for f in found] == [expected]


def test_target_versions_in_a_precisionlint_toml(tmp_path: Path) -> None:
    _write(tmp_path, {".precisionlint.toml": 'target-versions = { torch = "2.1" }\n',
                      "pyproject.toml": '[project]\nname = "x"\n', "train.py": SCALER})
    assert current().project_for(str(tmp_path / "train.py")).version("torch").describe() == ">=2.1,<2.2"
    result = _check(tmp_path, "--select", "framework-version-mismatch", "train.py")
    assert "train.py:3:10: PL401" in result.stdout and '.precisionlint.toml' in result.stdout


def test_pip_installs_in_a_dockerfile_are_pins(tmp_path: Path) -> None:
    """A training image's Dockerfile declares its environment: `RUN pip install` requirements are read (with
    continuation lines, several commands and pip options), while shell variables, paths and URLs say nothing."""
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n',
        "training/Dockerfile": (
            "FROM nvcr.io/nvidia/pytorch:22.12-py3\n"
            "ARG TORCH=2.1.2\n"
            "RUN pip install --no-cache-dir -i https://example.invalid/simple \\\n"
            "    # the trainer\n"
            "    pytorch-lightning==1.8.6 transformers==4.25.1 \\\n"
            "    && python -m pip install 'deepspeed>=0.9,<0.10' torch==$TORCH ./local git+https://x.invalid/y\n"
            "RUN echo pip install accelerate==0.1\n"
        ),
        "training/configs/trainer.yaml": LEGACY_YAML,
    })
    project = current().project_for(str(tmp_path / "training" / "configs" / "trainer.yaml"))
    assert project.version("lightning").describe() == "==1.8.6"
    assert project.version("transformers").describe() == "==4.25.1"
    assert project.version("deepspeed").describe() == ">=0.9,<0.10"
    assert project.version("torch") is None and project.version("accelerate") is None
    result = _check(tmp_path, "--select", "legacy-precision-value", "--output-format", "json", "training")
    assert json.loads(result.stdout) == []  # 16 is the spelling of the pinned Lightning 1.8


# A helper that opens the legacy CPU autocast (whose dtype defaults to bfloat16) inside a caller's float16 region.
NESTED = '''import torch


def inner(x):
    with torch.cpu.amp.autocast():
        return (x @ x).dtype


def run():
    with torch.autocast("cpu", dtype=torch.float16):
        return inner(torch.ones(2, 2))
'''


def _run_module(text: str) -> object:
    import warnings

    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the deprecated spelling warns on this torch
        exec(compile(text, "train.py", "exec"), namespace)  # noqa: S102 - our own fixture, never a user's script
        return namespace["run"]()  # type: ignore[operator]


def test_deprecated_autocast_fix_keeps_the_legacy_default_dtype(tmp_path: Path) -> None:
    """`torch.amp.autocast("cpu")` takes the autocast dtype current when it is built (float16 inside the caller's
    region), where `torch.cpu.amp.autocast()` always meant bfloat16: the safe rewrite writes the old default out,
    and the fixed program computes in the same dtype as before (real torch on the CPU)."""
    torch = pytest.importorskip("torch")
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": "torch>=2.4\n",
                      "train.py": NESTED})
    [finding] = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json",
                                  "train.py").stdout)
    assert finding["fix"]["applicability"] == "safe"
    _check(tmp_path, "--select", "deprecated-amp-api", "--fix", "train.py")
    fixed = (tmp_path / "train.py").read_text()
    assert 'torch.amp.autocast("cpu", dtype=torch.bfloat16)' in fixed
    assert _run_module(NESTED) == _run_module(fixed) == torch.bfloat16
    # without the dtype written out, the rewrite would have changed the dtype that runs
    assert _run_module(NESTED.replace("torch.cpu.amp.autocast()", 'torch.amp.autocast("cpu")')) == torch.float16


def test_deprecated_autocast_with_unpacked_arguments_is_an_unsafe_fix(tmp_path: Path) -> None:
    """`torch.cuda.amp.autocast(**kwargs)`: whether kwargs names a dtype is not known, so the rewrite may change
    it (and a dtype written out could clash with one in kwargs): unsafe, whatever torch the project declares."""
    source = "import torch\n\n\ndef step(kwargs):\n    with torch.cuda.amp.autocast(**kwargs):\n        pass\n"
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": "torch>=2.5\n",
                      "train.py": source})
    [finding] = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json",
                                  "train.py").stdout)
    assert finding["fix"]["applicability"] == "unsafe"
    assert "current autocast dtype" in finding["fix"]["description"]
    _check(tmp_path, "--select", "deprecated-amp-api", "--fix", "train.py")
    assert (tmp_path / "train.py").read_text() == source


@pytest.mark.parametrize(
    "pins,severity",
    [("torch==2.1.2\n", "info"), ("torch>=2.1,<2.3\n", "info"), ("torch>=2.1,<=2.4\n", "warning"),
     ("torch>=1.13\n", "warning"), ("numpy\n", "warning")],
)
def test_deprecated_amp_api_is_a_note_where_no_declared_torch_warns(tmp_path: Path, pins: str,
                                                                     severity: str) -> None:
    """torch warns about these spellings from 2.4; a project pinned below that runs correct code without the
    warning (LLaVA-NeXT pins torch==2.1.2, OpenNMT-py torch>=2.1,<2.3): the finding is kept as information."""
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', "requirements.txt": pins, "train.py": DEPRECATED})
    [finding] = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json",
                                  "train.py").stdout)
    assert finding["severity"] == severity
    assert ("does not warn yet" in _said(finding)) == (severity == "info")


def test_the_torch_of_an_official_base_image_is_a_pin(tmp_path: Path) -> None:
    """`FROM pytorch/pytorch:1.10.0-...` (directly or through an ARG default, as MLCommons' reference benchmarks
    write it) is the torch the image runs: on 1.10 `torch.cuda.amp` does not warn yet, so deprecated-amp-api is
    information. A `pip install torch==...` in the final stage replaces the base image's torch; an earlier build
    stage, or an image tag without a release (NVIDIA's monthly containers from 2024 on, `latest`), says nothing."""
    _write(tmp_path, {
        "bench/setup.py": "from setuptools import setup\nsetup(name='bench')\n",
        "bench/Dockerfile": (
            "ARG FROM_IMAGE_NAME=pytorch/pytorch:1.10.0-cuda11.3-cudnn8-devel\n"
            "# ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:22.01-py3\n"
            "FROM ${FROM_IMAGE_NAME}\n"
            "RUN pip install --no-cache-dir -r requirements.txt\n"
        ),
        "bench/train.py": "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n",
        "upgraded/setup.py": "from setuptools import setup\nsetup(name='upgraded')\n",
        "upgraded/Dockerfile": ("FROM pytorch/pytorch:1.13.0-cuda11.6-cudnn8-devel AS base\n"
                                "RUN pip install torch==2.4.1\n"),
        "staged/setup.py": "from setuptools import setup\nsetup(name='staged')\n",
        "staged/Dockerfile": ("FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel AS build\n"
                              "FROM nvcr.io/nvidia/pytorch:24.06-py3\n"),
        "conda/setup.py": "from setuptools import setup\nsetup(name='conda')\n",
        "conda/Dockerfile": ("FROM pytorch/pytorch:1.13.0-cuda11.6-cudnn8-devel\n"
                             "RUN conda install -y pytorch=2.4 pytorch-cuda=12.1 -c pytorch -c nvidia\n"),
        "inherited/setup.py": "from setuptools import setup\nsetup(name='inherited')\n",
        "inherited/Dockerfile": ("FROM --platform=linux/amd64 pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel AS base\n"
                                 "RUN apt-get update\nFROM base\nRUN pip install -r requirements.txt\n"),
    })
    bench = current().project_for(str(tmp_path / "bench" / "train.py")).version("torch")
    assert bench is not None and bench.declared("torch") == (
        "torch==1.10.0 (Dockerfile FROM pytorch/pytorch:1.10.0-cuda11.3-cudnn8-devel)")
    assert current().project_for(str(tmp_path / "upgraded" / "x.py")).version("torch").describe() == "==2.4.1"
    assert current().project_for(str(tmp_path / "staged" / "x.py")).version("torch") is None
    assert current().project_for(str(tmp_path / "inherited" / "x.py")).version("torch").describe() == "==2.1"
    assert current().project_for(str(tmp_path / "conda" / "x.py")).version("torch") is None  # replaced, version unread
    result = _check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", "bench")
    [finding] = json.loads(result.stdout)
    assert finding["severity"] == "info" and "the declared torch==1.10 does not warn yet" in _said(finding)


def test_an_nvidia_container_of_2023_or_before_holds_torch_below_2_3(tmp_path: Path) -> None:
    """NVIDIA's monthly containers ship pre-release builds: no release is pinned, but every one of 2023 and before
    holds a build from before the 2.3 cycle (23.12: 2.2.0a0), so `torch<2.3` is declared and deprecated-amp-api
    is information there (DeepLearningExamples builds each model on one). Later containers say nothing."""
    _write(tmp_path, {
        "ssd/setup.py": "from setuptools import setup\nsetup(name='ssd')\n",
        "ssd/Dockerfile": ("ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:22.10-py3\nFROM ${FROM_IMAGE_NAME}\n"
                           "RUN pip install --no-cache-dir -r requirements.txt\n"),
        "ssd/train.py": "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n",
        "late/setup.py": "from setuptools import setup\nsetup(name='late')\n",
        "late/Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.07-py3\n",
    })
    ssd = current().project_for(str(tmp_path / "ssd" / "train.py")).version("torch")
    assert ssd is not None and ssd.describe() == "<2.3" and ssd.all_below((2, 4))
    assert current().project_for(str(tmp_path / "late" / "x.py")).version("torch") is None
    result = _check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", "ssd")
    [finding] = json.loads(result.stdout)
    assert finding["severity"] == "info" and "the declared torch<2.3 does not warn yet" in _said(finding)


def test_a_part_s_own_requirements_file_is_read(tmp_path: Path) -> None:
    """A repository of several parts names each part's list after it (Vision Mamba: det/det-requirements.txt
    pins torch==2.1.2+cu121 for its detectron2 copy, vim/vim_requirements.txt): they are requirements files."""
    _write(tmp_path, {
        "det/setup.py": "from setuptools import setup\nsetup(name='det')\n",
        "det/det-requirements.txt": "torch==2.1.2+cu121\nfvcore\n",
        "det/engine/train_loop.py": "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n",
        "seg/setup.py": "from setuptools import setup\nsetup(name='seg')\n",
        "seg/seg_requirements.txt": "torch==1.12.1\n",
        "seg/notes_requirements.md": "torch==9.9\n",
    })
    det = current().project_for(str(tmp_path / "det" / "engine" / "train_loop.py"))
    assert det.version("torch").describe() == "==2.1.2"
    assert current().project_for(str(tmp_path / "seg" / "x.py")).version("torch").describe() == "==1.12.1"
    result = _check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", "det")
    [finding] = json.loads(result.stdout)
    assert finding["severity"] == "info"


def test_the_whole_project_s_environment_folders_declare_versions(tmp_path: Path) -> None:
    """docker/environment.yml, requirements/<part>/*.txt, a conda file named after the project and lock files
    declare versions; an example's own requirements.txt and a folder that is a project of its own do not count
    for the rest, and a config named like an environment file declares nothing."""
    _write(tmp_path, {
        "setup.py": "",
        "docker/environment.yml": "name: x\ndependencies:\n  - pip:\n    - pytorch-lightning==1.8.6\n",
        "requirements/pytorch/base.txt": "torch>=2.2\n",
        "docker/tools/setup.py": "",
        "docker/tools/requirements.txt": "transformers==4.30\n",
        "examples/old/requirements.txt": "accelerate==0.10\n",
        "configs/env/default.yaml": "dependencies: [a]\n",
        "uv.lock": '[[package]]\nname = "deepspeed"\nversion = "0.14.4"\nsource = { registry = "x" }\n',
        "src/train.py": "",
    })
    project = current().project_for(str(tmp_path / "src" / "train.py"))
    assert project.version("lightning").declared("lightning") == "pytorch-lightning==1.8.6 (docker/environment.yml)"
    assert project.version("torch").describe() == ">=2.2"
    assert project.version("deepspeed").describe() == "==0.14.4"
    assert project.version("transformers") is None
    assert project.version("accelerate") is None


def test_a_conda_file_named_after_the_project_and_pixi(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\n',
        "speech_env.yml": "name: speech\ndependencies:\n  - python=3.8\n  - pytorch-lightning=1.8\n",
        "pixi.toml": '[dependencies]\npytorch = "2.1.*"\n[feature.cuda.pypi-dependencies]\n'
                     'transformers = { version = ">=4.40" }\n',
        "train.py": "",
    })
    project = current().project_for(str(tmp_path / "train.py"))
    assert project.version("lightning").describe() == ">=1.8,<1.9"
    assert project.version("torch").describe() == ">=2.1,<2.2"
    assert project.version("transformers").describe() == ">=4.40"


def test_a_changed_environment_file_under_docker_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    _write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n',
                      "docker/environment.yml": "dependencies:\n  - pytorch-lightning=1.8\n",
                      "config.yaml": LEGACY_YAML})
    first = _check(tmp_path, "--select", "legacy-precision-value", "--output-format", "json", "config.yaml")
    assert json.loads(first.stdout) == []
    (tmp_path / "docker/environment.yml").write_text("dependencies:\n  - pytorch-lightning=2.2\n")
    second = _check(tmp_path, "--select", "legacy-precision-value", "--output-format", "json", "config.yaml")
    assert [f["code"] for f in json.loads(second.stdout)] == ["PL102"]


def _said(finding: dict) -> str:
    """A JSON finding's message and its notes (the explanation of a message is a note)."""
    return " ".join([finding["message"], *finding.get("notes", [])])


VENDORED_PART = {
    "pyproject.toml": '[project]\nname = "adapters"\n',
    "requirements.txt": "torch\nfire\n",
    "imagebind_part/requirements.txt": "gradio\ntransformers\n",
    "imagebind_part/ImageBind/requirements.txt": "torch==1.13.0\ntorchvision==0.14.0\n",
    "imagebind_part/ImageBind/data.py": "import torch\n",
    "imagebind_part/ImageBind/models/encoder.py": "import torch\n",
    "imagebind_part/llama/adapter.py": "from ImageBind.models import encoder\n",
    "imagebind_part/engine.py": DEPRECATED,
}


def test_a_part_s_vendored_package_pins_count_for_the_part(tmp_path: Path) -> None:
    """LLaMA-Adapter's imagebind_LLM: the part imports its vendored ImageBind package, whose own requirements.txt
    pins torch==1.13.0 (the part's setup installs it first), and declares no torch itself. Its files run under
    that torch, not the root's unpinned one; a part beside it that imports nothing of the kind keeps the root's."""
    _write(tmp_path, {**VENDORED_PART, "other_part/requirements.txt": "gradio\n", "other_part/engine.py": DEPRECATED})
    found = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", ".").stdout)
    by_path = {f["path"]: f for f in found}
    part = by_path["imagebind_part/engine.py"]
    assert part["severity"] == "info" and "torch==1.13 does not warn yet" in _said(part)
    assert by_path["other_part/engine.py"]["severity"] == "warning"


def test_a_changed_vendored_package_pin_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    _write(tmp_path, VENDORED_PART)
    first = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", ".").stdout)
    assert [f["severity"] for f in first] == ["info"]
    (tmp_path / "imagebind_part/ImageBind/requirements.txt").write_text("torch>=2.4\n")
    second = json.loads(_check(tmp_path, "--select", "deprecated-amp-api", "--output-format", "json", ".").stdout)
    assert [f["severity"] for f in second] == ["warning"]


def test_above_a_named_folder_with_no_boundary_only_pins_count_not_the_packages_its_code_imports(
        tmp_path: Path) -> None:
    """No pyproject.toml, setup.py, setup.cfg or .git anywhere above: the project ends at the folder the user
    named. A folder above it still lends its pins, but not those of a package that the folder's own code imports
    (that code is not the project's: a home folder's or /tmp's, where looking for it read hundreds of files)."""
    _write(tmp_path, {
        "outer/ImageBind/requirements.txt": "torch==1.13.0\n",
        "outer/ImageBind/data.py": "import torch\n",
        "outer/run.py": "from ImageBind import data\n",
        "outer/proj/engine.py": DEPRECATED,
    })
    args = ("--select", "deprecated-amp-api", "--output-format", "json", "--no-cache")
    named_inner = json.loads(_check(tmp_path / "outer" / "proj", *args, ".").stdout)
    assert [f["severity"] for f in named_inner] == ["warning"]
    named_outer = json.loads(_check(tmp_path / "outer", *args, ".").stdout)
    assert [(f["path"], f["severity"]) for f in named_outer] == [("proj/engine.py", "info")]
    (tmp_path / "outer/requirements.txt").write_text("torch==1.13.0\n")  # a folder's own pins still count
    named_inner = json.loads(_check(tmp_path / "outer" / "proj", *args, ".").stdout)
    assert [f["severity"] for f in named_inner] == ["info"]
