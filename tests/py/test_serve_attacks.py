"""Regression tests for `mlprof serve` against hostile and careless clients (issue 11, items
9-12). Each attack runs against a `mlprof serve` started here on a free loopback port, bounded in
time and in bytes sent. Usage: test_serve_attacks.py MLPROF DATA_DIR [--report] [ATTACK...]

--report prints every figure and exits 0 (used to measure an old binary for docs/serve.md)."""
import gzip
import http.client
import json
import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_process  # noqa: E402
from serve_process import get  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
REPORT = "--report" in sys.argv[3:]
ONLY = [a for a in sys.argv[3:] if not a.startswith("--")]
HELP = subprocess.run([MLPROF, "serve", "--help"], capture_output=True, text=True).stdout
NEW_OPTIONS = "--client-timeout" in HELP
failures = []
MiB = 1024 * 1024


def check(cond, what):
    print(("ok  " if cond else "FAIL") + "  " + what, flush=True)
    if not cond:
        failures.append(what)


def Serve(directory, port=0, extra=(), expect_fail=False):
    """serve_process.Serve; the hardening options only where this mlprof has them."""
    return serve_process.Serve(MLPROF, directory, port, extra if NEW_OPTIONS else (), expect_fail)


def timed_get(port, path, timeout=20):
    t0 = time.time()
    try:
        status = get(port, path, timeout=timeout)[0]
    except OSError:
        status = -1
    return status, time.time() - t0


def read_response_bytes(sock, limit, timeout):
    """Bytes received until the server closes, `limit` bytes or `timeout` seconds of silence."""
    sock.settimeout(timeout)
    got = 0
    try:
        while got < limit:
            b = sock.recv(1 << 20)
            if not b:
                break
            got += len(b)
    except OSError:
        pass
    return got


def flood(port, head, piece, limit, what):
    """Sends `head` then `piece` repeatedly until the server stops taking bytes (closes, resets or
    stalls for 3 s) or `limit` bytes went out. Returns (bytes sent, first bytes of the reply)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    s.settimeout(3)
    sent = 0
    try:
        s.sendall(head)
        sent = len(head)
        while sent < limit:
            s.sendall(piece)
            sent += len(piece)
    except OSError:
        pass
    reply = b""
    try:
        s.settimeout(3)
        reply = s.recv(200)
    except OSError:
        pass
    s.close()
    return sent, reply


# ---------------------------------------------------------------------------------------------
# Item 9: the HTTP layer.


def attack_range(srv, d):
    status, _, body = get(srv.port, "/api/profiler/summary?trace=mlp_bs64.json.gz")
    base = len(body)
    ranges = "bytes=" + ",".join(["0-"] * 2600)  # ~8 KB of header
    rss0 = srv.rss()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.sendall(("GET /api/profiler/summary?trace=mlp_bs64.json.gz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               f"Range: {ranges}\r\nConnection: close\r\n\r\n").encode())
    got = read_response_bytes(s, 64 * MiB, 10)
    s.close()
    print(f"      range: normal body {base} B; 8 KB Range request -> {got} B response; "
          f"RSS {rss0:.0f} -> {srv.rss():.0f} MiB")
    check(status == 200 and got <= 2 * base + 4096, "one Range request gets at most one body")


def attack_header_count(srv, d):
    rss0 = srv.rss()
    head = b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    piece = b"".join(b"X-Pad-%06d: %s\r\n" % (i, b"a" * 80) for i in range(600))  # ~60 KB
    sent, reply = flood(srv.port, head, piece, 64 * MiB, "headers")
    rss1 = srv.rss()
    print(f"      headers: server took {sent / MiB:.1f} MiB of headers before stopping; reply "
          f"{reply[:40]!r}; RSS {rss0:.0f} -> {rss1:.0f} MiB")
    check(sent < 16 * MiB, "a request with endless headers is cut off")
    check(rss1 - rss0 < 32, "endless headers do not grow memory")


def attack_chunked(srv, d):
    rss0 = srv.rss()
    for method in ("GET", "POST"):
        head = (f"{method} /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Transfer-Encoding: chunked\r\n\r\n").encode()
        piece = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
        sent, reply = flood(srv.port, head, piece, 64 * MiB, "chunked")
        print(f"      chunked {method}: server took {sent / MiB:.1f} MiB of body; reply "
              f"{reply[:40]!r}; RSS {rss0:.0f} -> {srv.rss():.0f} MiB")
        check(sent < 16 * MiB, f"a chunked {method} body is refused before 16 MiB")
        check(reply[:12] in (b"HTTP/1.1 413", b"HTTP/1.1 405", b"HTTP/1.1 400", b""),
              f"chunked {method}: 4xx or closed")
    head = b"POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000\r\n\r\n"
    sent, reply = flood(srv.port, head, b"y" * 65536, 64 * MiB, "length")
    print(f"      Content-Length 1 GB POST: server took {sent / MiB:.1f} MiB; reply {reply[:40]!r}")
    check(sent < 16 * MiB, "a 1 GB Content-Length body is refused before 16 MiB")


def attack_slow_readers(srv, d):
    path = "/api/profiler/flame?trace=b_cnn.kineto.json.gz"
    body = len(get(srv.port, path)[2])  # computed once: cached from now on
    rss0 = srv.rss()
    n = 300
    socks = []
    for _ in range(n):  # ask for the big result and never read it
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        s.connect(("127.0.0.1", srv.port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        socks.append(s)
    time.sleep(2)
    rss1 = srv.rss()
    cheap = timed_get(srv.port, "/api/traces", timeout=10)
    for s in socks:
        s.close()
    print(f"      slow readers: {n} clients not reading a {body} B result: RSS {rss0:.0f} -> "
          f"{rss1:.0f} MiB ({n * body / MiB:.0f} MiB if each had a copy); /api/traces "
          f"{cheap[0]} in {cheap[1] * 1000:.0f} ms")
    # Each connection may hold its 64 KiB of libmicrohttpd memory (a kept-alive connection's
    # buffers are touched in full: 300 x 64 KiB = 19 MiB); a copy of the body each would add
    # n * body on top.
    conn_mib = n * 64 * 1024 / MiB
    check(rss1 - rss0 < max(16, conn_mib + 0.25 * n * body / MiB),
          "clients that do not read share one copy")
    check(cheap[0] == 200 and cheap[1] < 3, "others are answered meanwhile")


def attack_slowloris(srv, d):
    n = 64
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        socks.append(s)
    stop = threading.Event()

    def drip():  # one header byte per slow client per second, forever
        while not stop.wait(0.5):
            for s in socks:
                try:
                    s.send(b"X")
                except OSError:
                    pass

    t = threading.Thread(target=drip, daemon=True)
    t.start()
    time.sleep(0.5)
    lat = [timed_get(srv.port, "/api/traces", timeout=10) for _ in range(5)]
    stop.set()
    t.join()
    for s in socks:
        s.close()
    worst = max(x[1] for x in lat)
    print(f"      slowloris: {n} slow clients; /api/traces answered {[x[0] for x in lat]} "
          f"worst {worst * 1000:.0f} ms")
    check(all(x[0] == 200 for x in lat) and worst < 3, f"{n} slow clients do not block others")


def attack_idle_timeout(srv, d):
    if not NEW_OPTIONS:
        print("      idle timeout: no --client-timeout in this binary")
        check(False, "idle clients are dropped")
        return
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.sendall(b"GET / HTTP/1.1\r\n")
    t0 = time.time()
    s.settimeout(10)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    took = time.time() - t0
    s.close()
    print(f"      idle timeout: a silent client was dropped after {took:.1f} s (--client-timeout 2)")
    check(took < 8, "a client that stops sending is dropped")


def attack_second_serve(srv, d):
    other = Serve(d, port=srv.port, expect_fail=True)
    try:
        code = other.proc.wait(5)
    except subprocess.TimeoutExpired:
        code = None
    other.stop()
    print(f"      second serve on port {srv.port}: "
          f"{'kept running' if code is None else 'exit ' + str(code)}")
    check(code not in (None, 0), "a second serve on the same port fails")


def attack_keepalive(srv, d):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    times = []
    for _ in range(40):
        t0 = time.time()
        c.request("GET", "/api/traces")
        r = c.getresponse()
        r.read()
        times.append(time.time() - t0)
    c.close()
    med = statistics.median(times)
    print(f"      keep-alive: 40 requests on one connection, median {med * 1000:.1f} ms")
    check(med < 0.02, "keep-alive requests are not delayed by Nagle (median < 20 ms)")


def attack_backlog(srv, d):
    n = 128
    socks = []
    t0 = time.time()
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", srv.port))
        socks.append(s)
    pending = {s: None for s in socks}
    done = {}
    while pending and time.time() - t0 < 10:
        _, w, _ = select.select([], list(pending), [], 0.1)
        for s in w:
            done[s] = time.time() - t0
            del pending[s]
    ok = 0
    for s in socks:
        try:
            s.setblocking(True)
            s.settimeout(10)
            s.sendall(b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if s.recv(12).startswith(b"HTTP/1.1 200"):
                ok += 1
        except OSError:
            pass
        s.close()
    slow = sum(1 for t in done.values() if t > 0.9)
    print(f"      backlog: {n} simultaneous connects, {ok} answered, {slow} waited for a SYN "
          f"retry (> 0.9 s)")
    check(ok == n and slow == 0, f"{n} simultaneous connections are all accepted at once")


def read_one_response(sock, timeout=10):
    """(status, headers dict with lower-case names, body) of one response read from `sock`, or
    None when the server closed or stayed silent first. Leaves bytes after it in sock.pending."""
    sock.settimeout(timeout)
    buf = getattr(sock, "pending", b"")
    try:
        while b"\r\n\r\n" not in buf:
            b = sock.recv(65536)
            if not b:
                return None
            buf += b
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        n = int(headers.get("content-length", "0"))
        while len(rest) < n:
            b = sock.recv(65536)
            if not b:
                return None
            rest += b
    except OSError:
        return None
    sock.pending = rest[n:]
    return int(lines[0].split()[1]), headers, rest[:n]


class Sock(socket.socket):
    pending = b""


def connect(port):
    s = Sock(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


# Issue 32 item 7: keep-alive and pipelining on one connection (http.client would reconnect
# silently after a `Connection: close`, so the socket is ours).
def attack_pipeline(srv, d):
    s = connect(srv.port)
    req = b"GET /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    s.sendall(req)
    first = read_one_response(s)
    second = None
    try:
        s.sendall(req)
        second = read_one_response(s)
    except OSError:
        pass
    check(first is not None and first[0] == 200 and
          first[1].get("connection", "").lower() != "close",
          f"a HTTP/1.1 reply keeps the connection open (Connection: "
          f"{first[1].get('connection') if first else None})")
    check(second is not None and second[0] == 200, "a second request on the same connection is answered")
    # Three requests in one write, the page, an analysis (worker) and the listing (its thread).
    paths = ["/", "/api/profiler/summary?trace=mlp_bs64.json.gz", "/api/traces"]
    s.sendall(b"".join(f"GET {p} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() for p in paths))
    answers = [read_one_response(s) for _ in paths]
    s.close()
    got = [a[0] if a else None for a in answers]
    print(f"      pipelining: 3 requests in one write -> {got}")
    check(got == [200, 200, 200], "3 pipelined requests get 3 answers, in order")
    check(answers[2] is not None and b'"traces"' in answers[2][2], "the third answer is the listing")


# Issue 32 item 10: a query with many parameters gets an answer (it exhausted the connection's
# memory and got none).
def attack_query_params(srv, d):
    for n in (65, 899, 2000):
        query = "&".join(f"p{i}=1" for i in range(n))
        s = connect(srv.port)
        s.sendall(f"GET /api/traces?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        r = read_one_response(s)
        s.close()
        print(f"      {n} query parameters ({len(query)} B) -> {r[0] if r else 'no answer'}")
        check(r is not None and r[0] in (414, 431) and
              (b"64 query parameters" in r[2] or b"8192 bytes" in r[2]),
              f"{n} query parameters -> 414 naming the limit ({r[2] if r else None!r})")
    status = get(srv.port, "/api/traces?" + "&".join(f"p{i}=1" for i in range(64)))[0]
    check(status == 200, f"64 query parameters -> {status} (want 200)")
    status = get(srv.port, "/api/traces?x=" + "a" * 9000)[0]
    check(status == 414, f"a 9 KB URI -> {status} (want 414)")


# Issue 32 item 6: slow-header clients are closed after --header-timeout however steadily they
# drip, and near --max-connections the slowest one makes room for a new client.
def attack_slow_headers(srv, d):
    n = 150  # over --max-connections 100
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", srv.port))
        socks.append(s)
    time.sleep(0.5)
    for s in socks:
        try:
            s.send(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        except OSError:
            pass
    closed = {}
    t0 = time.time()
    # A request while every slot is taken by a slow client.
    status, took = timed_get(srv.port, "/api/traces", timeout=30)
    print(f"      slow headers: {n} slow clients (--max-connections 100); a new request -> "
          f"{status} in {took:.1f} s")
    check(status == 200 and took < 8, "a new request is answered while slow clients hold the slots")
    while len(closed) < n and time.time() - t0 < 20:  # drip one byte each per 0.5 s
        for s in socks:
            if s in closed:
                continue
            try:
                s.send(b"X")
                if s.recv(4096) == b"":
                    closed[s] = time.time() - t0
            except BlockingIOError:
                pass
            except OSError:
                closed[s] = time.time() - t0
        time.sleep(0.5)
    for s in socks:
        s.close()
    last = max(closed.values()) if closed else -1
    print(f"      slow headers: {len(closed)} of {n} closed by the server, the last after "
          f"{last:.1f} s (--header-timeout 3)")
    check(len(closed) == n, "every slow-header client is closed while it still drips")


# Issue 32 item 5: a gzip that inflates past --max-input-mb answers 413 naming the limit, and
# memory stays bounded.
def attack_gzip_bomb(srv, d):
    event = b'{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1},'
    path = os.path.join(d, "bomb.json.gz")
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b'{"traceEvents":[')
        block = event * (1 << 14)
        for _ in range(200 * MiB // len(block)):  # 200 MiB of JSON
            f.write(block)
        f.write(event[:-1] + b"]}")
    rss0 = srv.rss()
    peak = [rss0]
    stop = threading.Event()

    def sample():
        while not stop.wait(0.05):
            peak[0] = max(peak[0], srv.rss())

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    status, _, body = get(srv.port, "/api/profiler/summary?trace=bomb.json.gz", timeout=120)
    stop.set()
    t.join()
    print(f"      gzip bomb: {os.path.getsize(path) / MiB:.1f} MiB gzip of 200 MiB JSON -> {status} "
          f"{body[:160]!r}; RSS {rss0:.0f} -> peak {peak[0]:.0f} MiB (--max-input-mb 16)")
    check(status == 413 and b"input limit of 16 MiB" in body and b"--max-input-mb" in body,
          "a gzip inflating past the limit -> 413 naming the limit and its option")
    check(peak[0] - rss0 < 200, "memory grows by less than 200 MiB")
    status = get(srv.port, "/api/profiler/summary?trace=mlp_bs64.json.gz")[0]
    check(status == 200, f"a normal trace under the limit -> {status}")


# Issue 32 item 12: no trace files, no phantom rank.
def attack_empty_ranks(srv, d):
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    status, _, body = get(srv.port, "/api/profiler/ranks")
    r = json.loads(body)
    print(f"      ranks of an empty folder -> {status} {body[:120]!r}")
    check(status == 200 and "unavailable" in r and "ranks" not in r,
          "ranks of an empty folder is unavailable, not one rank")


# Issue 32 item 11: the served folder deleted and created again is served without a restart.
def attack_recreated_dir(srv, d):
    before = [t["name"] for t in json.loads(get(srv.port, "/api/traces")[2])["traces"]]
    shutil.rmtree(d)
    os.makedirs(d)
    shutil.copy(os.path.join(DATA, "mlp_bs64.json.gz"), os.path.join(d, "again.json.gz"))
    after = [t["name"] for t in json.loads(get(srv.port, "/api/traces")[2])["traces"]]
    status = get(srv.port, "/api/profiler/summary?trace=again.json.gz")[0]
    print(f"      recreated folder: listed {before} before, {after} after; summary -> {status}")
    check(after == ["again.json.gz"] and status == 200, "a recreated folder is served at once")


# Issue 32 item 15: a listing cut at 10,000 files says so.
def attack_many_files(srv, d):
    sub = os.path.join(d, "many")
    os.makedirs(sub)
    for i in range(10001):
        open(os.path.join(sub, f"t{i:05d}.json"), "w").close()
    listing = json.loads(get(srv.port, "/api/traces", timeout=60)[2])
    n = len(listing["traces"])
    print(f"      10,004 trace files: {n} listed, truncated={listing.get('truncated')}, "
          f"note {listing.get('note')!r}")
    check(n == 10000 and listing.get("truncated") is True and "10000" in listing.get("note", ""),
          "a listing cut at 10,000 files says so")


# ---------------------------------------------------------------------------------------------
# Item 10: long analyses do not block cheap requests.


def attack_ranks_burst(srv, d):
    results = []

    def ranks():
        results.append(timed_get(srv.port, "/api/profiler/ranks", timeout=120))

    threads = [threading.Thread(target=ranks) for _ in range(20)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    lat = [timed_get(srv.port, "/api/traces", timeout=60) for _ in range(3)]
    for t in threads:
        t.join()
    worst = max(x[1] for x in lat)
    print(f"      ranks burst: 20 x /api/profiler/ranks took up to "
          f"{max(r[1] for r in results):.2f} s; /api/traces meanwhile worst {worst * 1000:.0f} ms")
    check(all(r[0] == 200 for r in results), "ranks answers")
    check(all(x[0] == 200 for x in lat) and worst < 1.0,
          "/api/traces answers within 1 s during a ranks burst")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def attack_abandon(srv, d):
    pid = srv.proc.pid
    c0 = cpu_seconds(pid)
    status = get(srv.port, "/api/profiler/ranks", timeout=120)[0]
    full = cpu_seconds(pid) - c0
    old = time.time() - 100
    os.utime(os.path.join(d, "rank0.json.gz"), (old, old))  # a new file list: not cached
    c1 = cpu_seconds(pid)
    for _ in range(10):  # ask, then hang up at once
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(b"GET /api/profiler/ranks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.close()
    last, still_since, deadline = cpu_seconds(pid), time.time(), time.time() + 60
    while time.time() - still_since < 1.0 and time.time() < deadline:  # until the CPU rests
        time.sleep(0.2)
        now = cpu_seconds(pid)
        if now != last:
            last, still_since = now, time.time()
    spent = cpu_seconds(pid) - c1
    print(f"      abandon: one ranks over {len(os.listdir(d))} files costs {full:.2f} s CPU; "
          f"10 requests whose clients hung up cost {spent:.2f} s")
    check(status == 200 and spent < 0.5 * full, "work for clients that hung up is abandoned")


# ---------------------------------------------------------------------------------------------
# Item 11: a file swapped for a symlink between check and open is never read.


def tiny_trace(op):
    return json.dumps({"traceEvents": [
        {"ph": "X", "name": op, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5}
        for i in range(50)]})


def attack_symlink_race(srv, d):
    outside = tempfile.mkdtemp(prefix="mlprof-outside-")
    secret = os.path.join(outside, "secret.json")
    with open(secret, "w") as f:
        f.write(tiny_trace("OUTSIDE_SECRET_OP"))
    inside = os.path.join(d, "race_src.json.txt")
    with open(inside, "w") as f:
        f.write(tiny_trace("inside_op"))
    target = os.path.join(d, "race.json")
    shutil.copy(inside, target)
    stop = threading.Event()

    def swap():
        i = 0
        while not stop.is_set():
            i += 1
            tmp = os.path.join(d, f".race.tmp{i}")
            if i % 2:
                os.symlink(secret, tmp)
            else:
                shutil.copy(inside, tmp)
                os.utime(tmp, ns=(time.time_ns(), time.time_ns() + i))  # new cache key
            os.rename(tmp, target)
            time.sleep(0.002)  # hold each state about as long as the other

    t = threading.Thread(target=swap, daemon=True)
    t.start()
    leaked = served = 0
    statuses = {}
    deadline = time.time() + 15
    n = 0
    while n < 300 and time.time() < deadline:
        n += 1
        try:
            status, _, body = get(srv.port, "/api/profiler/ops?trace=race.json", timeout=10)
        except OSError:
            continue
        statuses[status] = statuses.get(status, 0) + 1
        if status == 200:
            served += 1
            leaked += b"OUTSIDE_SECRET_OP" in body
    stop.set()
    t.join()
    shutil.rmtree(outside)
    print(f"      symlink race: {n} requests while race.json flips between a file and a symlink "
          f"out of DIR: {served} served, {leaked} with the outside file's data; statuses {statuses}")
    check(leaked == 0, "a file swapped for a symlink out of DIR is never read")


# ---------------------------------------------------------------------------------------------
# Item 12: Host header, hidden files, future mtimes.


def attack_host(srv, d):
    p = srv.port
    cases = [("evil.example", 403), (f"evil.example:{p}", 403), (f"localhost:{p}", 200),
             (f"127.0.0.1:{p}", 200), ("localhost", 200)]
    for host, want in cases:
        status = get(p, "/api/traces", headers={"Host": host})[0]
        check(status == want, f"Host: {host} -> {status} (want {want})")
    page = get(p, "/", headers={"Host": "rebind.example"})[0]
    check(page == 403, f"the page with a foreign Host -> {page} (want 403)")


def attack_allow_host(srv, d):
    status = get(srv.port, "/api/traces", headers={"Host": "box.example:1"})[0]
    check(status == 200, f"--allow-host box.example: Host box.example -> {status} (want 200)")
    status = get(srv.port, "/api/traces", headers={"Host": "evil.example"})[0]
    check(status == 403, f"--allow-host box.example: Host evil.example -> {status} (want 403)")


def attack_hidden(srv, d):
    os.makedirs(os.path.join(d, "sub", ".hidden"), exist_ok=True)
    shutil.copy(os.path.join(d, "mlp_bs64.json.gz"), os.path.join(d, ".secret.json.gz"))
    shutil.copy(os.path.join(d, "mlp_bs64.json.gz"), os.path.join(d, "sub", ".hidden", "x.json.gz"))
    names = [t["name"] for t in json.loads(get(srv.port, "/api/traces")[2])["traces"]]
    check(not any(n.startswith(".") or "/." in n for n in names), "hidden files are not listed")
    for name in (".secret.json.gz", "sub/.hidden/x.json.gz", "./.secret.json.gz"):
        status = get(srv.port, "/api/profiler/summary?trace=" + name)[0]
        check(status in (403, 404), f"hidden {name} -> {status} (want 403/404)")


def attack_future_mtime(srv, d):
    broken = os.path.join(d, "broken_future.json")
    with open(broken, "w") as f:
        f.write('{"traceEvents": [ {"ph": "X", "name": ')
    future = time.time() + 86400 * 365
    os.utime(broken, (future, future))
    status = get(srv.port, "/api/profiler/summary?trace=broken_future.json")[0]
    check(status == 422, f"a broken file with a future mtime -> {status} (want 422, not 503)")
    fresh = os.path.join(d, "broken_fresh.json")
    with open(fresh, "w") as f:
        f.write('{"traceEvents": [ {"ph": "X", "name": ')
    status, headers, _ = get(srv.port, "/api/profiler/summary?trace=broken_fresh.json")
    check(status == 503 and "Retry-After" in headers,
          f"a broken file written just now -> {status} (want 503 + Retry-After)")


# ---------------------------------------------------------------------------------------------


def make_dir(copies=0):
    d = tempfile.mkdtemp(prefix="mlprof-serve-attacks-")
    for name in ("mlp_bs64.json.gz", "mlp_bs256.json.gz", "b_cnn.kineto.json.gz"):
        shutil.copy(os.path.join(DATA, name), d)
    for i in range(copies):
        shutil.copy(os.path.join(DATA, "b_cnn.kineto.json.gz"), os.path.join(d, f"rank{i}.json.gz"))
    return d


ATTACKS = [
    ("range", attack_range, [], 0),
    ("headers", attack_header_count, [], 0),
    ("chunked", attack_chunked, [], 0),
    ("slow_readers", attack_slow_readers, [], 0),
    ("slowloris", attack_slowloris, [], 0),
    ("idle", attack_idle_timeout, ["--client-timeout", "2"], 0),
    ("second_serve", attack_second_serve, [], 0),
    ("keepalive", attack_keepalive, [], 0),
    ("backlog", attack_backlog, [], 0),
    ("ranks_burst", attack_ranks_burst, [], 24),
    ("abandon", attack_abandon, [], 60),
    ("symlink_race", attack_symlink_race, [], 0),
    ("host", attack_host, [], 0),
    ("allow_host", attack_allow_host, ["--allow-host", "box.example"], 0),
    ("hidden", attack_hidden, [], 0),
    ("future_mtime", attack_future_mtime, [], 0),
    ("pipeline", attack_pipeline, [], 0),
    ("query_params", attack_query_params, [], 0),
    ("slow_headers", attack_slow_headers, ["--max-connections", "100", "--header-timeout", "3"], 0),
    ("gzip_bomb", attack_gzip_bomb, ["--max-input-mb", "16"], 0),
    ("empty_ranks", attack_empty_ranks, [], 0),
    ("recreated_dir", attack_recreated_dir, [], 0),
    ("many_files", attack_many_files, [], 0),
]


def main():
    for name, fn, extra, copies in ATTACKS:
        if ONLY and name not in ONLY:
            continue
        d = make_dir(copies)
        srv = Serve(d, extra=extra)
        print(f"-- {name} (port {srv.port})", flush=True)
        try:
            fn(srv, d)
        except Exception as e:  # an attack that breaks the test harness is a failure too
            check(False, f"{name}: {type(e).__name__}: {e}")
        alive = srv.proc.poll() is None
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)
        check(alive, f"{name}: serve survived")
    print(f"{len(failures)} failure(s)")
    if REPORT:
        return 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
