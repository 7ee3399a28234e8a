"""`mlprof ranks` on generated rank sets whose answers are known (bench/gen_ranks.py, from the real
rank traces in the shared folder), on the real 2-rank set and the NCCL trace, and under mpirun:

* the delayed rank is named the straggler, late by the delay (minus at most the jitter), at every
  collective, and every clock offset is the one the generator applied (base time, or collective
  ends when the traces have no baseTimeNanoseconds);
* the communication time of each rank, computed here from the generated files (union of the NCCL
  kernels), is the distribution's min and max;
* `bottlenecks DIR` makes the delayed rank a straggler finding saving calls x delay, and
  `analyze DIR` analyzes it in depth;
* duplicate ranks, missing ranks and mixed world sizes are warnings; a duplicate trace is not
  matched at collectives twice, and the header counts distinct ranks;
* identical ranks tie at every collective: no rank arrived last;
* each rank's top kernels are its 5 with most time by full name, computed here from the file;
* `mpirun --oversubscribe -np 3 mlprof ranks DIR --json` prints the single-process JSON byte for
  byte (skipped, with a message, when mpirun is absent or mlprof was built without MPI); other
  commands run on MPI rank 0 alone.

Usage: test_ranks_scale.py MLPROF DATA_DIR"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(REPO, "bench", "gen_ranks.py")


def run(*args, expect=0):
    p = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    if p.returncode != expect:
        raise RuntimeError(f"mlprof {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def ranks_json(d):
    return json.loads(run("ranks", "--json", d).stdout)


def generate(src, out, *args):
    subprocess.run([sys.executable, GEN, src, out, *args], check=True)
    return json.load(open(os.path.join(out, "answers.txt")))


def comm_union_ns(path):
    """|union of the NCCL kernels| of one generated rank file, in ns (mlprof rounds each time to
    a whole ns)."""
    opener = gzip.open if path.endswith(".gz") else open
    events = json.load(opener(path, "rt"), parse_float=Decimal)["traceEvents"]
    iv = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in events
                if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower())
    total, cur_s, cur_e = 0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def metric(r, name):
    return next(d for d in r["distributions"] if d["metric"] == name)


def check_delayed(d, ans, base_time):
    r = ranks_json(d)
    n, late, jitter = ans["ranks"], ans["delay_rank"], ans["jitter_us"]
    tag = f"{os.path.basename(d)}:"
    check(r["stragglers"] == [late], f"{tag} straggler {r['stragglers']} == [{late}]")
    ev = r["straggler_evidence"][0] if r["straggler_evidence"] else {}
    calls = ans["comm_kernels_per_rank"]
    check(ev.get("last_count") == calls and ev.get("calls") == calls,
          f"{tag} last at every call: {ev.get('last_count')}/{ev.get('calls')} of {calls}")
    delay_ns = ans["delay_us"] * 1000
    med = ev.get("late_median_ns", 0)
    check(delay_ns - jitter * 1000 - 1000 <= med <= delay_ns + 1000,
          f"{tag} late by {med} ns, delay {delay_ns} ns (jitter {jitter} us)")
    check(all(c["last_rank"] == late for c in r["late_calls"]), f"{tag} every late call is rank {late}")
    method = "kineto_base_time" if base_time else "collective_end"
    check(r["clock_alignment"]["method"] == method,
          f"{tag} clock alignment {r['clock_alignment']['method']} == {method}")
    shifts = ans["offsets_us"]
    for row in r["ranks"]:
        want = (shifts["0"] - shifts[str(row["rank"])]) * 1000
        # base time: exact; collective ends: exact but for float-microsecond rounding
        tol = 0 if base_time else 2
        check(abs(row["clock_offset_ns"] - want) <= tol,
              f"{tag} rank {row['rank']} clock offset {row['clock_offset_ns']} == {want}")
    check(len(r["ranks"]) == n and r["world_size"] == n and not r["warnings"],
          f"{tag} {n} ranks, no warnings: {r['warnings']}")
    # Communication time per rank, computed here from the files.
    comm = [comm_union_ns(os.path.join(d, f)) for f in ans["files"]]
    m = metric(r, "communication_ns")
    check(abs(m["min"] - min(comm)) <= calls and abs(m["max"] - max(comm)) <= calls,
          f"{tag} communication min/max {m['min']}/{m['max']} vs {min(comm)}/{max(comm)}")
    return r


def check_straggler_finding(d, ans):
    """`bottlenecks DIR` names the delayed rank as a straggler finding whose saving is the time
    the others wait for it (calls x delay, less at most the jitter), ranked by that saving, and
    `analyze DIR` analyzes that rank in depth (every rank's steps last as long)."""
    late, calls = ans["delay_rank"], ans["comm_kernels_per_rank"]
    delay_ns, jitter_ns = ans["delay_us"] * 1000, ans["jitter_us"] * 1000
    tag = f"{os.path.basename(d)}:"
    b = json.loads(run("bottlenecks", "--json", d).stdout)
    found = [f for f in b["findings"] if f["kind"] == "straggler"]
    check(len(found) == 1 and found[0]["ops"] == [f"rank {late}"],
          f"{tag} one straggler finding, rank {late}: {[f['title'] for f in b['findings']]}")
    if not found:
        return
    f = found[0]
    ev = f["evidence"]
    check(ev.get("rank") == late and ev.get("last_count") == calls and ev.get("calls") == calls,
          f"{tag} finding evidence: rank {ev.get('rank')}, last at {ev.get('last_count')}/{ev.get('calls')}")
    lo, hi = calls * (delay_ns - jitter_ns - 1000), calls * (delay_ns + 1000)
    check(lo <= f["est_savings_ns"] <= hi,
          f"{tag} saving {f['est_savings_ns']} ns in [{lo}, {hi}] (calls x delay)")
    check(f["title"].startswith(f"Rank {late} is a straggler: last to arrive at {calls} of {calls}"),
          f"{tag} title: {f['title']}")
    i = b["findings"].index(f)
    check(all(x["est_savings_ns"] >= f["est_savings_ns"] for x in b["findings"][:i]) and
          all(x["est_savings_ns"] <= f["est_savings_ns"] for x in b["findings"][i + 1:]),
          f"{tag} ranked by its saving")
    a = json.loads(run("analyze", "--json", d).stdout)
    check(os.path.basename(a["source"]).startswith(f"rank-{late:05d}"),
          f"{tag} analyze: in depth the straggler, not {os.path.basename(a['source'])}")
    check(a["bottlenecks"] == b, f"{tag} analyze bottlenecks == bottlenecks DIR")
    text = run("bottlenecks", d).stdout
    check(f"straggler: Rank {late} is a straggler" in text, f"{tag} the text names rank {late}")


def kernel_totals(path):
    """Per full kernel name: (calls, total ns) of one rank file's GPU kernels."""
    opener = gzip.open if path.endswith(".gz") else open
    events = json.load(opener(path, "rt"), parse_float=Decimal)["traceEvents"]
    out = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            n, t = out.get(e["name"], (0, 0))
            out[e["name"]] = (n + 1, t + round((e["ts"] + e["dur"]) * 1000) - round(e["ts"] * 1000))
    return out


def check_top_kernels(d, ans, r):
    """Each rank's top kernels are its 5 kernels with the most time, by their full names (a cut at
    the first '(' merged `void at::native::(anonymous namespace)::...` kernels into one)."""
    for row in r["ranks"][:2]:
        name = os.path.basename(row["source"])
        want = sorted(kernel_totals(os.path.join(d, name)).items(), key=lambda x: (-x[1][1], x[0]))[:5]
        got = [(k["name"], k["count"], k["time_ns"]) for k in row["top_kernels"]]
        ok = len(got) == len(want) and all(
            g[0] == w[0] and g[1] == w[1][0] and abs(g[2] - w[1][1]) <= w[1][0] for g, w in zip(got, want))
        check(ok, f"{name}: top kernels {[g[:2] for g in got]} == {[(w[0], w[1][0]) for w in want]}")


def check_mpi_other_commands(path):
    """Under mpirun, commands other than `ranks` run on MPI rank 0 alone (one output, a note on
    stderr); the other processes exit 0 without output."""
    single = run("summary", path).stdout
    for rank, out in (("1", ""), ("0", single)):
        env = {**os.environ, "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": rank}
        p = subprocess.run([MLPROF, "summary", path], capture_output=True, text=True, env=env)
        check(p.returncode == 0 and p.stdout == out,
              f"MPI rank {rank} of 2: summary prints {'nothing' if not out else 'the output once'} "
              f"(exit {p.returncode}, {len(p.stdout)} bytes)")
        check((rank == "0") == ("runs on MPI rank 0 alone" in p.stderr), f"MPI rank {rank}: note")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("SKIP mpirun summary: mpirun not installed (Debian openmpi-bin)")
        return
    p = subprocess.run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "2", MLPROF,
                        "summary", path], capture_output=True, text=True, timeout=240, env=MPI_ENV)
    check(p.returncode == 0 and p.stdout == single,
          f"mpirun -np 2 summary prints the output once (exit {p.returncode}, {len(p.stdout)} vs "
          f"{len(single)} bytes): {p.stderr.strip()[-300:]}")
    check(p.stderr.count("runs on MPI rank 0 alone") == 1, "mpirun -np 2 summary: one note")


# Open MPI's own components leak at MPI_Finalize and are unloaded by then (no module left for an
# LSan suppression to name): under ASan (make test-asan) the mpirun children skip leak checking.
MPI_ENV = {**os.environ,
           "ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))}


def check_mpi(d):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("SKIP mpirun: not installed (Debian openmpi-bin)")
        return
    single = run("ranks", "--json", d).stdout
    p = subprocess.run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "3", MLPROF,
                        "ranks", "--json", d], capture_output=True, text=True, timeout=240,
                       env=MPI_ENV)
    if "built without MPI" in p.stderr:
        print("SKIP mpirun: this mlprof was built without MPI")
        return
    check(p.returncode == 0, f"mpirun -np 3: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    check(p.stdout == single, f"mpirun -np 3 ranks --json == single process ({len(p.stdout)} vs "
                              f"{len(single)} bytes)")
    text = run("ranks", d).stdout
    p = subprocess.run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", "2", MLPROF,
                        "ranks", d], capture_output=True, text=True, timeout=240, env=MPI_ENV)
    check(p.returncode == 0 and p.stdout == text, "mpirun -np 2 ranks (text) == single process")


shared = shared_data.require("traces/kineto-gpu")
sampled = os.path.join(shared, "trace_filter", "sampled_rank-0.json.gz")
nccl = os.path.join(shared, "nccl_parser_config", "nccl_data.json.gz")
tmp = tempfile.mkdtemp(prefix="mlprof-ranks-")
try:
    # A real NCCL rank (process groups, sizes, baseTimeNanoseconds) as 4 ranks, rank 2 late.
    d = os.path.join(tmp, "nccl4")
    ans = generate(nccl, d, "-n", "4", "--delay-rank", "2", "--delay-us", "1500",
                   "--skew-us", "5000", "--jitter-us", "20", "--gzip")
    r = check_delayed(d, ans, base_time=True)
    check(any(b["name"] == "allreduce" for b in r["size_buckets"]), "allreduce size buckets")
    check_straggler_finding(d, ans)
    check_top_kernels(d, ans, r)
    check_mpi(d)
    check_mpi_other_commands(os.path.join(d, ans["files"][0]))

    # The sampled A100 rank (no process-group args: streams stand for them) as 6 ranks without
    # baseTimeNanoseconds: aligned at collective ends.
    d = os.path.join(tmp, "sampled6")
    ans = generate(sampled, d, "-n", "6", "--delay-rank", "5", "--delay-us", "3000",
                   "--skew-us", "20000", "--no-base-time")
    check_delayed(d, ans, base_time=False)
    # ... and with a base time written in.
    d = os.path.join(tmp, "sampled6b")
    ans = generate(sampled, d, "-n", "6", "--delay-rank", "1", "--delay-us", "800",
                   "--skew-us", "20000", "--base-time", "1682725000000000000", "--jitter-us", "5")
    check_delayed(d, ans, base_time=True)

    # Duplicate, missing, mixed world sizes.
    d = os.path.join(tmp, "broken")
    generate(sampled, d, "-n", "8", "--duplicate", "2", "--missing", "5", "--missing", "6",
             "--world-size", "7=16")
    r = ranks_json(d)
    w = r["warnings"]
    check(any(x.startswith("duplicate rank 2: 2 traces (rank-00002-dup.json, rank-00002.json)")
              for x in w), f"duplicate warning in {w}")
    check("missing ranks: 2 of world size 8 have no trace (5-6)" in w, f"missing warning in {w}")
    check(any(x.startswith("mixed world sizes: 8 (6 traces: rank 0-4); 16 (1 trace: rank 7)")
              for x in w), f"mixed world size warning in {w}")
    text = run("ranks", d).stdout
    check("warning: duplicate rank 2" in text and "warning: missing ranks" in text,
          "warnings in the text output")
    # The header counts distinct ranks: 7 traces (rank-00002-dup too) of 6 ranks.
    traces = len(os.listdir(d)) - 1  # answers.txt
    distinct = len({int(f[5:10]) for f in os.listdir(d) if f.startswith("rank-")})
    check(text.startswith(f"{traces} traces of {distinct} ranks (world size 8)"),
          f"header: {traces} traces of {distinct} ranks: {text.splitlines()[0]}")
    check(r["distinct_ranks"] == distinct, f"distinct_ranks {r['distinct_ranks']} == {distinct}")
    # Identical ranks (no delay, no skew): every call is a tie, nobody arrived last.
    check(r["matched_calls"] > 0 and all(x["last_count"] == 0 and x["late_total_ns"] == 0
                                         for x in r["ranks"]) and r["late_calls"] == [],
          f"ties: no rank last ({[(x['rank'], x['last_count']) for x in r['ranks']]}, "
          f"{len(r['late_calls'])} late calls)")

    # Duplicates are not matched twice: 16 ranks, 4 of them with a second trace, rank 9 late.
    d = os.path.join(tmp, "dup20")
    ans = generate(sampled, d, "-n", "16", "--duplicate", "1", "--duplicate", "3", "--duplicate",
                   "5", "--duplicate", "7", "--delay-rank", "9", "--delay-us", "1000",
                   "--base-time", "1682725000000000000")
    r = ranks_json(d)
    n, calls = ans["ranks"], ans["comm_kernels_per_rank"]
    check(len(r["ranks"]) == n + 4 and r["distinct_ranks"] == n,
          f"dup20: {len(r['ranks'])} rows, {r['distinct_ranks']} distinct ranks")
    check(r["late_calls"] and all(c["ranks"] == n and c["last_rank"] == 9 for c in r["late_calls"]),
          f"dup20: every call matched on {n} ranks: {[c['ranks'] for c in r['late_calls']]}")
    seen = set()
    for row in r["ranks"]:  # the first trace of a rank (by path) is matched, the copy is not
        want = 0 if row["rank"] in seen else calls
        seen.add(row["rank"])
        check(row["collective_calls"] == want,
              f"dup20: {os.path.basename(row['source'])} matched at {row['collective_calls']} == {want}")
    check(sum(c["count"] for c in r["collectives"]) == n * calls,
          f"dup20: collectives count each rank once ({sum(c['count'] for c in r['collectives'])})")
    check(run("ranks", d).stdout.startswith(f"{n + 4} traces of {n} ranks (world size {n})"),
          "dup20: header")

    # Output that reads at scale: 40 ranks -> distributions and the worst 10 in text, every rank
    # in --json and --csv.
    d = os.path.join(tmp, "many")
    generate(sampled, d, "-n", "40", "--delay-rank", "17", "--delay-us", "2000")
    text = run("ranks", d).stdout
    check("Worst 10 of 40 ranks" in text, "text shows the worst 10 of 40")
    rows = [ln for ln in text.splitlines() if ln[:1].isdigit() and " ms " in ln]
    check(rows and rows[0].startswith("17 *"), f"the straggler leads the worst ranks: {rows[:1]}")
    check(len(ranks_json(d)["ranks"]) == 40, "--json lists every rank")
    csv = run("ranks", "--csv", d).stdout.strip().splitlines()
    check(len(csv) == 41, f"--csv: header + 40 rows, got {len(csv)} lines")

    # Duplicate step markers (a copy on a second thread, a copy nested in its own step): `ranks`
    # counts steps by the rule `steps` uses. The rule, computed here: host markers in time order,
    # one starting before the previous kept marker ends is a duplicate.
    d = os.path.join(tmp, "dupsteps")
    os.makedirs(d)
    # (tid, ts us, dur us, step number): step 1 also on thread 2, a copy of step 2 inside step 2.
    marks = [(1, 0, 100, 1), (2, 0, 100, 1), (1, 100, 150, 2), (1, 110, 90, 2), (1, 250, 50, 3),
             (2, 260, 10, 3)]
    for rank in (0, 1):
        ev = [{"ph": "X", "name": f"ProfilerStep#{n}", "pid": 1, "tid": tid, "ts": ts + rank,
               "dur": dur} for tid, ts, dur, n in marks]
        ev.append({"ph": "X", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5 + rank, "dur": 20})
        json.dump({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": ev},
                  open(os.path.join(d, f"rank-{rank}.json"), "w"))
    kept, end = [], None
    for tid, ts, dur, n in sorted(marks, key=lambda m: m[1]):
        if end is None or ts >= end:
            kept.append(dur)
            end = ts + dur
    r = ranks_json(d)
    steps = json.loads(run("steps", "--json", os.path.join(d, "rank-0.json")).stdout)
    for row in r["ranks"]:
        check(row["steps"] == len(kept) == steps["count"],
              f"dupsteps rank {row['rank']}: {row['steps']} steps, rule {len(kept)}, steps {steps['count']}")
        check(row["step_mean_ns"] == 1000 * sum(kept) / len(kept) and row["step_max_ns"] == 1000 * max(kept),
              f"dupsteps rank {row['rank']}: mean {row['step_mean_ns']} max {row['step_max_ns']} vs {kept} us")

    # The real 2-rank set (2 of a 128-rank job) and the one-rank NCCL trace.
    real = os.path.join(shared, "trace_filter")
    r = ranks_json(real)
    check(r["world_size"] == 128, "trace_filter: world size 128")
    check("missing ranks: 126 of world size 128 have no trace (2-127)" in r["warnings"],
          f"trace_filter: missing ranks warned: {r['warnings']}")
    check(r["matched_calls"] == 10 and r["clock_alignment"]["method"] == "collective_end",
          f"trace_filter: 10 calls matched over streams, aligned at collective ends "
          f"({r['matched_calls']}, {r['clock_alignment']['method']})")
    one = os.path.join(tmp, "nccl1")
    os.makedirs(one)
    os.symlink(nccl, os.path.join(one, "rank-0.json.gz"))
    r = ranks_json(one)
    check(r["clock_alignment"]["method"] == "none" and r["matched_calls"] == 0,
          "one rank: no alignment, no matched calls")
    check("missing ranks: 1 of world size 2 have no trace (1)" in r["warnings"],
          f"nccl: rank 1 of 2 missing: {r['warnings']}")
finally:
    shutil.rmtree(tmp)

finish()
