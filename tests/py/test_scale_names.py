"""Issue 32 item 8a: a trace whose every event has its own op name. `summary`, `ops` and the
report's data must cost memory proportional to the input: 1e6 names in a 70 MB file took 1.24 GB
for `summary` (a duration vector, a hash node and two OpStats copies per name) and 2.6 GB for
`report` (every row embedded). Here 200k events with 200k names against the same events with
1,000 names (bench/gen_many_names.py writes both); peak RSS of the child (ru_maxrss) must stay
within a generous ratio of the 1,000-name run, and the numbers are checked against a Python
computation over the same JSON: distinct ops, the top rows' count/total/min/max/p50, the
report's embedded ops table cut to 10,000 rows with `rows` giving them all.
Usage: test_scale_names.py MLPROF TESTS_DATA"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

MLPROF = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVENTS = 200000


def run(args):
    """(exit code, stdout, peak RSS in MiB) of `mlprof ARGS`."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([MLPROF, *args], stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), usage.ru_maxrss / 1024


def reference(path):
    """Per (name, category): durations in ns, from the JSON itself."""
    rows = {}
    for e in json.load(open(path))["traceEvents"]:
        rows.setdefault((e["name"], e["cat"]), []).append(int(e["dur"]) * 1000)
    return rows


def percentile(v, q):  # linear interpolation between closest ranks (numpy's default)
    v = sorted(v)
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rss = {}
        for names in (1000, EVENTS):
            path = os.path.join(tmp, f"names{names}.json")
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_many_names.py"), path,
                            str(EVENTS), str(names)], check=True)
            ref = reference(path)
            order = sorted(ref, key=lambda k: (-sum(ref[k]), k[0]))
            rc, out, rss[("summary", names)] = run(["summary", path, "--json", "--top", "5"])
            s = json.loads(out) if rc == 0 else {}
            check(rc == 0 and s.get("distinct_ops") == len(ref),
                  f"{names} names: summary's distinct_ops {s.get('distinct_ops')} == {len(ref)}")
            for got, key in zip(s.get("top_ops", []), order[:5]):
                d = ref[key]
                want = {"name": key[0], "count": len(d), "total_ns": sum(d), "min_ns": min(d),
                        "max_ns": max(d), "p50_ns": percentile(d, 0.5),
                        "p99_ns": percentile(d, 0.99)}
                check(all(got.get(k) == v for k, v in want.items()),
                      f"{names} names: summary row {key[0]} {got} matches {want}")
            rc, out, rss[("ops", names)] = run(["ops", path, "--json", "--top", "3"])
            o = json.loads(out) if rc == 0 else {}
            check(o.get("rows") == len(ref) and len(o.get("ops", [])) == min(3, len(ref)),
                  f"{names} names: ops --top 3 keeps 3 of {o.get('rows')} rows ({len(ref)})")
            rc, out, rss[("report", names)] = run(["report", path, "--data-json"])
            r = json.loads(out) if rc == 0 else {}
            ops = r.get("analyses", {}).get("ops", {})
            check(ops.get("rows") == len(ref) and len(ops.get("ops", [])) == min(10000, len(ref)),
                  f"{names} names: the report embeds {len(ops.get('ops', []))} of "
                  f"{ops.get('rows')} op rows (10,000 at most of {len(ref)})")
            if ops.get("ops"):
                check(ops["ops"][0]["name"] == order[0][0],
                      f"{names} names: the report's first op row is the most total time")
        for what in ("summary", "ops", "report"):
            few, many = rss[(what, 1000)], rss[(what, EVENTS)]
            print(f"{what}: peak RSS {few:.1f} MiB with 1,000 names, {many:.1f} MiB with "
                  f"{EVENTS:,} names ({many / few:.2f}x)")
            # Before: summary 2.3x, report 3.5x at this size (1e6 names: 12.6x and 27x).
            check(many < 1.6 * few + 10,
                  f"{what}: {EVENTS:,} names take {many:.1f} MiB, within 1.6x of 1,000 names "
                  f"({few:.1f} MiB) + 10 MiB")
    finish()


if __name__ == "__main__":
    main()
