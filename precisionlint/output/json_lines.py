"""JSON Lines: the objects of the json format (see json.py), one per line, for streaming consumers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

from precisionlint.output.json import finding_objects

if TYPE_CHECKING:
    from precisionlint.core.model import Finding
    from precisionlint.output import RenderOptions


def render(findings: list[Finding], stream: TextIO, options: RenderOptions) -> None:
    stream.writelines(json.dumps(item) + "\n" for item in finding_objects(findings, options))
