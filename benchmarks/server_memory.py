"""The language server's memory over many notifications: it must stay flat.

    python benchmarks/server_memory.py [--notifications 20000] [--every 2000]

Starts `precisionlint server` over stdio with a raw client (tests/raw_lsp.py), opens and closes one small
Python file again and again (didOpen + didClose: two notifications per cycle; the server checks each opened
buffer and publishes its diagnostics), and prints the server's resident memory (VmRSS, Linux) every `--every`
notifications. A request after the last notification makes sure every one of them was handled.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.raw_lsp import RawClient, rss_kib  # noqa: E402

SCRIPT = "import torch\nwith torch.cuda.amp.autocast():\n    y = 1\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notifications", type=int, default=20_000)
    parser.add_argument("--every", type=int, default=2_000)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="server-memory-") as folder:
        path = Path(folder) / "train.py"
        path.write_text(SCRIPT)
        client = RawClient(Path(folder))
        try:
            client.initialize()
            uri = path.as_uri()
            began = time.perf_counter()
            readings = []
            for sent in range(0, arguments.notifications, 2):
                if sent % arguments.every == 0:
                    client.round_trip()  # every notification so far handled
                    readings.append((sent, rss_kib(client.process.pid)))
                    print(f"{sent:>7} notifications: {readings[-1][1] / 1024:6.1f} MiB", flush=True)
                client.notify("textDocument/didOpen", {"textDocument": {
                    "uri": uri, "languageId": "python", "version": sent, "text": SCRIPT}})
                client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            client.round_trip()
            readings.append((arguments.notifications, rss_kib(client.process.pid)))
            print(f"{arguments.notifications:>7} notifications: {readings[-1][1] / 1024:6.1f} MiB "
                  f"({time.perf_counter() - began:.0f} s)")
            settled = [kib for count, kib in readings if count >= arguments.every]
            print(f"growth after the first {arguments.every}: {(settled[-1] - settled[0]) / 1024:+.1f} MiB")
        finally:
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
