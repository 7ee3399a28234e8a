"""`mlprof serve DIR` as a child process for the Python tests, one copy for every script: started
on a free loopback port (`--port 0`; the port is read from its stderr banner), asked over HTTP,
stopped with SIGTERM (SIGKILL if it does not exit)."""
import http.client
import re
import select
import subprocess
import time


def rss_mib(pid):
    """Resident memory of a process in MiB (-1 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return -1.0


def get(port, path, headers=None, timeout=60):
    """(status, headers dict, body bytes) of one GET on a fresh connection."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


class Serve:
    """`mlprof serve DIRECTORY --port PORT [extra...]`. With expect_fail the constructor returns
    with port None when the server does not come up (a port in use) instead of raising.
    start_timeout is generous: a sanitizer build on a loaded 2-core machine starts slowly."""

    def __init__(self, mlprof, directory, port=0, extra=(), expect_fail=False, start_timeout=60):
        self.proc = subprocess.Popen([mlprof, "serve", directory, "--port", str(port), *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = None
        self.banner = b""
        deadline = time.time() + start_timeout
        while time.time() < deadline and self.port is None:
            r, _, _ = select.select([self.proc.stderr], [], [], 0.2)
            if r:
                line = self.proc.stderr.readline()
                if not line:
                    break
                self.banner = line
                m = re.search(rb"http://[^ ]*:(\d+)/", line)
                if m:
                    self.port = int(m.group(1))
            elif self.proc.poll() is not None:
                break
        if self.port is None and not expect_fail:
            self.stop()
            raise RuntimeError("mlprof serve did not start: " + self.banner.decode(errors="replace"))

    def get(self, path, headers=None, timeout=60):
        """(status, headers dict, body bytes)."""
        return get(self.port, path, headers, timeout)

    def text(self, path, timeout=120):
        """The body of a 200 answer as text; any other status raises."""
        status, _, body = self.get(path, timeout=timeout)
        if status != 200:
            raise RuntimeError(f"GET {path}: HTTP {status}: {body[:200]!r}")
        return body.decode()

    def rss(self):
        return rss_mib(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
