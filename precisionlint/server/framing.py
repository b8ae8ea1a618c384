"""The connection to the editor, kept alive through its mistakes: framing that recovers, and an answer to every
request.

pygls 2.1.1's reader trusts each `Content-Length`. A client that counts the body in characters instead of bytes
(a common bug: any non-ASCII text makes the count short) leaves the rest of that body in front of the next header,
and from then on no header line matches: the server stays alive and never handles another message. Here a
body that is not JSON is read on, byte by byte, until it is (a count too short), or until a header line shows
where the next message starts; and a header line is recognised wherever it ends a line, so the reader finds the
next message again whatever came before it. A count too large is the opposite case: the client sends the
message and waits for the answer, and a reader that waits for the bytes promised waits for ever. Here the client's
bytes are read as they arrive (ChunkReader), and a body whose bytes so far are a whole JSON message is handled
when nothing more comes for half a second, or at once when what comes next is the next message's header (whose
bytes are then read as that header).

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
_CHUNK = 1 << 16
# How long a body whose bytes so far are a whole JSON message may wait for the rest its Content-Length promises.
# A client sends a message in one write; one that counts past its end (a wrong count) then waits for the answer.
_IDLE = 0.5


class _Futures(dict):  # type: ignore[type-arg]
    """pygls' table of running handlers. A notification's future leaves it when it is done (SafeProtocol), which
    may be while pygls iterates the table (shutdown cancels every running handler, and cancelling one runs its
    done-callbacks at once): iterating goes over a copy. It once answered `shutdown` with "dictionary changed
    size during iteration" and never shut down."""

    def items(self) -> Any:
        return list(super().items())


class SafeProtocol(LanguageServerProtocol):
    """The LSP protocol, answering every request and keeping no finished notification."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_futures = _Futures(self._request_futures)

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


class ChunkReader:
    """The client's bytes as they arrive (one read1 at a time, in the server's thread pool), buffered here, so
    that a body can be cut short when its Content-Length promises more than the client sends (see
    read_messages) and bytes read past a message can be given back."""

    def __init__(self, stream: Any, executor: Any = None) -> None:
        self.stream = stream
        self.executor = executor
        self.buffer = bytearray()
        self.eof = False
        self._pending: Any = None  # the read under way (it outlives a wait that timed out: nothing is lost)

    async def _fill(self, timeout: float | None = None) -> bool:
        """One more chunk into the buffer; False when none came within `timeout` seconds."""
        import asyncio

        if self._pending is None:
            self._pending = asyncio.get_running_loop().run_in_executor(self.executor, self._read_some)
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return False
        chunk = self._pending.result()
        self._pending = None
        if chunk:
            self.buffer += chunk
        else:
            self.eof = True
        return True

    def _read_some(self) -> bytes:
        read1 = getattr(self.stream, "read1", None)
        return read1(_CHUNK) if read1 is not None else self.stream.read(1)

    async def readline(self) -> bytes:
        """A line, or what is left at the end of the input; at most _MAX_HEADER_LINE + 1 bytes of a longer one."""
        while not self.eof:
            end = self.buffer.find(b"\n")
            if end != -1:
                return self._take(end + 1)
            if len(self.buffer) > _MAX_HEADER_LINE:
                return self._take(len(self.buffer))
            await self._fill()
        return self._take(len(self.buffer))

    async def readexactly(self, size: int) -> bytes:
        """`size` bytes, fewer only at the end of the input."""
        while len(self.buffer) < size and not self.eof:
            await self._fill()
        return self._take(min(size, len(self.buffer)))

    async def read_body(self, size: int, idle: float) -> bytes:
        """A body of `size` bytes; fewer when what came is a whole JSON message and nothing more came for `idle`
        seconds (a Content-Length too large: the client waits for the answer, not sending the rest)."""
        while len(self.buffer) < size and not self.eof:
            if not await self._fill(timeout=idle) and _is_json(bytes(self.buffer)):
                return self._take(len(self.buffer))
        return self._take(min(size, len(self.buffer)))

    def unread(self, data: bytes) -> None:
        """Give back bytes read past the end of a message: they start the next one."""
        self.buffer[0:0] = data

    def _take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


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
        if isinstance(reader, ChunkReader):
            body = await reader.read_body(length, _IDLE)
        else:
            body = await reader.readexactly(length)
        if len(body) < length and body and isinstance(reader, ChunkReader) and not reader.eof:
            logger.warning("a message shorter than its Content-Length was read to its end")
        length = 0
        if not body:
            break
        if _handle(protocol, body, error_handler):
            continue
        end = _message_then_header(body) if isinstance(reader, ChunkReader) else None
        if end is not None:
            # A count too large, and the client sent on: the message, then the start of the next one, which is
            # given back to be read as such.
            logger.warning("a message shorter than its Content-Length was read to its end")
            reader.unread(body[end:])
            _handle(protocol, body[:end], error_handler)
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


def _message_then_header(body: bytes) -> int | None:
    """Where a body that holds a whole JSON message followed by the start of a header line ends that message (in
    bytes); None for anything else."""
    text = body.decode("utf-8", "surrogateescape")
    try:
        _value, end = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    size = len(text[:end].encode("utf-8", "surrogateescape"))
    rest = body[size:].lstrip().lower()
    header = b"content-length:"
    return size if rest and (rest.startswith(header) or header.startswith(rest)) else None


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

    from pygls.io_ import StdoutWriter

    server._stop_event = stop_event = threading.Event()
    reader = ChunkReader(sys.stdin.buffer, server.thread_pool)
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
