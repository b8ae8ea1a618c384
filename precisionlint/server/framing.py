"""The connection to the editor, kept alive through its mistakes: framing that recovers, and an answer to every
request.

pygls 2.1.1's reader trusts each `Content-Length`. A client that counts the body in characters instead of bytes
(a common bug: any non-ASCII text makes the count short) leaves the rest of that body in front of the next header,
and from then on no header line matches: the server stays alive and never handles another message. Here a
body that is not JSON is read on, byte by byte, until it is (a count too short), or until a header line shows
where the next message starts; and a header line is recognised wherever it ends a line, so the reader finds the
next message again whatever came before it.

pygls also leaves some requests unanswered, which makes an editor wait for ever: one whose parameters do not
match the protocol's types (a hover without a position) gets no response, nor does any request after
`shutdown`. Here both get an error response. And pygls keeps, for every notification a coroutine or a thread
handles, its finished future in a table that only responses to requests empty: one entry per didOpen/didClose
for the life of the server. Here a notification's future leaves that table when it is done.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)

_HEADER = re.compile(rb"Content-Length: *(\d+)\r?\n$", re.IGNORECASE)
# A header line longer than this is no header: stop reading it into memory and resynchronise.
_MAX_HEADER_LINE = 1 << 16
_MAX_BODY = 1 << 30


class SafeProtocol(LanguageServerProtocol):
    """The LSP protocol, answering every request and keeping no finished notification."""

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if callback != self._check_handler_result:
            return  # a request: pygls removes its future when it sends the response
        future = self._request_futures.get(msg_id)
        if future is not None:
            futures = self._request_futures

            def release(_done: Any, key: Any = msg_id) -> None:
                futures.pop(key, None)

            future.add_done_callback(release)

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        message_id = getattr(message, "id", None)
        if self._shutdown and method is not None and method != types.EXIT and message_id is not None:
            self._send_response(message_id, error=types.ResponseError(
                code=types.ErrorCodes.InvalidRequest, message="the server is shut down; only 'exit' is accepted"))
            return
        super().handle_message(message)

    def answer_unreadable(self, body: bytes, exc: Exception) -> None:
        """A message that does not fit the protocol's types: a request gets InvalidParams (InvalidRequest without
        a method), a notification or a response is logged and dropped."""
        try:
            raw = json.loads(body)
        except ValueError:
            logger.warning("a message that is not JSON was dropped")
            return
        if not isinstance(raw, dict) or "id" not in raw or not isinstance(raw["id"], (int, str)):
            logger.warning("a message that does not fit the protocol was dropped: %s", exc)
            return
        if "method" not in raw:
            logger.warning("a response that does not fit the protocol was dropped: %s", exc)
            return
        code = types.ErrorCodes.InvalidParams if isinstance(raw.get("method"), str) else types.ErrorCodes.InvalidRequest
        first = str(exc.__cause__ or exc).strip().splitlines()
        self._send_response(raw["id"], error=types.ResponseError(
            code=code, message=f"invalid {raw.get('method')!s} request: {first[0] if first else type(exc).__name__}"))


async def read_messages(stop_event: threading.Event, reader: Any, protocol: SafeProtocol,
                        error_handler: Callable[[Exception, Any], Any] | None = None) -> None:
    """pygls' run_async, resynchronising after bad framing (see the module's docstring)."""
    length = 0
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        if len(line) > _MAX_HEADER_LINE:
            length = 0
            continue
        match = _HEADER.search(line)  # anywhere at the end of the line: after the rest of a miscounted body too
        if match is not None:
            length = int(match.group(1))
            continue
        if line.strip() or not length:
            continue  # another header (Content-Type), or the rest of a body: skipped
        if length > _MAX_BODY:
            logger.warning("a message of %s bytes was announced; skipped", length)
            length = 0
            continue
        body = await reader.readexactly(length)
        length = 0
        if not body:
            break
        if _handle(protocol, body, error_handler):
            continue
        # Not JSON: most likely a count in characters, too short for a body with non-ASCII text. Read on, byte
        # by byte, until the body is complete JSON, or until a header line shows where the next message starts.
        more = bytearray()
        while len(more) <= 4 * len(body) + 64:
            byte = await reader.readexactly(1)
            if not byte:
                return
            more += byte
            if byte == b"}" and _handle(protocol, body + bytes(more), error_handler, quiet=True):
                break
            if byte == b"\n":
                match = _HEADER.search(bytes(more))
                if match is not None:
                    logger.warning("a message with a wrong Content-Length was dropped")
                    length = int(match.group(1))
                    break


def _handle(protocol: SafeProtocol, body: bytes, error_handler: Any, quiet: bool = False) -> bool:
    """Handle one body; False when it is not even JSON (perhaps cut short by a wrong count)."""
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except ValueError as exc:
        if not _is_json(body):
            if not quiet:
                logger.warning("a message that is not JSON (a wrong Content-Length?) was dropped")
            return False
        protocol.answer_unreadable(body, exc)
        return True
    except Exception as exc:  # noqa: BLE001 - a body of JSON that the protocol's types refuse
        protocol.answer_unreadable(body, exc)
        return True
    try:
        protocol.handle_message(message)
    except Exception as exc:  # noqa: BLE001 - as pygls: report, and keep serving
        logger.exception("Unable to handle message")
        if error_handler is not None:
            error_handler(exc, None)
    return True


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def start_io(server: LanguageServer) -> None:
    """Serve over stdio as pygls' start_io does, with read_messages as the reader."""
    import asyncio
    import sys

    from pygls.io_ import StdinAsyncReader, StdoutWriter

    server._stop_event = stop_event = threading.Event()
    reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(read_messages(stop_event, reader, server.protocol,  # type: ignore[arg-type]
                                  server.report_server_error))
    except BrokenPipeError:
        logger.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
