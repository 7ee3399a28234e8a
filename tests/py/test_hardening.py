"""Regression tests for issue 11 items 1-3 and 6-8 (docs/hardening.md): a .mlprof changing while
it loads (CLI and serve), what -o does with devices, FIFOs, symlinks and modes, the temporary
file (a planted symlink at the old predictable name, nothing left behind on a failed write),
UTF-8 output (a Latin-1 file name in /api/traces, a command with non-UTF-8 arguments exported and
read back), flame outputs of deeply nested slices (size and peak RSS bounded), and the limits
(decompressed input size, negative durations counted). Expected values come from the inputs
built here (e.g. every nested slice has 2 us of self time).
Usage: test_hardening.py MLPROF TESTS_DATA [ITEM...]   (items: changing, output, temp, utf8,
flame, limits)"""
import gzip
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

if sys.argv[1] == "--rewrite":  # the rewriting child of test_changing
    MLPROF = DATA = SAMPLE = None
else:
    MLPROF, DATA = os.path.abspath(sys.argv[1]), sys.argv[2]
    SAMPLE = os.path.join(os.path.dirname(os.path.abspath(DATA)), "..", "data", "samples",
                          "mlp_bs64.json.gz")
ONLY = sys.argv[3:]
failures = []


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import get  # noqa: E402
import serve_process  # noqa: E402


def Serve(directory):
    return serve_process.Serve(MLPROF, directory)


def check(cond, what):
    print(("ok  " if cond else "FAIL") + "  " + what, flush=True)
    if not cond:
        failures.append(what)


def mlprof(*args, env=None, preexec=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([MLPROF, *args], capture_output=True, env=e, preexec_fn=preexec,
                          timeout=timeout)


def one_line(p):
    err = p.stderr.decode("utf-8", "replace").strip()
    return err.count("\n") == 0 and err.startswith("mlprof")


def signalled(rc):
    return rc < 0 or rc >= 128


def chrome_json(events):
    return json.dumps({"traceEvents": events})


def big_trace(path, n):
    """A CPU trace of n slices on 4 threads: its .mlprof is a few MB."""
    ev = [{"ph": "X", "name": f"op{i % 97}", "cat": "cpu_op", "pid": 1, "tid": i % 4,
           "ts": i * 3, "dur": 2, "args": {"seq": i}} for i in range(n)]
    with open(path, "w") as f:
        f.write(chrome_json(ev))


# ---- 1. a .mlprof that shrinks and changes while it is read -------------------------------------

def rewrite_forever(path):
    """Truncates `path` in place to random sizes and writes it back, until killed: the same
    inode, so a mapping of it would lose its pages."""
    import random
    good = open(path, "rb").read()
    rnd = random.Random(11)
    fd = os.open(path, os.O_RDWR)
    print("rewriting", flush=True)
    while True:
        os.ftruncate(fd, rnd.randrange(0, len(good)))
        time.sleep(0.001)
        os.pwrite(fd, good, 0)
        os.ftruncate(fd, len(good))
        time.sleep(0.001)


def rewriter(path):
    """The rewriting child, once it has started."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rewrite", path],
                             stdout=subprocess.PIPE)
    child.stdout.readline()
    return child


def test_changing(tmp):
    src = os.path.join(tmp, "big.json")
    big_trace(src, 300000)
    mp = os.path.join(tmp, "cap", "run.mlprof")
    os.makedirs(os.path.dirname(mp))
    p = mlprof("export", src, "-o", mp)
    check(p.returncode == 0, f"export a big trace to .mlprof: {p.stderr!r}")
    good = open(mp, "rb").read()
    # The truncating writer runs in another process (as a capture being rewritten would).
    child = rewriter(mp)
    codes = []
    try:
        deadline = time.time() + 25
        while len(codes) < 150 and time.time() < deadline:
            codes.append(mlprof("summary", mp, "--json").returncode)
    finally:
        child.terminate()
        child.wait()
    deaths = [c for c in codes if signalled(c)]
    check(not deaths and len(codes) >= 20,
          f"CLI: {len(codes)} loads of a .mlprof changing underneath: exit codes "
          f"{sorted(set(codes))}, {len(deaths)} killed by a signal")
    check(set(codes) <= {0, 2}, "CLI: every load either reads the file or gives exit 2")

    # serve: the same rewriting in DIR while the dashboard asks for analyses of it.
    with open(mp, "wb") as f:
        f.write(good)
    srv = Serve(os.path.dirname(mp))
    child = rewriter(mp)
    statuses = []
    try:
        # For a while, not a count: a cached result answers in a millisecond.
        start = time.time()
        while (time.time() < start + 6 or len(statuses) < 20) and time.time() < start + 25 \
                and srv.proc.poll() is None:
            try:
                statuses.append(get(srv.port, "/api/profiler/summary?trace=run.mlprof")[0])
            except OSError:
                statuses.append(-1)
    finally:
        child.terminate()
        child.wait()
    alive = srv.proc.poll() is None
    after = get(srv.port, "/api/traces")[0] if alive else -1
    srv.stop()
    check(alive and after == 200 and -1 not in statuses,
          f"serve: {len(statuses)} analyses of a .mlprof changing underneath, statuses "
          f"{sorted(set(statuses))}; serve {'alive' if alive else 'DIED'}")


# ---- serve helper --------------------------------------------------------------------------------

# ---- 2. -o PATH: devices, FIFOs, symlinks, modes ------------------------------------------------

def test_output(tmp):
    d = os.path.join(tmp, "out")
    os.makedirs(d)
    old_umask = os.umask(0o022)
    try:
        # A FIFO is written through (a reader gets the bytes), and stays a FIFO.
        fifo = os.path.join(d, "pipe.txt")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        p = mlprof("flame", SAMPLE, "-o", fifo)
        reader.join(30)
        check(p.returncode == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode),
              f"-o FIFO: written through, still a FIFO ({p.stderr!r})")
        want = mlprof("flame", SAMPLE, "--format", "collapsed").stdout
        check(got and got[0] == want and len(want) > 100,
              "-o FIFO: the reader got the whole collapsed-stack output")

        # A character device (the null device, made here when allowed) stays a device.
        node = os.path.join(d, "null.html")
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except (PermissionError, OSError) as e:
            print(f"skip  -o character device: mknod not allowed here ({e})")
            node = None
        if node:
            p = mlprof("report", SAMPLE, "-o", node)
            check(p.returncode == 0 and stat.S_ISCHR(os.lstat(node).st_mode),
                  f"-o character device: written through, still a device ({p.stderr!r})")
        # A symlink to /dev/null: /dev/null stays the system's null device, the link stays.
        link = os.path.join(d, "devnull.json")
        os.symlink("/dev/null", link)
        p = mlprof("export", SAMPLE, "-o", link)
        check(p.returncode == 0 and os.path.islink(link) and
              stat.S_ISCHR(os.stat("/dev/null").st_mode),
              f"-o symlink to /dev/null: written through ({p.stderr!r})")

        # A descriptor (/dev/stdout, /dev/fd/N, a symlink to one) is written through the descriptor
        # itself, as a shell would: `>> app.log` appends (the earlier content stays), a pipe gets
        # the bytes. (Was: app.log replaced by a new file; a pipe refused as a dangling link.)
        want = mlprof("flame", SAMPLE, "--format", "collapsed").stdout
        flame_to = [MLPROF, "flame", SAMPLE, "--format", "collapsed", "-o"]
        log = os.path.join(d, "app.log")
        with open(log, "wb") as f:
            f.write(b"earlier line\n")
        ino = os.stat(log).st_ino
        with open(log, "ab") as f:
            p = subprocess.run(flame_to + ["/dev/stdout"], stdout=f, stderr=subprocess.PIPE)
        check(p.returncode == 0 and open(log, "rb").read() == b"earlier line\n" + want and
              os.stat(log).st_ino == ino and len(want) > 100,
              f"-o /dev/stdout >> app.log: appended, the earlier content kept ({p.stderr!r})")
        p = subprocess.run(flame_to + ["/dev/stdout"], capture_output=True)
        check(p.returncode == 0 and p.stdout == want,
              f"-o /dev/stdout | cmd: the pipe gets the output ({p.stderr!r})")
        for name in ["/dev/fd/{}", "/proc/self/fd/{}"]:
            r, w = os.pipe()
            proc = subprocess.Popen(flame_to + [name.format(w)], pass_fds=(w,),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            os.close(w)
            with os.fdopen(r, "rb") as rf:
                got_pipe = rf.read()
            err = proc.stderr.read()
            proc.wait(60)
            check(proc.returncode == 0 and got_pipe == want,
                  f"-o {name.format('N')} (a pipe): written through ({err!r})")
        link = os.path.join(d, "to-stdout.txt")
        os.symlink("/dev/stdout", link)
        with open(log, "ab") as f:
            p = subprocess.run(flame_to + [link], stdout=f, stderr=subprocess.PIPE)
        check(p.returncode == 0 and os.path.islink(link) and
              open(log, "rb").read() == b"earlier line\n" + want + want,
              f"-o symlink to /dev/stdout >> app.log: appended ({p.stderr!r})")
        p = mlprof("flame", SAMPLE, "--format", "collapsed", "-o", "/dev/fd/97")
        check(p.returncode != 0 and one_line(p) and b"descriptor 97 is not open" in p.stderr,
              f"-o /dev/fd/97 (not open): refused in one line ({p.stderr!r})")
        # mlprof run -q -o /dev/stdout | cat > F: the capture goes through the pipe.
        cap = os.path.join(d, "piped.mlprof")
        with open(cap, "wb") as f:
            cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=f)
            p = subprocess.run([MLPROF, "run", "-q", "-o", "/dev/stdout", "--", "true"],
                               stdout=cat.stdin, stderr=subprocess.PIPE)
            cat.stdin.close()
            cat.wait(60)
        check(p.returncode == 0 and mlprof("summary", cap).returncode == 0,
              f"mlprof run -o /dev/stdout | cat > F: F is the capture ({p.stderr!r})")

        # A symlink to a regular file: the target gets the new content, the link stays.
        target = os.path.join(d, "real.html")
        with open(target, "w") as f:
            f.write("old")
        link = os.path.join(d, "latest.html")
        os.symlink("real.html", link)
        p = mlprof("report", SAMPLE, "-o", link)
        check(p.returncode == 0 and os.path.islink(link) and os.readlink(link) == "real.html",
              f"-o symlink: the link is kept ({p.stderr!r})")
        check(open(target).read().lower().startswith("<!doctype html"), "-o symlink: the target is written")

        # A symlink to nothing: refused, one line, nothing created.
        dangling = os.path.join(d, "dangling.html")
        os.symlink("missing/nowhere.html", dangling)
        p = mlprof("report", SAMPLE, "-o", dangling)
        check(p.returncode != 0 and one_line(p) and b"does not exist" in p.stderr,
              f"-o dangling symlink: refused in one line ({p.stderr!r})")
        check(os.listdir(d).count("missing") == 0, "-o dangling symlink: nothing created")

        # Modes: a 0600 file stays 0600 (every writer), a new file is 0666 minus the umask.
        for args, name in [(["report", SAMPLE], "r.html"), (["export", SAMPLE], "e.mlprof"),
                           (["export", SAMPLE], "e.json"), (["export", SAMPLE], "e.sqlite"),
                           (["export", SAMPLE, "--table", "slice"], "e.csv"),
                           (["flame", SAMPLE], "f.json"), (["flame", SAMPLE], "f.txt")]:
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write("x")
            os.chmod(path, 0o600)
            p = mlprof(*args, "-o", path)
            mode = stat.S_IMODE(os.stat(path).st_mode)
            check(p.returncode == 0 and mode == 0o600 and os.path.getsize(path) > 1,
                  f"{args[0]} -o existing 0600 {name}: mode {oct(mode)} ({p.stderr!r})")
            os.unlink(path)
            p = mlprof(*args, "-o", path)
            mode = stat.S_IMODE(os.stat(path).st_mode)
            check(p.returncode == 0 and mode == 0o644, f"{args[0]} -o new {name}: mode {oct(mode)}")

        # Refused: a directory, a FIFO for SQLite, a missing directory.
        for args, path, what in [(["report", SAMPLE], d, "is a directory"),
                                 (["export", SAMPLE], os.path.join(d, "nodir", "x.json"),
                                  "does not exist")]:
            p = mlprof(*args, "-o", path)
            check(p.returncode != 0 and one_line(p) and what.encode() in p.stderr,
                  f"-o {path}: refused in one line ({p.stderr!r})")
        # mlprof run checks its -o with the same rules before starting the command.
        p = mlprof("run", "-o", dangling, "--", "true")
        check(p.returncode != 0 and b"does not exist" in p.stderr,
              f"run -o dangling symlink: refused before the command ({p.stderr!r})")
    finally:
        os.umask(old_umask)


# ---- 3. the temporary file -----------------------------------------------------------------------

def test_temp(tmp):
    d = os.path.join(tmp, "temp")
    os.makedirs(d)
    victim = os.path.join(tmp, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious")
    # Symlinks planted at every name the old scheme (OUT.tmp.PID) could use for the next pids.
    probe = subprocess.Popen(["true"])
    probe.wait()
    for out in ["r.html", "e.json", "e.mlprof", "e.sqlite", "e.csv", "f.txt"]:
        for pid in range(probe.pid, probe.pid + 400):
            os.symlink(victim, os.path.join(d, f"{out}.tmp.{pid}"))
    before = set(os.listdir(d))
    for args, out in [(["report", SAMPLE], "r.html"), (["export", SAMPLE], "e.json"),
                      (["export", SAMPLE], "e.mlprof"), (["export", SAMPLE], "e.sqlite"),
                      (["export", SAMPLE, "--table", "slice"], "e.csv"),
                      (["flame", SAMPLE], "f.txt")]:
        p = mlprof(*args, "-o", os.path.join(d, out))
        check(p.returncode == 0, f"{args[0]} -o {out} beside planted symlinks ({p.stderr!r})")
    check(open(victim).read() == "precious", "planted symlinks at OUT.tmp.PID: the victim is untouched")
    left = set(os.listdir(d)) - before - {"r.html", "e.json", "e.mlprof", "e.sqlite", "e.csv",
                                          "f.txt"}
    check(not left, f"no temporary file left behind ({sorted(left)[:5]})")

    # A write that fails (a file size limit: EFBIG) leaves the old file and no temporary file.
    d2 = os.path.join(tmp, "fail")
    os.makedirs(d2)

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    for args, out in [(["export", SAMPLE], "e.json"), (["export", SAMPLE], "e.mlprof"),
                      (["export", SAMPLE], "e.sqlite"), (["report", SAMPLE], "r.html"),
                      (["export", SAMPLE, "--table", "slice"], "e.csv"),
                      (["flame", SAMPLE], "f.json")]:
        path = os.path.join(d2, out)
        with open(path, "w") as f:
            f.write("old content")
        p = mlprof(*args, "-o", path, preexec=small_files)
        check(p.returncode != 0 and one_line(p) and open(path).read() == "old content" and
              os.listdir(d2) == [out],
              f"{args[0]} -o {out} failing mid-write: exit {p.returncode}, old file kept, "
              f"nothing else in the directory ({p.stderr!r}, {os.listdir(d2)})")
        os.unlink(path)


# ---- 6. UTF-8 ------------------------------------------------------------------------------------

def test_utf8(tmp):
    d = os.path.join(tmp, "utf8")
    os.makedirs(d)
    latin1 = os.path.join(d.encode(), b"caf\xe9 r\xe9sum\xe9.json.gz")
    shutil.copy(SAMPLE, latin1)
    srv = Serve(d)
    try:
        status, _, body = get(srv.port, "/api/traces")
    finally:
        srv.stop()
    try:
        listing = json.loads(body.decode("utf-8"))  # strict: invalid UTF-8 raises
        names = [t["name"] for t in listing["traces"]]
    except (UnicodeDecodeError, ValueError) as e:
        names = [f"invalid: {e}"]
    check(status == 200 and names == ["caf\ufffd r\ufffdsum\ufffd.json.gz"],
          f"/api/traces with a Latin-1 file name is valid UTF-8 JSON: {names}")

    # A command with non-UTF-8 arguments: its capture exports to JSON mlprof reads back.
    cap = os.path.join(d, "cmd.mlprof")
    p = subprocess.run([MLPROF.encode(), b"run", b"-q", b"-o", cap.encode(), b"--", b"true",
                        b"\xff\xfe caf\xe9", b"ok \xc3\xa9"], capture_output=True)
    check(p.returncode == 0, f"run with non-UTF-8 arguments ({p.stderr!r})")
    exported = os.path.join(d, "cmd.json")
    p = mlprof("export", cap, "-o", exported)
    check(p.returncode == 0, f"export it ({p.stderr!r})")
    raw = open(exported, "rb").read()
    try:
        doc = json.loads(raw.decode("utf-8"))
        command = doc.get("command", "")
    except (UnicodeDecodeError, ValueError) as e:
        command = f"invalid: {e}"
    check(command == "true \ufffd\ufffd caf\ufffd ok \u00e9",
          f"the exported command is valid UTF-8, bad bytes as U+FFFD: {command!r}")
    p = mlprof("summary", exported)
    check(p.returncode == 0 and not p.stderr, f"mlprof reads its own export back ({p.stderr!r})")


# ---- 7. flame outputs of deep nesting ------------------------------------------------------------

def nested_trace(path, n):
    """n slices, each inside the previous one, each with 2 us of self time (1 us before its
    child, 1 after; the innermost is 2 us long)."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[')
        for i in range(n):
            f.write(("," if i else "") + '{"ph":"X","name":"fn%d","cat":"cpu_op","pid":1,'
                    '"tid":1,"ts":%d,"dur":%d}' % (i, i, 2 * (n - i)))
        f.write("]}")


def peak_rss_mib(args):
    proc = subprocess.Popen([MLPROF, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return proc.returncode, usage.ru_maxrss / 1024


def test_flame(tmp):
    for n in (20000, 100000):
        src = os.path.join(tmp, f"nested{n}.json")
        nested_trace(src, n)
        total_ns = 2000 * n
        txt, ss = os.path.join(tmp, f"n{n}.txt"), os.path.join(tmp, f"n{n}.json")
        rc, rss = peak_rss_mib(["flame", src, "-o", txt])
        size = os.path.getsize(txt) if os.path.exists(txt) else -1
        check(rc == 0 and 0 < size < 16 << 20 and rss < 600,
              f"depth {n}: collapsed stacks {size / 1e6:.1f} MB, peak RSS {rss:.0f} MiB")
        lines = open(txt).read().splitlines() if rc == 0 else []
        folded = [ln for ln in lines if "[frames below depth 1000]" in ln]
        self_sum = sum(int(ln.rsplit(" ", 1)[1]) for ln in lines)
        check(len(lines) <= 1001 and len(folded) == 1 and self_sum == total_ns,
              f"depth {n}: {len(lines)} lines, one folded line, self times sum to "
              f"{self_sum} ns (want {total_ns})")
        rc, rss = peak_rss_mib(["flame", src, "-o", ss])
        size = os.path.getsize(ss) if os.path.exists(ss) else -1
        check(rc == 0 and 0 < size < 200 * n and rss < 600,
              f"depth {n}: speedscope {size / 1e6:.1f} MB, peak RSS {rss:.0f} MiB")
        try:
            doc = json.load(open(ss))
            prof = doc["profiles"][0]
            ev = prof["events"]
            depth = maxd = 0
            ok = True
            for e in ev:
                depth += 1 if e["type"] == "O" else -1
                maxd = max(maxd, depth)
                ok &= depth >= 0
            frames = len(doc["shared"]["frames"])
            check(ok and depth == 0 and prof["endValue"] == total_ns and len(ev) == 2 * frames
                  and maxd == frames,
                  f"depth {n}: speedscope events balanced, {maxd} deep, end {prof['endValue']}")
        except (ValueError, KeyError) as e:
            check(False, f"depth {n}: speedscope JSON readable ({e})")
        os.unlink(src)


# ---- 8. limits -----------------------------------------------------------------------------------

def test_limits(tmp):
    # Decompressed size: ~3 MB of JSON in a small gzip, read with a 1 MiB limit.
    ev = [{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": i, "dur": 1} for i in range(60000)]
    bomb = os.path.join(tmp, "bomb.json.gz")
    with gzip.open(bomb, "wt") as f:
        f.write(chrome_json(ev))
    p = mlprof("summary", bomb, env={"MLPROF_MAX_INPUT_MB": "1"})
    check(p.returncode == 2 and one_line(p) and b"exceeds the input limit of 1 MiB" in p.stderr,
          f"a gzip inflating past MLPROF_MAX_INPUT_MB: one-line error ({p.stderr!r})")
    p = mlprof("summary", bomb, env={"MLPROF_MAX_INPUT_MB": "64"})
    check(p.returncode == 0, "the same file under a 64 MiB limit loads")
    mp = os.path.join(tmp, "limit.mlprof")
    mlprof("export", bomb, "-o", mp)
    p = mlprof("summary", mp, env={"MLPROF_MAX_INPUT_MB": "1"})
    check(p.returncode == 2 and one_line(p) and b"exceeds the input limit" in p.stderr,
          f"a .mlprof whose payload is over the limit: one-line error ({p.stderr!r})")

    # A negative dur is an import problem: counted, warned about, --strict fails.
    neg = os.path.join(tmp, "neg.json")
    with open(neg, "w") as f:
        f.write(chrome_json([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                             {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 20, "dur": -5},
                             {"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": 50},
                             {"ph": "E", "pid": 1, "tid": 2, "ts": 40}]))
    p = mlprof("summary", neg, "--json")
    try:
        problems = json.loads(p.stdout)["import"]["problems"]
    except (ValueError, KeyError):
        problems = {}
    check(problems.get("negative_duration", {}).get("count") == 2,
          f"negative durations counted as import problems: {problems}")
    check(b"negative" in p.stderr, f"and warned about ({p.stderr!r})")
    p = mlprof("summary", neg, "--strict")
    check(p.returncode == 2 and b"negative" in p.stderr, f"--strict fails on them ({p.stderr!r})")


    # Error messages name the real problem.
    cases = [
        ("ts.json", chrome_json([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1e300,
                                  "dur": 1}]), 'event field "ts": value out of range'),
        ("pid.json", '{"traceEvents":[{"ph":"X","name":"a","pid":99999999999999999999,"tid":1,'
                     '"ts":1,"dur":1}]}', 'event field "pid": value out of range'),
        ("garbage.mlprof", "garbage", "not a .mlprof file (no .mlprof header), nor a JSON trace"),
        ("short.mlprof", "MLPROF\x01\n1234", "truncated .mlprof file (the header is 12 of 24"),
        ("other.mlprof", "MLPROF\x02\n" + "x" * 30, "not a .mlprof file this mlprof reads"),
    ]
    for name, text, want in cases:
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        p = mlprof("summary", path)
        check(p.returncode == 2 and one_line(p) and want.encode() in p.stderr,
              f"{name}: the error says {want!r} ({p.stderr!r})")
    for value, want in [("99999999999999999999", "value out of range"), ("-1", "value out of range"),
                        ("abc", "not a number")]:
        p = mlprof("summary", SAMPLE, "--threads", value)
        check(p.returncode == 2 and one_line(p) and want.encode() in p.stderr,
              f"--threads {value}: the error says {want!r} ({p.stderr!r})")


TESTS = {"changing": test_changing, "output": test_output, "temp": test_temp, "utf8": test_utf8,
         "flame": test_flame, "limits": test_limits}

if __name__ == "__main__":
    if sys.argv[1] == "--rewrite":
        rewrite_forever(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in TESTS.items():
            if ONLY and name not in ONLY:
                continue
            print(f"== {name}", flush=True)
            sub = os.path.join(tmp, name)
            os.makedirs(sub)
            fn(sub)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
