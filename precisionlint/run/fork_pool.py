"""Worker processes forked from this one, fed chunks of files through pipes, with the files' bytes in a shared
file in memory.

Why not concurrent.futures' ProcessPoolExecutor, which this replaces: importing it (multiprocessing,
concurrent.futures, logging) took 18 ms of a cold run's serial start; its feeder and manager threads compete with
the reading loop for the interpreter lock, so a worker could wait for its first chunk until the reading was done;
and every byte of every file went through pickling and a pipe. Here each worker has its own pipe of tasks and its
own pipe of results; a task is a few hundred bytes (which files, and where their bytes are in the arena), written
by this thread directly; and the bytes are written once into an anonymous in-memory file (the arena) that the
workers read with pread. pytorch-lightning's cold run: 30 ms less wall time, 40 ms less CPU (benchmarks/run.py's
docstring).

The first worker is forked as soon as the run knows it has many files. It imports the parsers and rules while this
process reads the files, then forks the other workers, which start with everything imported: the imports are paid
once, on a core that would otherwise wait, instead of once per worker when the first chunk arrives.

Workers never outlive the run: they ignore SIGINT (the terminal sends it to the whole group; this process
decides), ask the kernel to kill them when the process that forked them ends (precisionlint.core.interrupts), end when
their task pipe closes, and are killed by `stop()`. A worker that dies leaves its unfinished chunks to this
process (`collect` returns them). This process never blocks writing to a worker (tasks are queued and written as
the pipe takes them), so a worker blocked writing its results can never wait on this process in turn.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precisionlint.core.model import SourceFile
    from precisionlint.engine.results import FileResult

AHEAD = 2  # chunks handed to a worker and not yet done: one to work on, one ready when it finishes
# The bytes of files queued and not yet handed to a worker, past which `submit` waits for a worker to take a chunk:
# the reading stays this far ahead of the workers at most, so that a run's memory does not grow with its tree
# (without it the parent read a 4x corpus to the end while the workers were at its start: 265 MB of queued bytes).
WINDOW_BYTES = 2 << 20
# A file whose analysis is estimated to need this much memory or more (engine.check.estimated_memory: a Python
# file of 256 kB or more, a JSON config of 1.6 MB, a notebook of 4 MB) makes its chunk heavy: more than a worker's
# own size (about 25 MB). A heavy chunk goes to a worker only while no other worker holds one, and the others
# take the light chunks meanwhile: two 1 MB training scripts analysed at once took twice the memory of one.
HEAVY_BYTES = 16 << 20
_HEADER = 8  # bytes of a frame's length, before its pickled payload
_READ = 1 << 20

Work = Callable[[list[tuple[int, "SourceFile", "bytes | None"]]], list[tuple[int, "FileResult | None"]]]


class _Arena:
    """An anonymous file in memory that holds the bytes of the chunks handed out and not yet done. Space is
    reused from the start once the chunks that held it are done, so it stays about the size of the work in
    flight."""

    REUSE_FROM = 1 << 20  # bytes written before space at the start is reused

    def __init__(self) -> None:
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("precisionlint-arena", getattr(os, "MFD_CLOEXEC", 0))
        else:  # a platform with fork but no memfd: an unlinked temporary file
            import tempfile

            handle = tempfile.TemporaryFile()
            self.fd = os.dup(handle.fileno())
            handle.close()
        self.end = 0
        self.size = 0  # the file's length: the end of the furthest bytes written
        self.live: dict[int, tuple[int, int]] = {}  # chunk number -> its range

    def put(self, number: int, data: list[bytes | None]) -> list[tuple[int, int] | None]:
        """Write a chunk's bytes; where each file's bytes are (None for a file with no bytes to send)."""
        size = sum(len(d) for d in data if d)
        start = self.end
        if start >= self.REUSE_FROM and all(low >= size for low, _ in self.live.values()):
            start = 0  # the start is free again
            # and what lies past the chunks in flight is given back (a large file's bytes, done with)
            self._shrink(max([size, *(high for _, high in self.live.values())]))
        while True:  # never over bytes a worker has yet to read: past any range in flight that it would overlap
            above = [high for low, high in self.live.values() if low < start + size and start < high]
            if not above:
                break
            start = max(above)
        self.live[number] = (start, start + size)
        self.end = start + size
        self.size = max(self.size, self.end)
        joined = b"".join(d for d in data if d)
        written = 0
        while written < len(joined):
            written += os.pwrite(self.fd, joined[written:], start + written)
        where: list[tuple[int, int] | None] = []
        offset = start
        for d in data:
            if d is None:
                where.append(None)
            else:
                where.append((offset, len(d)))
                offset += len(d)
        return where

    def done(self, number: int) -> None:
        self.live.pop(number, None)

    def _shrink(self, length: int) -> None:
        if length < self.size:
            try:
                os.ftruncate(self.fd, length)
            except OSError:  # pragma: no cover - the memory stays with the file; nothing is lost
                return
            self.size = length

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def _size(data: bytes | None) -> int:
    return len(data) if data else 1


class _Worker:
    __slots__ = ("tasks", "results", "inbox", "outbox", "chunks", "alive")

    def __init__(self, tasks: int, results: int) -> None:
        self.tasks = tasks  # write end of its task pipe (non-blocking)
        self.results = results  # read end of its result pipe (non-blocking)
        self.inbox = bytearray()  # result bytes read, not yet a whole frame
        self.outbox = bytearray()  # task bytes not yet taken by the pipe
        self.chunks: deque[int] = deque()  # numbers of the chunks handed to it, not yet done
        self.alive = True


Pipes = list[tuple[tuple[int, int], tuple[int, int]]]


class Spare:
    """A first worker forked before the run has found its files, waiting for its setup. A worker forked later
    starts with everything this process holds by then, the tree's file list and what finding it left, and counts
    all of it in its memory (about 6 MB per worker for 8,000 files); one forked early does not, nor do the workers
    it forks in turn. `ForkPool(spare=..., setup=...)` takes it: the setup goes to `prepare` in the worker, which
    sets up what `work` reads there and returns the warm-up to run. A spare no pool takes is ended by `close`."""

    def __init__(self, workers: int, prepare: Callable[[object], Callable[[], None]], work: Work) -> None:
        from precisionlint.core.interrupts import before_fork, track

        self.workers = workers
        self.taken = False
        self.arena = _Arena()
        before_fork()
        self.pipes: Pipes = [(os.pipe(), os.pipe()) for _ in range(workers)]
        setup_read, self.setup = os.pipe()
        gc.freeze()  # as for a pool's first worker (ForkPool)
        try:
            self.pid = os.fork()
        except OSError:
            gc.unfreeze()
            for fd in (setup_read, self.setup, *_pipe_ends(self.pipes)):
                os.close(fd)
            self.arena.close()
            raise
        if self.pid == 0:  # the spare: never returns, and never unwinds into the parent's code (a MemoryError)
            try:
                _spare(setup_read, self.setup, self.pipes, self.arena.fd, prepare, work)
            finally:
                os._exit(1)
        gc.unfreeze()
        os.close(setup_read)
        track(self)

    def take(self, setup: object) -> tuple[Pipes, _Arena, int] | None:
        """Send the spare its setup, for a pool to adopt: its pipes, arena and pid; None if it cannot be had (it
        has ended: the pool forks its own first worker)."""
        if self.taken:
            return None
        from precisionlint.core.interrupts import untrack

        self.taken = True
        try:
            payload = pickle.dumps(setup, pickle.HIGHEST_PROTOCOL)
            view = memoryview(payload)
            while view:
                view = view[os.write(self.setup, view):]
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            self.taken = False
            self.close()
            return None
        os.close(self.setup)  # the end of the setup: the spare starts
        untrack(self)  # the pool that adopts it stops it from now on
        return self.pipes, self.arena, self.pid

    def close(self) -> None:
        """End a spare no pool took: its setup pipe closes empty, and it exits."""
        if self.taken:
            return
        from precisionlint.core.interrupts import untrack

        self.taken = True
        for fd in (self.setup, *_pipe_ends(self.pipes)):
            try:
                os.close(fd)
            except OSError:
                pass
        self.arena.close()
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        untrack(self)

    def stop(self) -> None:
        """Kill it now (an interrupt)."""
        if not self.taken:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self.close()


def _pipe_ends(pipes: Pipes) -> list[int]:
    return [fd for (a, b), (c, d) in pipes for fd in (a, b, c, d)]


class ForkPool:
    """`workers` processes that run `work` on the chunks `submit` hands out, in the order they are handed out
    to each. They fork in the constructor: what `work` reads from this process (the run's options) must be set
    before it. With a `spare` (a Spare forked for `workers` and `work`) that can still be had, the first worker
    is the spare, given `setup`, and `warm` is not used."""

    def __init__(self, sources: Sequence[SourceFile], workers: int, work: Work, warm: Callable[[], None],
                 spare: Spare | None = None, setup: object = None,
                 adopt: Callable[[FileResult], None] | None = None) -> None:
        from precisionlint.core.interrupts import before_fork, track

        self.sources = sources
        self.chunks: dict[int, list[int]] = {}  # chunk number -> the indices of its files, until done
        self.queue: deque[tuple[int, list[tuple[int, bytes | None]]]] = deque()  # not yet handed out
        self.queued = 0  # the bytes of the chunks in `queue`
        self.heavy: set[int] = set()  # the files, by index in sources, queued or handed out with a heavy analysis
        self.numbered = 0
        self.first = 0  # the pid of the first worker, which forks the others
        self.workers: list[_Worker] = []
        self.stopped = False
        self.early: list[list[tuple[int, FileResult]]] = []  # results taken while the files were still read
        self.adopt = adopt  # applied to each result as it arrives
        adopted = spare.take(setup) if spare is not None and spare.workers == workers else None
        if adopted is not None:
            pipes, self.arena, self.first = adopted
            self._adopt(pipes)
            track(self)
            return
        self.arena = _Arena()
        before_fork()
        pipes = [(os.pipe(), os.pipe()) for _ in range(workers)]
        # The objects this process holds (the tree's file list among them) are frozen for the fork: a worker's
        # garbage collection would otherwise write to every inherited object's header and copy the pages that
        # hold them, so that each worker paid again for the parent's per-file memory.
        gc.freeze()
        try:
            pid = os.fork()
        except OSError:
            gc.unfreeze()
            for (a, b), (c, d) in pipes:
                for fd in (a, b, c, d):
                    os.close(fd)
            self.arena.close()
            raise
        if pid == 0:  # the first worker: never returns, and never unwinds into the parent's code
            try:
                _first_worker(pipes, self.arena.fd, warm, work)
            finally:
                os._exit(1)
        gc.unfreeze()  # this process collects as before
        self.first = pid
        self._adopt(pipes)
        track(self)  # stopped by the interrupt handler even if the signal lands outside this pool's code

    def _adopt(self, pipes: Pipes) -> None:
        """This process's ends of the workers' pipes, once the first worker has forked with all of them."""
        for (task_read, task_write), (result_read, result_write) in pipes:
            os.close(task_read)
            os.close(result_write)
            os.set_blocking(task_write, False)
            os.set_blocking(result_read, False)
            self.workers.append(_Worker(task_write, result_read))

    # -- handing out -------------------------------------------------------------------------------------------
    def submit(self, files: list[tuple[int, bytes | None]]) -> None:
        """Queue a chunk: (index in sources, bytes read) per file. It is handed to a worker when one has room."""
        self.numbered += 1
        self.queue.append((self.numbered, files))
        self.queued += sum(_size(data) for _, data in files)
        self._weigh(files)
        self.poll(None, None)
        # Backpressure: wait until the workers have taken enough (unless none is left to take anything).
        while self.queued > WINDOW_BYTES and any(w.alive for w in self.workers):
            self.poll(None, None, timeout=None)

    def submit_rest(self, files: list[tuple[int, bytes | None]], smallest: int, largest: int) -> None:
        """Every file is read: queue the last ones, and cut what no worker has taken yet, largest files first,
        into chunks that shrink as the work runs out (from `largest` bytes down to `smallest`), so that the workers
        finish together."""
        self._weigh(files)
        left = [file for _, queued in self.queue for file in queued] + files
        # The largest first: a long file handed out last would keep one worker busy while the others wait.
        left.sort(key=lambda file: -_size(file[1]))
        self.queue.clear()
        remaining = sum(_size(data) for _, data in left)
        self.queued = remaining
        parts = AHEAD * len(self.workers)
        chunk: list[tuple[int, bytes | None]] = []
        filled = 0
        for index, data in left:
            chunk.append((index, data))
            filled += _size(data)
            if filled >= max(smallest, min(largest, remaining // parts)):
                remaining -= filled
                self.numbered += 1
                self.queue.append((self.numbered, chunk))
                chunk, filled = [], 0
        if chunk:
            self.numbered += 1
            self.queue.append((self.numbered, chunk))
        self.poll(None, None)

    def room(self) -> bool:
        """Whether a living worker has fewer than AHEAD chunks."""
        return any(w.alive and len(w.chunks) < AHEAD for w in self.workers)

    def _weigh(self, files: list[tuple[int, bytes | None]]) -> None:
        """Note the files whose analysis is heavy (HEAVY_BYTES)."""
        from precisionlint.engine.check import estimated_memory

        for index, data in files:
            if data is not None and estimated_memory(data, self.sources[index].format) >= HEAVY_BYTES:
                self.heavy.add(index)

    def _next_for(self, worker: _Worker) -> int | None:
        """The position in the queue of the chunk to hand `worker`: the first one, or, while another worker holds
        a heavy chunk, the first that is not heavy."""
        if not self.heavy:
            return 0
        heavy = self.heavy
        busy = any(index in heavy for other in self.workers if other is not worker and other.alive
                   for number in other.chunks for index in self.chunks.get(number, ()))
        for position, (_, files) in enumerate(self.queue):
            if not busy or not any(index in heavy for index, _ in files):
                return position
        return None

    def _hand_out(self) -> None:
        while self.queue:
            ready = sorted((w for w in self.workers if w.alive and len(w.chunks) < AHEAD), key=lambda w: len(w.chunks))
            position: int | None = None
            for worker in ready:
                position = self._next_for(worker)
                if position is not None:
                    break
            else:
                return  # nobody has room, or what is queued waits for the heavy chunk in flight
            if position:
                self.queue.rotate(-position)
                number, files = self.queue.popleft()
                self.queue.rotate(position)
            else:
                number, files = self.queue.popleft()
            self.queued -= sum(_size(data) for _, data in files)
            where = self.arena.put(number, [data for _, data in files])
            task = [(index, self.sources[index], place) for (index, _), place in zip(files, where, strict=True)]
            payload = pickle.dumps((number, task), pickle.HIGHEST_PROTOCOL)
            worker.outbox += len(payload).to_bytes(_HEADER, "little") + payload
            worker.chunks.append(number)
            self.chunks[number] = [index for index, _ in files]
            self._flush(worker)

    def _flush(self, worker: _Worker) -> None:
        while worker.outbox and worker.alive:
            try:
                sent = os.write(worker.tasks, worker.outbox)
            except BlockingIOError:
                return  # the pipe is full: the rest goes when it has room
            except OSError:  # the worker is gone (EPIPE)
                self._lost(worker)
                return
            del worker.outbox[:sent]

    # -- taking back -------------------------------------------------------------------------------------------
    def poll(self, results: list[FileResult | None] | None, tick: Callable[[int], None] | None,
             timeout: float | None = 0) -> None:
        """Take the results that have arrived (waiting up to `timeout` seconds for some, None: until something
        happens), write queued tasks where pipes have room, and hand out queued chunks where workers have room."""
        self._hand_out()
        living = [w for w in self.workers if w.alive]
        if not living:
            return
        readable = {w.results: w for w in living}
        writable = {w.tasks: w for w in living if w.outbox}
        try:
            ready, can_write, _ = select.select(list(readable), list(writable), [], timeout)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; a handler that raises ends the run
            return
        for fd in can_write:
            self._flush(writable[fd])
        for fd in ready:
            self._receive(readable[fd], results, tick)
        self._hand_out()

    def _receive(self, worker: _Worker, results: list[FileResult | None] | None,
                 tick: Callable[[int], None] | None) -> None:
        ended = False
        while True:
            try:
                part = os.read(worker.results, _READ)
            except BlockingIOError:
                break
            except OSError:
                part = b""
            if not part:
                ended = True  # ended or died: what it had not returned is left to the caller
                break
            worker.inbox += part
        while len(worker.inbox) >= _HEADER:
            size = int.from_bytes(worker.inbox[:_HEADER], "little")
            if len(worker.inbox) < _HEADER + size:
                break
            number, done = pickle.loads(worker.inbox[_HEADER:_HEADER + size])
            del worker.inbox[:_HEADER + size]
            if self.adopt is not None:
                for _, result in done:
                    if result is not None:
                        self.adopt(result)
            if worker.chunks and worker.chunks[0] == number:
                worker.chunks.popleft()
            self.arena.done(number)
            indices = self.chunks.pop(number, None)
            if indices is not None and self.heavy:
                self.heavy.difference_update(indices)
            if results is not None:
                for index, result in done:
                    results[index] = result
                if tick is not None:
                    tick(len(done))
            else:  # a poll while reading: kept until collect() places them
                self.early.append(done)
        if ended:
            self._lost(worker)

    def _lost(self, worker: _Worker) -> None:
        worker.alive = False
        for fd in (worker.tasks, worker.results):
            try:
                os.close(fd)
            except OSError:
                pass
        worker.outbox.clear()

    def collect(self, results: list[FileResult | None], tick: Callable[[int], None]) -> list[tuple[int, bytes | None]]:
        """Wait for every chunk; put each result at its place. Returns the files that no worker finished (a
        worker died), with their bytes where this process still has them, for the caller to check itself."""
        try:
            for done in self.early:
                for index, result in done:
                    results[index] = result
                tick(len(done))
            self.early = []
            while any(w.alive and w.chunks for w in self.workers) or (self.queue and self.room()):
                self.poll(results, tick, timeout=None)
        except BaseException:  # KeyboardInterrupt, SIGTERM: stop now, do not work through the queue
            self.stop()
            raise
        undone: list[tuple[int, bytes | None]] = [file for _, files in self.queue for file in files]
        undone += [(index, None) for indices in self.chunks.values() for index in indices]
        self.queue.clear()
        self.queued = 0
        self.close()
        return sorted(undone, key=lambda file: file[0])

    # -- ending ------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Let the workers end (their task pipes close) and wait for them. A pool that was never given work is
        killed instead: its first worker may still be importing."""
        from precisionlint.core.interrupts import untrack

        for worker in self.workers:
            if worker.alive:
                self._lost(worker)
        if not self.numbered:
            self._kill()
        try:
            os.waitpid(self.first, 0)  # the first worker waits for the others before it ends
        except OSError:
            pass
        self.arena.close()
        untrack(self)

    def stop(self) -> None:
        """Kill the workers now (a Ctrl-C, SIGTERM, or an error in this process): never wait for their work."""
        if not self.stopped:
            self.stopped = True
            self._kill()
            self.close()

    def _kill(self) -> None:
        # The first worker, a child of this process: the kernel kills the others when it dies (they asked
        # with PR_SET_PDEATHSIG; elsewhere they watch it), and their task pipes are closed.
        try:
            os.kill(self.first, signal.SIGKILL)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------------------
# In the workers
# ---------------------------------------------------------------------------------------------------------------


def _spare(setup_read: int, setup_write: int, pipes: Pipes, arena: int,
           prepare: Callable[[object], Callable[[], None]], work: Work) -> None:
    """A spare first worker: wait for the setup (none: the run did not need it), then be the first worker.
    Never returns."""
    try:
        from precisionlint.core.interrupts import die_with_parent

        die_with_parent()
        os.close(setup_write)
        received = bytearray()
        while True:
            part = os.read(setup_read, _READ)
            if not part:
                break
            received += part
        os.close(setup_read)
        if not received:
            os._exit(0)
        setup = pickle.loads(received)
        del received  # the worker lives on; the setup's bytes need not
        warm = prepare(setup)
        del setup
    except BaseException:  # noqa: BLE001 - a worker never unwinds into the parent's code
        os._exit(1)
    _first_worker(pipes, arena, warm, work, watching=True)


def _first_worker(pipes: Pipes, arena: int, warm: Callable[[], None], work: Work, watching: bool = False) -> None:
    """The first worker: warm up, fork the others from this warm state, serve the last pipe, wait for the
    others. Never returns. `watching`: it already watches the parent (a spare)."""
    code = 0
    try:
        from precisionlint.core.interrupts import die_with_parent

        if not watching:
            die_with_parent()  # ignore Ctrl-C (the parent decides), and never outlive the parent
        for (_, task_write), (result_read, _) in pipes:
            os.close(task_write)  # only the parent writes tasks and reads results
            os.close(result_read)
        try:
            warm()
        except Exception:  # noqa: BLE001 - a warm-up is only an optimisation: the work imports what it needs
            pass
        from precisionlint.core.interrupts import before_fork

        before_fork()  # the others watch this worker, which forks them
        gc.freeze()  # what the warm-up imported is shared with the others, not copied by their collections
        children: list[int] = []
        mine = len(pipes) - 1
        for number in range(len(pipes) - 1):
            try:
                pid = os.fork()
            except OSError:
                continue  # its pipe is closed below: the parent redoes its chunks
            if pid == 0:
                children = []
                mine = number
                die_with_parent()  # ends with the first worker (which the parent kills or outlives)
                break
            children.append(pid)
        for number, ((task_read, _), (_, result_write)) in enumerate(pipes):
            if number != mine:
                os.close(task_read)
                os.close(result_write)
        task_read, result_write = pipes[mine][0][0], pipes[mine][1][1]
        _serve(task_read, result_write, arena, work)
        os.close(result_write)
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    except BaseException:  # noqa: BLE001 - a worker never unwinds into the parent's code
        code = 1
    os._exit(code)


def _serve(tasks: int, out: int, arena: int, work: Work) -> None:
    """Run chunks until the task pipe closes: one frame in, one frame of results out."""
    inbox = bytearray()
    trim = _trimmer()
    while True:
        while len(inbox) < _HEADER or len(inbox) < _HEADER + int.from_bytes(inbox[:_HEADER], "little"):
            part = os.read(tasks, _READ)
            if not part:
                return  # the parent closed the pipe: no more work
            inbox += part
        size = int.from_bytes(inbox[:_HEADER], "little")
        number, task = pickle.loads(inbox[_HEADER:_HEADER + size])
        del inbox[:_HEADER + size]
        chunk = [(index, source, os.pread(arena, place[1], place[0]) if place is not None else None)
                 for index, source, place in task]
        _send(out, (number, work(chunk)))
        del chunk, task
        if trim is not None:
            trim(0)


def _trimmer() -> Callable[[int], object] | None:
    """glibc's malloc_trim, where there is one: after each chunk a worker gives the system back the free pages of
    its heap. What a file's analysis freed stays in the heap otherwise (its objects of 512 bytes to 128 kB come
    from malloc's heap, not pymalloc's arenas or their own maps), so that each worker held, to the end of the run,
    the most its largest analyses ever needed at once, and the workers' sum peaked with all of them at their
    highest together. A fraction of a millisecond a chunk."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def _send(out: int, message: object) -> None:
    payload = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(payload).to_bytes(_HEADER, "little") + payload)
    while view:
        view = view[os.write(out, view):]
