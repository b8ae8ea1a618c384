"""A raw LSP client over stdio, for what a well-behaved client (pytest-lsp) cannot send: frames with a wrong
Content-Length, requests whose parameters do not fit the protocol, requests after shutdown; and for long runs
of notifications (benchmarks/server_memory.py). Messages from the server are read by a thread, so that the
server never blocks on a full pipe."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def frame(message: dict[str, Any], count_characters: bool = False) -> bytes:
    """One framed message; `count_characters`: the Content-Length counts characters, not bytes (a client bug)."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    length = len(body.decode("utf-8")) if count_characters else len(body)
    return f"Content-Length: {length}\r\n\r\n".encode("ascii") + body


def rss_kib(pid: int) -> int:
    """The resident memory of a process, in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


class RawClient:
    def __init__(self, folder: Path) -> None:
        environment = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen([sys.executable, "-m", "precisionlint", "server"], cwd=folder,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=environment)
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            self.messages.put(json.loads(stream.read(length)))

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any], count_characters: bool = False) -> None:
        self.send_bytes(frame({"jsonrpc": "2.0", **message}, count_characters))

    def notify(self, method: str, params: Any, count_characters: bool = False) -> None:
        self.send({"method": method, "params": params}, count_characters)

    def request(self, method: str, params: Any = None, message_id: int | None = None) -> int:
        if message_id is None:
            self.next_id += 1
            message_id = self.next_id
        self.send({"id": message_id, "method": method, **({"params": params} if params is not None else {})})
        return message_id

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        """The first message from the server that satisfies `predicate`, or None (timeout, or the server ended)."""
        import time

        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                return None
            if message is None:
                return None
            if predicate(message):
                return message

    def response(self, message_id: int, timeout: float = 30.0) -> dict[str, Any] | None:
        return self.wait_for(lambda m: m.get("id") == message_id and "method" not in m, timeout)

    def initialize(self) -> None:
        answer = self.response(self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}}))
        assert answer is not None and "result" in answer, answer
        self.notify("initialized", {})

    def round_trip(self, timeout: float = 120.0) -> None:
        """A request answered: every message sent before it was read (requests on one connection are handled
        in order of arrival)."""
        answer = self.response(self.request("workspace/executeCommand", {"command": "no-such-command"}), timeout)
        assert answer is not None

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
