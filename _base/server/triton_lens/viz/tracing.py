"""`@trace(client)`: run a kernel's launches under the interpreter and the trace engine, and hand
each launch to the clients (tracer, sanitizer, profiler, or your own `Client`).
"""

from __future__ import annotations

import functools

from ..model import AccessEvent, LaunchStart, LaunchTrace
from ..trace_engine import ParallelRecorder
from . import interp
from .clients import Access, Client, LaunchInfo, Tracer, make_client, overrides_on_access

_active = 0  # traced launches running in this process (a traced launch never nests one, but be safe)


class _Clients:
    """The clients of one traced launch, fed by the engine's recorder through its callbacks (the recorder
    is composed, not subclassed: it owns its state, this owns the clients'). With workers > 1 a launch's
    programs are split over forked processes (trace_engine/recording/parallel.py), unless a client wants
    every access as it happens (`on_access` runs in this process only)."""

    def __init__(self, clients: list[Client]):
        self.clients = clients
        self.access_clients = [c for c in clients if overrides_on_access(c)]
        self.errors: list[BaseException] = []
        self._info: LaunchInfo | None = None

    def recorder(self, workers: int) -> ParallelRecorder:
        return ParallelRecorder(
            on_launch=self.launch_done,
            on_launch_start=self.launch_started,
            on_access=self.accessed if self.access_clients else None,
            workers=1 if self.access_clients else workers,
        )

    def launch_started(self, start: LaunchStart) -> None:
        self._info = info = LaunchInfo(
            kernel=start.kernel,
            def_file=start.def_file,
            def_line=start.def_line,
            file=start.file,
            line=start.line,
            grid=start.grid,
            tensors=start.tensors,
        )
        for c in self.clients:
            c.on_launch_start(info)

    def accessed(self, e: AccessEvent) -> None:
        assert self._info is not None  # the recorder starts a launch (its grid) before its first access
        a = Access(
            launch=self._info,
            kind=e.site.kind,
            op=e.site.op,
            file=e.site.file,
            line=e.site.line,
            program=e.program,
            tensor=e.tensor,
            lanes=e.lanes,
            active=e.active,
            oob=e.oob,
            _sets=e.sets,
        )
        for c in self.access_clients:
            c.on_access(a)

    def launch_done(self, trace: LaunchTrace) -> None:
        self._info = None
        for c in self.clients:
            try:
                c.on_launch_end(trace)
            except Exception as e:  # raised to the caller once the launch is fully unwound
                self.errors.append(e)


class TracedKernel:
    """What `@trace` returns: launches like the kernel (`kernel[grid](...)`, `kernel.run(...)`) and
    runs each launch under the interpreter and the trace engine, calling the clients."""

    def __init__(self, kernel, clients: list[Client], workers: int = 1):
        self.kernel = kernel  # what the user decorated (JITFunction, Autotuner, Heuristics, ...)
        self.clients = clients
        self.workers = workers
        self._runner = interp.to_interpreted(kernel, bench=_bench)
        functools.update_wrapper(self, _base_fn(kernel), updated=())

    def add_client(self, client: Client) -> None:
        if client in self.clients:
            return
        if type(client) is Tracer and any(type(c) is Tracer for c in self.clients):
            return  # one tracer records each launch once
        self.clients.append(client)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def run(self, *args, grid, warmup=False, **kwargs):
        if warmup:
            return None
        return _run(self, lambda: self._runner[grid](*args, **kwargs))

    def __call__(self, *args, **kwargs):
        # A call from inside another kernel (a traced @jit helper): run it as the interpreter does.
        return self._runner(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"<traced {getattr(self, '__name__', 'kernel')} clients={[c.name for c in self.clients]}>"


def _base_fn(kernel):
    f = kernel
    for _ in range(8):
        inner = getattr(f, "fn", None)
        if inner is None:
            break
        f = inner
    return f


_current: list[ParallelRecorder] = []


def _bench(kernel_call, quantiles=None, **_):
    """An autotuner's timing of one config, on the interpreter; its launches are not reported."""
    rec = _current[-1] if _current else None
    if rec is not None:
        t = rec.benchmark(kernel_call)
    else:
        import time

        t0 = time.perf_counter()
        kernel_call()
        t = (time.perf_counter() - t0) * 1e3
    return [t] * len(quantiles) if quantiles else t


def _run(traced: TracedKernel, launch):
    global _active
    if _active == 0 and interp.engine_hooks_installed():
        # The whole script already runs under the engine (`triton-lens check` / `view`): it records
        # this launch; a second recorder would see out-of-bounds lanes already masked.
        with interp.jit_calls_interpreted():
            return launch()
    clients = _Clients(traced.clients)
    rec = clients.recorder(traced.workers)
    _active += 1
    _current.append(rec)
    try:
        with interp.jit_calls_interpreted(), rec:
            out = launch()
    finally:
        _current.pop()
        _active -= 1
    if clients.errors:
        err = clients.errors[0]
        err.__traceback__ = None  # the client's frames say nothing to the kernel author
        raise err
    return out


def trace(client=None, backend: str = "triton", *, clients=None, workers: int = 1):
    """Decorate a `@triton.jit` kernel (or an autotuned / heuristics one) so its launches run under
    the interpreter and the trace engine and report to `client`:

    - "tracer" (or None): record every launch for the viewer (`launch()`), in `launches`;
    - "sanitizer": report out-of-bounds accesses and races; raise at the end of the launch;
    - "profiler": print per-line memory statistics after each launch;
    - a `Client` instance (or subclass): your own callbacks.

    Stack several: `@trace("sanitizer")` above `@trace("tracer")`, or pass a tuple. The kernel's
    outputs are computed as usual (out-of-bounds lanes are treated as masked and never touch memory).
    `clients=` is Triton-Viz's name for the argument and works the same.

    `workers=N` splits each launch's programs over N processes forked from this one (0: the machine's
    cores, at most 16, less one); what the clients get is the same as with one. A client with its own
    `on_access` keeps launches in one process.
    """
    from ..trace_engine import resolve_workers

    workers = resolve_workers(workers)
    if clients is not None:
        if client is not None:
            raise TypeError("trace() takes `client` or `clients`, not both")
        client = clients
    if backend != "triton":
        raise ValueError(f"backend {backend!r} is not supported: triton_lens traces Triton kernels (backend='triton')")
    if isinstance(client, (list, tuple)):
        specs = list(client)
    else:
        specs = [client]

    bare = _looks_like_kernel(client)  # `@trace` without parentheses: the kernel came as `client`
    if not bare:
        for s in specs:  # an unknown name is an error here, at the decorator, not at the first launch
            make_client(s)

    def decorate(kernel):
        from .config import config

        if config.sanitizer_backend == "off":  # Triton-Viz: tracing switched off, the kernel as it was
            return kernel
        new = [make_client(s) for s in specs]
        if isinstance(kernel, TracedKernel):
            for c in new:
                kernel.add_client(c)
            kernel.workers = max(kernel.workers, workers)
            return kernel
        traced = TracedKernel(kernel, [], workers)
        for c in new:
            traced.add_client(c)
        return traced

    if bare:
        specs = [None]
        return decorate(client)
    return decorate


def _looks_like_kernel(obj) -> bool:
    if obj is None or isinstance(obj, (str, Client, list, tuple, type)):
        return False
    return isinstance(obj, TracedKernel) or (hasattr(obj, "fn") and hasattr(obj, "run"))
