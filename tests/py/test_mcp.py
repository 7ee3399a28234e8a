"""`mlprof mcp` (issue 30 item 2): a Model Context Protocol session driven through stdin/stdout.
Tool results must be what `mlprof NAME --json` prints for the same file or rank directory, the
event count must match an independent count of the trace's events, nothing outside the paths
given on the command line is readable (another file of the same folder, /etc/passwd, '..', a
symlink leading out), writes through SQL are refused, and hostile lines (malformed, too deep,
too long, invalid UTF-8) get a JSON-RPC error while the session goes on; EOF ends it with 0."""
import gzip
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]
BS64 = shared_data.require("traces/pytorch-cpu/mlp_bs64.json.gz")
BS256 = shared_data.require("traces/pytorch-cpu/mlp_bs256.json.gz")
RANKS = os.path.realpath(os.path.dirname(
    shared_data.require("traces/kineto-gpu/trace_filter/sampled_rank-0.json.gz")))
SIBLING = os.path.realpath(os.path.join(os.path.dirname(BS64), "cnn.json.gz"))
BS64 = os.path.realpath(BS64)
BS256 = os.path.realpath(BS256)


def cli_json(*args):
    return json.loads(subprocess.run([MLPROF, *args, "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def independent_event_count(path):
    """Complete events of the legacy profiler export (a JSON array of "X" events)."""
    with gzip.open(path, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    return sum(1 for e in events if e.get("ph") == "X")


tmp = tempfile.mkdtemp(prefix="mlprof_mcp_")
inside = os.path.join(tmp, "inside")
os.makedirs(os.path.join(inside, "sub"))
shutil.copy(BS64, os.path.join(inside, "sub", "copy.json.gz"))
os.symlink(SIBLING, os.path.join(inside, "escape.json.gz"))  # a symlink leading out
with open(os.path.join(tmp, "secret.json"), "w") as f:
    f.write('{"traceEvents": []}')
with open(os.path.join(inside, "broken.json"), "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": ')

bad = subprocess.run([MLPROF, "mcp", os.path.join(tmp, "absent")], stdin=subprocess.DEVNULL,
                     capture_output=True, text=True)
check(bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1 and
      "absent: no such file or directory" in bad.stderr, f"a path that is not there: {bad}")

proc = subprocess.Popen([MLPROF, "mcp", inside, BS64, BS256, RANKS, "--sql-timeout", "2",
                         "--sql-max-rows", "100"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
next_id = 0


def send_raw(data):
    proc.stdin.write(data)
    proc.stdin.flush()


# Replies are read by a thread, as a client must: a client that stops reading while it writes
# would fill both pipes (the server blocks writing a reply, the client writing a request).
replies = queue.Queue()
threading.Thread(target=lambda: [replies.put(l) for l in iter(proc.stdout.readline, b"")],
                 daemon=True).start()


def reply():
    line = replies.get(timeout=120)  # a hung server fails the test instead of hanging it
    check(line.endswith(b"\n"), "one reply per line")
    return json.loads(line)


def request(method, params=None):
    global next_id
    next_id += 1
    msg = {"jsonrpc": "2.0", "id": next_id, "method": method}
    if params is not None:
        msg["params"] = params
    send_raw(json.dumps(msg).encode() + b"\n")
    r = reply()
    check(r.get("id") == next_id and r.get("jsonrpc") == "2.0", f"{method}: reply id {r.get('id')}")
    return r


def call(_tool, **arguments):
    name = _tool
    r = request("tools/call", {"name": name, "arguments": arguments})
    res = r.get("result", {})
    content = res.get("content", [{}])
    check(len(content) == 1 and content[0].get("type") == "text", f"{name}: one text item")
    return res.get("isError"), content[0].get("text", "")


def call_json(_tool, **arguments):
    err, text = call(_tool, **arguments)
    check(err is False, f"{_tool} {arguments}: not an error ({text[:200]})")
    return json.loads(text) if err is False else None


# The handshake.
r = request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test_mcp", "version": "1"}})
res = r["result"]
check(res["protocolVersion"] == "2025-06-18", "initialize: the client's version is kept")
check("tools" in res["capabilities"] and "resources" in res["capabilities"],
      "initialize: tools and resources capabilities")
check(res["serverInfo"]["name"] == "mlprof" and res["serverInfo"]["version"], "serverInfo")
send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # no reply: the next
check(request("ping")["result"] == {}, "ping")                         # reply is ping's

tools = request("tools/list")["result"]["tools"]
names = {t["name"] for t in tools}
for want in ("open", "summary", "analysis", "bottlenecks", "roofline", "compare", "sql",
             "critical_path", "list_traces"):
    check(want in names, f"tools/list has {want}")
for t in tools:
    s = t.get("inputSchema", {})
    check(s.get("type") == "object" and isinstance(s.get("properties"), dict),
          f"{t['name']}: inputSchema is an object schema")
    check(all(k in s["properties"] for k in s.get("required", [])),
          f"{t['name']}: required arguments are properties")

# Results are the CLI's --json, numbers included.
summary = call_json("summary", trace=BS64)
check(summary == cli_json("summary", BS64), "summary == mlprof summary --json")
count = independent_event_count(BS64)
check(summary and summary["events"]["slices"] == count,
      f"summary slices {summary and summary['events']['slices']} == {count} X events")
check(call_json("open", path=BS64) == summary, "open answers the summary")
check(call_json("summary", trace="file://" + BS64) == summary, "a file:// URI names the file")
top5 = call_json("summary", trace=BS64, top=5, sort="self")
check(top5 == cli_json("summary", BS64, "--top", "5", "--sort", "self"),
      "summary top=5 sort=self == mlprof summary --top 5 --sort self --json")
check(call_json("analysis", trace=BS64, name="steps") == cli_json("steps", BS64),
      "analysis steps == mlprof steps --json")
check(call_json("analysis", trace=BS64, name="ops", options={"top": 5}) ==
      cli_json("ops", BS64, "--top", "5"), "analysis ops top 5 == mlprof ops --top 5 --json")
check(call_json("bottlenecks", trace=BS64) == cli_json("bottlenecks", BS64),
      "bottlenecks == mlprof bottlenecks --json")
check(call_json("critical_path", trace=BS64) == cli_json("critical-path", BS64),
      "critical_path == mlprof critical-path --json")
check(call_json("roofline", trace=BS64) == cli_json("roofline", BS64),
      "roofline == mlprof roofline --json")
check(call_json("compare", base=BS64, new=BS256) == cli_json("compare", BS64, BS256),
      "compare == mlprof compare --json")
# A directory given is a rank set, as `mlprof NAME DIR` reads it.
for name in ("summary", "bottlenecks", "ranks"):
    check(call_json("analysis", trace=RANKS, name=name) == cli_json(name, RANKS),
          f"analysis {name} of a rank directory == mlprof {name} DIR --json")
RANK_SQL = "SELECT rank, count(*) AS n, sum(dur) AS d FROM slice GROUP BY rank ORDER BY rank"
check(call_json("sql", trace=RANKS, query=RANK_SQL) ==
      json.loads(subprocess.run([MLPROF, "sql", RANKS, RANK_SQL, "--json"], check=True,
                                capture_output=True, text=True).stdout),
      "sql over a rank directory == mlprof sql DIR --json")
rows = call_json("sql", trace=BS64, query="SELECT count(*) AS n FROM slice")
check(rows == {"schema": "mlprof.sql/1", "columns": ["n"], "rows": [{"n": count}]},
      f"sql count(*) {rows} == {count}")
# A relative name resolves under a directory given; its copy has the same numbers.
copy = call_json("summary", trace="sub/copy.json.gz")
check(copy and copy["events"] == summary["events"], "a file under a directory given")
listing = call_json("open", path=inside)
check(listing and [t["trace"] for t in listing["traces"]] ==
      [os.path.join(os.path.realpath(inside), n) for n in ("broken.json", "sub/copy.json.gz")],
      f"open DIR lists its traces, not the symlink leading out: {listing}")

# Refusals: tool errors, one line each, and the session goes on.
err, text = call("sql", trace=BS64, query="DELETE FROM slice")
check(err is True and "read-only" in text, f"a write is refused: {text}")
err, text = call("sql", trace=BS64, query="ATTACH DATABASE '/tmp/x.db' AS x")
check(err is True, f"ATTACH is refused: {text}")
for path in ("/etc/passwd", SIBLING, os.path.join(tmp, "secret.json"),
             os.path.join(inside, "..", "secret.json"), "../secret.json",
             os.path.join(inside, "escape.json.gz")):
    err, text = call("summary", trace=path)
    check(err is True and "outside" in text and "\n" not in text, f"{path} refused: {text}")
broken = os.path.join(os.path.realpath(inside), "broken.json")
cli = subprocess.run([MLPROF, "summary", broken], capture_output=True, text=True)
err, text = call("summary", trace=broken)
check(err is True and cli.returncode == 2 and cli.stderr == f"mlprof: {text}\n",
      f"a broken trace: the CLI's one-line message ({text!r} vs {cli.stderr!r})")
err, text = call("sql", trace=BS64, query="SELECT * FROM slice")
check(err is True and "more than 100 rows" in text, f"--sql-max-rows: {text}")
err, text = call("sql", trace=BS64, query="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                 "SELECT x + 1 FROM c) SELECT count(*) FROM c")
check(err is True and "stopped after 2 s" in text, f"--sql-timeout: {text}")
err, text = call("analysis", trace=BS64, name="ops", options={"nope": 1})
check(err is True and "unknown option" in text, f"an unknown option: {text}")
err, text = call("summary", trace=BS64, bogus=1)
check(err is True and "unknown argument" in text, f"an unknown argument: {text}")

# Resources: the allowed traces, each read as its summary.
resources = request("resources/list")["result"]["resources"]
uris = {r["uri"] for r in resources}
check("file://" + BS64 in uris and "file://" + SIBLING not in uris, "resources/list")
r = request("resources/read", {"uri": "file://" + BS64})["result"]["contents"][0]
check(json.loads(r["text"]) == summary, "resources/read is the summary")
check(request("resources/read", {"uri": "file:///etc/passwd"})["error"]["code"] == -32002,
      "resources/read outside: -32002")

# Protocol errors.
check(request("no/such/method")["error"]["code"] == -32601, "unknown method: -32601")
check(request("tools/call", {"arguments": {}})["error"]["code"] == -32602, "no tool name: -32602")
check(request("tools/call", {"name": "nope"})["error"]["code"] == -32602, "unknown tool: -32602")
for bad, what in ((b'{"jsonrpc": "2.0", "id": 1, "method": \n', "malformed JSON"),
                  (b"[" * 100000 + b"\n", "100000 levels deep"),
                  (b'{"jsonrpc":"2.0","id":9,"method":"ping","x":"\xff\xfe"}\n', "invalid UTF-8")):
    send_raw(bad)
    r = reply()
    check(r.get("error", {}).get("code") == -32700 and r.get("id") is None, f"{what}: -32700")
    check(request("ping").get("result") == {}, f"the session goes on after {what}")
send_raw(b'{"x":"' + b"a" * (5 << 20) + b'"}\n')  # past the 4 MiB message limit
r = reply()
check(r.get("error", {}).get("code") == -32600 and "longer than" in r["error"]["message"],
      "a 5 MiB line: an error")
check(request("ping").get("result") == {}, "the session goes on after a 5 MiB line")

# A long call does not block ping, and a cancelled call gets no reply.
SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def send(msg):
    send_raw(json.dumps(msg).encode() + b"\n")


send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
      "params": {"name": "sql", "arguments": {"trace": BS64, "query": SLOW}}})
send({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
first, second = reply(), reply()
check(first.get("id") == "p1", f"ping is answered during a long call (first reply {first})")
check(second.get("id") == "slow" and second["result"]["isError"], "the long call ends (timeout)")
send({"jsonrpc": "2.0", "id": "cancel-me", "method": "tools/call",
      "params": {"name": "sql", "arguments": {"trace": BS64, "query": SLOW}}})
send({"jsonrpc": "2.0", "method": "notifications/cancelled",
      "params": {"requestId": "cancel-me", "reason": "test"}})
send({"jsonrpc": "2.0", "id": "after", "method": "tools/call",
      "params": {"name": "list_traces", "arguments": {}}})
r = reply()
check(r.get("id") == "after", f"a cancelled call gets no reply (got {r.get('id')})")

# Seeded random damage: mangled messages and hostile argument values. Every request that parses
# gets one reply, nothing crashes, and the session still answers afterwards.
rng = random.Random(int(os.environ.get("MLPROF_MCP_SEED", "30")))
VALUES = [None, True, -1, 0, 1e308, -1e308, 2**63, 1.5, "", "x" * 10000, "\u0000", "../../etc",
          "/etc/passwd", [], {}, {"a": {"b": [1, 2, {"c": None}]}}, "summary", "ops", BS64]
TOOLS = ["summary", "analysis", "bottlenecks", "roofline", "critical_path", "compare", "sql",
         "open", "list_traces", "nope"]
KEYS = ["trace", "name", "options", "top", "sort", "step", "annotation", "query", "path", "base",
        "new", "device", "peaks", "kernel_delay_us"]
valid_lines = []
sent = {}
for i in range(300):
    args = {rng.choice(KEYS): rng.choice(VALUES) for _ in range(rng.randrange(4))}
    if rng.random() < 0.5:
        args["trace"] = BS64
    if rng.random() < 0.3:
        args["options"] = {rng.choice(["top", "step", "points", "kernel_delay_us", "peaks",
                                       "device", "x"]): rng.choice(VALUES)}
        args["name"] = rng.choice(["ops", "critical_path", "memory", "gpu", "roofline", "heap"])
    msg = json.dumps({"jsonrpc": "2.0", "id": f"z{i}", "method": "tools/call",
                      "params": {"name": rng.choice(TOOLS), "arguments": args}}).encode()
    if rng.random() < 0.3:  # damage the bytes: the line may no longer parse
        b = bytearray(msg)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        msg = bytes(b).replace(b"\n", b" ")
    send_raw(msg + b"\n")
    try:
        parsed = json.loads(msg)
    except ValueError:
        parsed = None  # answered with id null (-32700)
    if isinstance(parsed, dict) and parsed.get("id") == f"z{i}":  # a request (not damaged to a
        valid_lines.append(f"z{i}")                                # notification): one reply
        sent[f"z{i}"] = msg
send_raw(b'{"jsonrpc":"2.0","id":"fuzz-end","method":"tools/call","params":{"name":"list_traces"}}\n')
seen = set()
while True:
    r = reply()
    if r.get("id") == "fuzz-end":
        break
    seen.add(r.get("id"))
missing = [i for i in valid_lines if i not in seen]
check(proc.poll() is None, "the server survived 300 damaged messages")
check(len(missing) == 0, f"every request that parsed got a reply: {missing[:5]}")
for m in missing[:2]:
    print("MISSING", m, sent.get(m, b"")[:300])

r = request("initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                           "clientInfo": {"name": "old", "version": "1"}})
check(r["result"]["protocolVersion"] == "2025-11-25", "an unknown version gets the newest")
send_raw(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
check(reply() == {"jsonrpc": "2.0", "id": "crlf", "result": {}}, "CRLF line ends, a string id")
send_raw(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')  # no newline before EOF
proc.stdin.close()
check(reply().get("id") == "last", "a last line without a newline is answered")
rc = proc.wait(timeout=60)
check(rc == 0, f"EOF ends the session with exit 0 (got {rc}; {proc.stderr.read()[:300]!r})")
shutil.rmtree(tmp)
finish()
