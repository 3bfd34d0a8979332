"""The zygote: a worker that has imported torch and triton once, and forks each run's worker from there.

    python -m triton_lens.trace_engine.process.zygote SOCKET_FD     (started by the runner: zygote_client.py)

Why: importing torch and triton is most of a run's start (3-6 s of CPU on a loaded 2-core machine); a
fork of a process that has done it takes milliseconds. The language server reruns a file on every
edit, `triton-lens check` runs many files, a test suite runs hundreds of scripts.

What a run gets is what a cold worker gets (runner._Worker): its own session and process group, a
supervisor (supervisor.supervise) that is a child subreaper and ends every process below it with the
run, and a worker that has done worker.prepare() and then serves the one job it reads on stdin. The
zygote forks the supervisor, which forks the worker; nothing of one run reaches the next (each forks
from the zygote's state, which runs no user code). The zygote only forks and reports exits.

Protocol, over a SOCK_SEQPACKET socket pair with the runner (one message each):
    runner -> zygote   {"run": 1} with five descriptors attached: the worker's stdin, stdout, stderr,
                       its frame pipe and its limits socket (the runner keeps the other ends)
    zygote -> runner   {"ready": PID} once, after the imports; {"forked": PID} for each "run", in order;
                       {"exited": PID, "status": WAITSTATUS} when a supervisor it forked has exited.
It exits when the runner closes its end or dies (PR_SET_PDEATHSIG, and a check each second); its
supervisors then get SIGTERM (their PR_SET_PDEATHSIG) and end their runs.

It starts no thread: a fork copies only the calling thread, and a lock another thread held would stay
held in every worker.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import sys
from typing import Any

from ..recording import stream
from . import process_tree, supervisor, worker

_FDS_PER_RUN = 5


def _send(sock: socket.socket, msg: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(msg).encode())
    except OSError:
        os._exit(0)  # the runner is gone


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, {"exited": pid, "status": status})


def _become_run(fds: list[int], closing: list[int], spawn_dir: str) -> None:
    """In the forked child: the run's supervisor, whose worker serves the job. Never returns."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in closing:
        os.close(fd)
    os.setsid()  # as start_new_session=True for a cold worker: the script's killpg(0) stays in its run
    stdin, stdout, stderr, frames, limits = fds
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)

    def start_worker() -> None:
        code = 1
        try:
            worker._exit_with_parent()
            code = worker.serve(frames, limits, spawn_dir)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except (OSError, ValueError):
                    pass
            worker._REAL_EXIT(code)

    supervisor.supervise(start_worker)


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[0]))
    runner = os.getppid()
    supervisor._prctl(supervisor.PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != runner:
        return
    spawn_dir = worker.prepare()
    worker.import_what_runs_import()  # what each run would import after the fork (its first hints wait for it)
    stream.grow_descriptor_table()  # (one thread here: no grace period for it in each run)
    # Every object so far out of the cycle collector's reach: a forked run's collections would otherwise
    # walk (and write to, copying on write) the zygote's whole heap of torch and triton, 0.1 s a run.
    gc.collect()
    gc.freeze()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wakeup fd is written
    signal.set_wakeup_fd(wake_w)
    _send(sock, {"ready": os.getpid()})
    collapsed = False
    while True:
        try:
            readable: list[int] = select.select([sock.fileno(), wake_r], [], [], 1.0)[0]
        except InterruptedError:
            readable = []
        if os.getppid() != runner:
            return
        if not readable and not collapsed:
            # Once, at its first idle second (not before "ready": a run's start would wait for it): the
            # imports' heap onto huge pages, so that a worker forked from here forks a split launch's
            # children faster (process_tree.collapse_heap: 50-300 ms, where 4 cores or more repay it).
            process_tree.collapse_heap(where_splits_fork_3=True)
            collapsed = True
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
        _reap(sock)
        if sock.fileno() not in readable:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, 4096, _FDS_PER_RUN)
        except OSError:
            return
        if not data:
            return  # the runner closed its end
        if len(fds) != _FDS_PER_RUN:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            try:
                _become_run(fds, [sock.fileno(), wake_r, wake_w], spawn_dir)
            finally:
                os._exit(127)
        for fd in fds:
            os.close(fd)
        _send(sock, {"forked": pid})


if __name__ == "__main__":
    main(sys.argv[1:])
