"""A public link to the local viewer through a cloudflared quick tunnel.

`cloudflared tunnel --url http://127.0.0.1:PORT` connects out to Cloudflare and prints (on stderr)
a box with the public address, `https://<words>.trycloudflare.com`. The viewer itself only ever
listens on 127.0.0.1; the tunnel process forwards to it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time

URL_RE = re.compile(r"https://[-a-zA-Z0-9.]+\.trycloudflare\.com")

INSTALL_HINT = (
    "share=True opens a public link through a Cloudflare quick tunnel and needs the `cloudflared` "
    "program on PATH, which was not found. Install it (https://developers.cloudflare.com/cloudflare-one/"
    "connections/connect-networks/downloads/ : e.g. `brew install cloudflared`, or the cloudflared "
    "package / .deb from https://github.com/cloudflare/cloudflared/releases), or call "
    "launch(share=False) to view on this machine only."
)


class TunnelError(RuntimeError):
    pass


class Tunnel:
    def __init__(self, proc: subprocess.Popen, url: str, log: list[str]):
        self.proc = proc
        self.url = url
        self.log = log

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def find_cloudflared() -> str | None:
    return shutil.which("cloudflared")


def open_tunnel(local_url: str, timeout_s: float = 45.0, exe: str | None = None) -> Tunnel:
    exe = exe or find_cloudflared()
    if exe is None:
        raise TunnelError(INSTALL_HINT)
    try:
        proc = subprocess.Popen(
            [exe, "tunnel", "--no-autoupdate", "--url", local_url],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
        )
    except OSError as e:
        raise TunnelError(f"could not start {exe}: {e.strerror or e}") from e
    log: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def read():
        # Keep draining the output for the tunnel's whole life, or cloudflared blocks on a full pipe.
        for line in proc.stdout:
            if len(log) < 200:
                log.append(line.rstrip())
            if not url:
                m = URL_RE.search(line)
                if m and "api.trycloudflare.com" not in m.group(0):
                    url.append(m.group(0))
                    found.set()
        found.set()

    threading.Thread(target=read, name="cloudflared-output", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while not found.wait(0.1):
        if time.monotonic() > deadline:
            break
    if not url:
        tunnel = Tunnel(proc, "", log)
        tunnel.stop()
        tail = "\n".join(log[-10:])
        why = (
            f"it exited with status {proc.returncode}"
            if proc.returncode not in (None, -15)
            else f"no https://….trycloudflare.com address within {timeout_s:g} s"
        )
        raise TunnelError(f"cloudflared did not open a public link ({why}); its output:\n{tail}")
    return Tunnel(proc, url[0], log)
