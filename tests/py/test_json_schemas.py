"""Every JSON document mlprof writes carries "schema": "mlprof.NAME/MAJOR" and validates against
schemas/NAME.schema.json (docs/json.md), checked with python3-jsonschema (Debian's; draft 2020-12):

1. Every subcommand whose --help offers --json (or --data-json) is in COMMANDS below, is run on
   a small input, says which schema it follows, and that schema file exists and validates it:
   a new command with --json cannot land without a schema (and an entry here). Every file in
   schemas/ is a valid schema and is some output's.
2. Every shared trace (../shared/traces through MLPROF_SHARED_DIR; skipped with a message when
   absent): `report --data-json` (the report's schema, and each analysis in it against its own:
   the same tokens `mlprof NAME --json` prints, test_pipeline_consistency checks that); on the
   first trace of each folder (to bound the run time) also `analyze --json` and `heap`/`graphs
   --json` (the two analyses the report leaves out); `ranks --json`
   on the rank directories, `compile --json` on the torch.compile logs, `compare --json` on the
   shared compare pairs, `sql --json` on three traces. Without python3-jsonschema only the
   "schema" stamps and the file list are checked, and the test exits 77 (skip) with a message.

Usage: test_json_schemas.py MLPROF DATA_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMAS = os.path.join(REPO, "schemas")
try:
    import jsonschema
except ImportError:
    jsonschema = None
    print("SKIP (validation): python3-jsonschema is not installed (make deps-test installs it); "
          "checking the schema stamps and files only")

CPU = os.path.join(DATA, "a_mlp_b32_w64.kineto.json.gz")
CPU2 = os.path.join(DATA, "mlp_bs64.json.gz")

# How each subcommand with --json is run on a small input (tests/data), and the schemas its
# outputs follow. {store} and {tmp} are filled in below.
COMMANDS = {
    "summary": [["summary", "--json", CPU]],
    "ops": [["ops", "--json", CPU]],
    "steps": [["steps", "--json", CPU]],
    "kernels": [["kernels", "--json", CPU]],
    "gpu": [["gpu", "--json", CPU]],
    "memory": [["memory", "--json", CPU],
               ["memory", "--json", os.path.join(DATA, "h100", "h100_eager_snapshot.pickle.gz")]],
    "leaks": [["leaks", "--json", CPU]],
    "heap": [["heap", "--json", CPU]],
    "bottlenecks": [["bottlenecks", "--json", CPU]],
    "flops": [["flops", "--json", CPU]],
    "flame": [["flame", "--json", CPU]],
    "timeline": [["timeline", "--json", CPU]],
    "modules": [["modules", "--json", CPU]],
    "critical-path": [["critical-path", "--json", CPU]],
    "ranks": [["ranks", "--json", "{ranks}"]],
    "compile": [["compile", "--json", CPU]],
    "roofline": [["roofline", "--json", CPU]],
    "graphs": [["graphs", "--json", CPU]],
    "analyze": [["analyze", "--json", CPU]],
    "compare": [["compare", "--json", CPU2, CPU2], ["compare", "--json", CPU2, CPU2, CPU2],
                ["compare", "--json", "--store", "{store}", "--against", "b", CPU2]],
    "sql": [["sql", CPU, "SELECT name, dur FROM slice LIMIT 3; SELECT count(*) AS n FROM slice",
             "--json"]],
    "report": [["report", "--data-json", CPU]],
    "demo": [["demo", "--json", "--steps", "20", "--out", "{tmp}/demo"]],
    "baseline": [["baseline", "show", "b", "--json", "--store", "{store}"],
                 ["baseline", "list", "--json", "--store", "{store}"]],
}
_validators = {}


def validator(name):
    if name not in _validators:
        path = os.path.join(SCHEMAS, f"{name}.schema.json")
        schema = json.load(open(path))
        if jsonschema:
            jsonschema.Draft202012Validator.check_schema(schema)
            _validators[name] = jsonschema.Draft202012Validator(schema)
        else:
            _validators[name] = None
    return _validators[name]


def validate(doc, what, want=None):
    """doc's "schema" names an existing file (and `want` when given); doc validates against it."""
    stamp = doc.get("schema") if isinstance(doc, dict) else None
    m = re.fullmatch(r"mlprof\.([a-z_]+)/(\d+)", stamp or "")
    if not check(m is not None, f"{what}: \"schema\" is mlprof.NAME/MAJOR (got {stamp!r})"):
        return
    name = m.group(1)
    if want:
        check(name == want, f"{what}: schema {name}, want {want}")
    path = os.path.join(SCHEMAS, f"{name}.schema.json")
    if not check(os.path.exists(path), f"{what}: schemas/{name}.schema.json exists"):
        return
    seen.add(name)
    v = validator(name)
    check(json.load(open(path))["properties"]["schema"]["const"] == stamp,
          f"{what}: the schema file is for {stamp}")
    if v is None:
        return
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    detail = "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}"
                       for e in errors[:3])
    check(not errors, f"{what}: valid against schemas/{name}.schema.json {detail}")


def run(args, expect=0):
    p = subprocess.run([MLPROF, *args], capture_output=True, text=True)
    if p.returncode != expect:
        raise RuntimeError(f"mlprof {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def documents(text):
    """The JSON documents of an output: one, or (sql) one per statement."""
    dec, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        doc, i = dec.raw_decode(text, i)
        out.append(doc)
    return out


def check_report(path, what):
    report = json.loads(run(["report", "--data-json", path]))
    validate(report, f"{what}: report --data-json", "report")
    for name, section in report["analyses"].items():
        validate(section, f"{what}: {name} (as `mlprof {name} --json`)", name)
    validate(report["ranks"], f"{what}: ranks", "ranks")


seen = set()
with tempfile.TemporaryDirectory() as tmp:
    store = os.path.join(tmp, "store")
    ranks = os.path.join(tmp, "ranks")
    os.makedirs(ranks)
    for r in (0, 1):
        os.symlink(os.path.abspath(CPU), os.path.join(ranks, f"rank{r}.json.gz"))
    run(["baseline", "save", "b", CPU2, "--store", store])

    # 1. every command with --json: in the table, stamped, its schema exists and validates.
    top = run(["--help"])
    names = sorted(set(re.findall(r"^\s{2}([a-z][a-z-]+)\s", top[top.index("Subcommands:"):],
                                  re.M)))
    check(len(names) >= 20, f"subcommands read from --help ({len(names)})")
    for cmd in names:
        helps = run([cmd, "--help"])
        for sub in re.findall(r"^\s{2}([a-z]+)\s", helps[helps.find("Subcommands:"):], re.M) \
                if "Subcommands:" in helps else []:
            helps += run([cmd, sub, "--help"])
        if "--json" not in helps and "--data-json" not in helps:
            continue
        if not check(cmd in COMMANDS, f"{cmd} has --json: give it a schema in schemas/ and an "
                                      "entry in COMMANDS (tests/py/test_json_schemas.py)"):
            continue
        for args in COMMANDS[cmd]:
            args = [a.format(store=store, tmp=tmp, ranks=ranks) for a in args]
            try:
                docs = documents(run(args))
            except (RuntimeError, ValueError) as e:
                check(False, f"mlprof {' '.join(args)}: {e}")
                continue
            check(docs, f"{' '.join(args)}: prints JSON")
            for doc in docs:
                validate(doc, f"mlprof {' '.join(args[:2])}")
    for cmd in COMMANDS:
        check(cmd in names, f"{cmd} in COMMANDS is a subcommand")

    # compare --against's refusal is a one-line error, not a document.
    p = subprocess.run([MLPROF, "compare", "--json", "--store", store, "--against", "b", CPU],
                       capture_output=True, text=True)
    check(p.returncode in (0, 4), f"compare --against a different model: exit {p.returncode}")

# Every schema file is a schema, and some output's.
files = sorted(f[:-len(".schema.json")] for f in os.listdir(SCHEMAS) if f.endswith(".schema.json"))
for name in files:
    try:
        validator(name)
    except Exception as e:  # noqa: BLE001
        check(False, f"schemas/{name}.schema.json is a valid draft 2020-12 schema: {e}")

# 2. the shared traces.
shared = shared_data.shared_path("traces")
if shared:
    traces = []
    for d, dirs, fs in os.walk(shared):
        dirs.sort()
        for f in sorted(fs):
            if f.endswith((".json", ".json.gz", ".mlprof", ".pickle", ".pickle.gz", ".pftrace",
                           ".sqlite", ".rpd", ".xplane.pb")) and f != "EXPECTED.json":
                traces.append(os.path.join(d, f))
    validated = 0
    folders = set()
    for path in traces:
        rel = os.path.relpath(path, shared)
        try:
            run(["summary", "--json", path])
        except RuntimeError:
            continue  # reference numbers, logs that are no trace
        check_report(path, rel)
        validated += 1
        # analyze (the report's sections again), heap and graphs: one trace per folder.
        if os.path.dirname(path) in folders:
            continue
        folders.add(os.path.dirname(path))
        validate(json.loads(run(["analyze", "--json", path])), f"{rel}: analyze --json", "analyze")
        for cmd in ("heap", "graphs"):
            validate(json.loads(run([cmd, "--json", path])), f"{rel}: {cmd} --json", cmd)
    check(validated >= 40, f"shared traces validated: {validated}")
    for rank_dir in ("kineto-gpu/trace_filter", "compile/tlparse/multi_rank_runtime"):
        p = shared_data.shared_path("traces/" + rank_dir)
        if p:
            try:
                validate(json.loads(run(["ranks", "--json", p])), f"{rank_dir}: ranks --json",
                         "ranks")
            except RuntimeError as e:
                check("no trace files" in str(e), f"{rank_dir}: {e}")
    for d, dirs, fs in os.walk(os.path.join(shared, "compile")):
        for f in sorted(fs):
            if f.endswith(".log"):
                p = os.path.join(d, f)
                validate(json.loads(run(["compile", "--json", p])),
                         f"{os.path.relpath(p, shared)}: compile --json", "compile")
    for a, b in (("kineto-gpu/trace_diff/control", "kineto-gpu/trace_diff/test"),
                 ("kineto-gpu/trace_compare/base", "kineto-gpu/trace_compare/test")):
        pa, pb = shared_data.shared_path("traces/" + a), shared_data.shared_path("traces/" + b)
        if pa and pb:
            fa = [os.path.join(pa, f) for f in sorted(os.listdir(pa))][0]
            fb = [os.path.join(pb, f) for f in sorted(os.listdir(pb))][0]
            validate(json.loads(run(["compare", "--json", fa, fb])), f"compare {a} {b}",
                     "compare")
    for rel in ("pytorch-cpu/mlp_bs64.json.gz", "kineto-gpu/trace_diff/control"):
        p = shared_data.shared_path("traces/" + rel)
        if p and os.path.isdir(p):
            p = os.path.join(p, sorted(os.listdir(p))[0])
        if p:
            for doc in documents(run(["sql", p, "SELECT * FROM slice LIMIT 20; SELECT * FROM ops",
                                      "--json"])):
                validate(doc, f"{rel}: sql --json", "sql")

check(set(files) <= seen, f"schema files no output used: {sorted(set(files) - seen)}")
if jsonschema is None:
    shared_data._missing.append("python3-jsonschema")  # exit 77 (skip) unless something failed
finish()
