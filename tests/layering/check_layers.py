"""Dependencies point downstream only (ctest: layering; docs/architecture.md).

    trace <- import <- analyze <- render <- cli / serve / python
    serve, sql <- mcp (the MCP server: serve's trace store, SQL) <- cli
    trace <- export (file writers), record (the recorder) uses trace and export

ALLOWED below is the table; this script checks the code and the build against it:
  1. includes: every #include "..." under src/<stage>/ and python/src/ names a header of its own
     stage or of an allowed one: an internal header "<stage>/x.h", or a public one
     ("mlprof/x.h", owned by the stage PUBLIC_HEADERS names). No "../" includes. Public headers
     include public headers only, and include/mlprof/ holds exactly PUBLIC_HEADERS (item 3 of
     issue 10: the public API is what a library user needs; internals live under src/).
  2. CMake: every link edge between mlprof's libraries (LINK_LIBRARIES, PUBLIC and PRIVATE, as
     written at generate time by tests/CMakeLists.txt) is allowed, and every stage root in a
     target's include path (transitive, as the compiler gets it) is allowed.
  3. the build enforces it: for each stage, a probe source including one internal header of
     each other stage is compiled with that stage's flags (from compile_commands.json): it must
     compile for an allowed stage and fail ("No such file") for any other.
  4. mlprof_record's transitive link closure holds no importer, analysis, renderer, SQL, serve
     or web bundle library.
  5. symbols: every mlprof:: function or object a stage's library uses is defined in that
     library or in one of an allowed stage (nm): nothing declared in one stage's header is
     defined in a stage downstream of it.
  6. one door into the analysis stage: no code outside src/analyze (the other stages' libraries,
     the CLI's and the Python module's objects) calls an analysis entry function (nm): each
     consumer asks an AnalysisSet (mlprof/analysis_set.h), comparisons go through
     compare_analyses (mlprof/analysis_compare.h). The entries are analyze_NAME for each row of the catalogue
     (mlprof/analysis_catalog.h) that declares one, plus ENTRY_EXTRA; each must be declared in a
     public analyze header (a renamed entry fails here instead of leaving the check blind).

Usage: check_layers.py REPO_ROOT BUILD_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# stage -> the stages it may use (besides itself).
ALLOWED = {
    "trace": set(),
    "import": {"trace"},
    "export": {"trace"},
    "record": {"trace", "export"},
    "analyze": {"trace"},
    "render": {"trace", "analyze"},
    "sql": {"trace", "analyze", "render"},
    "serve": {"trace", "import", "analyze", "render"},
    "mcp": {"trace", "import", "analyze", "render", "sql", "serve"},
    "cli": {"trace", "import", "export", "record", "analyze", "render", "sql", "serve", "mcp"},
    "python": {"trace", "import", "export", "record", "analyze", "render"},
}

# include/mlprof/: each public header and the stage that defines what it declares.
PUBLIC_HEADERS = {
    "mlprof/mlprof.h": "record",
    "mlprof/trace.h": "trace",
    "mlprof/table_schema.h": "trace",
    "mlprof/string_pool.h": "trace",
    "mlprof/status.h": "trace",
    "mlprof/import_stats.h": "trace",
    "mlprof/compile_log.h": "trace",
    "mlprof/memory_snapshot.h": "trace",
    "mlprof/import.h": "import",
    "mlprof/native_format.h": "export",
    "mlprof/chrome_export.h": "export",
    "mlprof/perfetto_export.h": "export",
    "mlprof/analysis_set.h": "analyze",
    "mlprof/analysis_catalog.h": "analyze",
    "mlprof/analysis_compare.h": "analyze",
}
PUBLIC_DIRS = {"mlprof/analyze/": "analyze"}  # every header in these folders

# CMake targets -> stage.
TARGETS = {
    "mlprof_trace": "trace",
    "mlprof_import": "import",
    "mlprof_capture": "import",
    "mlprof_export": "export",
    "mlprof_record": "record",
    "mlprof_preload": "record",
    "mlprof_cupti": "record",
    "mlprof_analyze": "analyze",
    "mlprof_render": "render",
    "mlprof_web_assets": "render",
    "mlprof_sql": "sql",
    "mlprof_serve": "serve",
    "mlprof_mcp": "mcp",
    "mlprof": "cli",
    "mlprof_python_ext": "python",
}
NOT_FOR_THE_RECORDER = {"mlprof_import", "mlprof_capture", "mlprof_analyze", "mlprof_render",
                        "mlprof_web_assets", "mlprof_sql", "mlprof_serve", "mlprof_mcp"}

# One internal header per stage, included alone by the probes (each is self-contained).
PROBES = {
    "trace": "trace/units.h",
    "import": "import/error_text.h",
    "analyze": "analyze/name_rules.h",
    "render": "render/text_table.h",
    "record": "record/clock.h",
    "sql": "sql/trace_database.h",
    "serve": "serve/host_check.h",
    "mcp": "mcp/line_reader.h",
    "cli": "cli/run_files.h",
}
# A source file whose compile command stands for its stage's flags.
PROBE_FLAGS_FROM = {
    "trace": "src/trace/trace.cpp",
    "import": "src/import/load_trace.cpp",
    "export": "src/export/native_writer.cpp",
    "record": "src/record/session.cpp",
    "analyze": "src/analyze/steps.cpp",
    "render": "src/render/text_table.cpp",
    "sql": "src/sql/trace_database.cpp",
    "serve": "src/serve/server.cpp",
    "mcp": "src/mcp/server.cpp",
    "cli": "src/cli/main.cpp",
    "python": "python/src/module.cpp",
}

# Analysis entry functions not named analyze_<catalogue row>: what the rows' compute_NAME call
# under another name, and the cross-input entries (ranks, comparisons) the stage wraps.
ENTRY_EXTRA = {
    "summarize",               # summary
    "find_bottlenecks",        # bottlenecks
    "build_flame_graph",       # flame
    "analyze_rank_summaries",  # ranks of a summarized rank set
    "compare_traces",          # compare_analyses
    "compare_many",
    "compare_summaries",
}
# Object folders (CMake's <target>.dir) of the targets that are not archives.
ENTRY_OBJECTS = {"mlprof": "cli", "mlprof_python_ext": "python"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg, flush=True)


def owner(header):
    """The stage a quoted include belongs to, None when it is no stage's (e.g. python/src's)."""
    if header.startswith("mlprof/"):
        if header in PUBLIC_HEADERS:
            return PUBLIC_HEADERS[header]
        for prefix, stage in PUBLIC_DIRS.items():
            if header.startswith(prefix):
                return stage
        return "?"  # not a public header: reported by check_public_headers or the compiler
    first = header.split("/", 1)[0]
    return first if first in ALLOWED and "/" in header else None


def sources(root, folder):
    for d, _, files in os.walk(os.path.join(root, folder)):
        for f in sorted(files):
            if f.endswith((".h", ".cpp", ".cc")):
                yield os.path.join(d, f)


def check_includes(root):
    stage_dirs = [(s, os.path.join("src", s)) for s in ALLOWED if s != "python"]
    stage_dirs.append(("python", os.path.join("python", "src")))
    count = 0
    for stage, folder in stage_dirs:
        for path in sources(root, folder):
            rel = os.path.relpath(path, root)
            for inc in INCLUDE.findall(open(path, encoding="utf-8").read()):
                count += 1
                if inc.startswith("../") or "/../" in inc:
                    fail(f"{rel}: #include \"{inc}\": no relative includes (name the stage)")
                    continue
                dep = owner(inc)
                if dep is None or dep == stage:
                    continue
                if dep == "?":
                    fail(f"{rel}: #include \"{inc}\": not a public header")
                elif dep not in ALLOWED[stage]:
                    fail(f"{rel}: #include \"{inc}\": {stage} may not use {dep} "
                         f"(allowed: {', '.join(sorted(ALLOWED[stage])) or 'nothing'})")
    print(f"includes: {count} quoted includes checked")


def check_public_headers(root):
    inc_root = os.path.join(root, "include")
    found = set()
    for path in sources(root, os.path.join("include", "mlprof")):
        rel = os.path.relpath(path, inc_root)
        found.add(rel)
        listed = rel in PUBLIC_HEADERS or any(rel.startswith(p) for p in PUBLIC_DIRS)
        if not listed:
            fail(f"include/{rel}: not in the public API list (internal headers go under src/)")
        for inc in INCLUDE.findall(open(path, encoding="utf-8").read()):
            if not inc.startswith("mlprof/"):
                fail(f"include/{rel}: #include \"{inc}\": a public header includes public "
                     "headers only")
                continue
            dep, mine = owner(inc), owner(rel)
            if dep != mine and dep not in ALLOWED.get(mine, set()):
                fail(f"include/{rel} ({mine}): #include \"{inc}\" ({dep}): against the data flow")
    for h in PUBLIC_HEADERS:
        if h not in found:
            fail(f"include/{h}: listed as public but missing")
    print(f"public headers: {len(found)}")


def read_generated(build, name):
    path = os.path.join(build, "layering", name)
    if not os.path.exists(path):
        fail(f"{path} missing (written by tests/CMakeLists.txt at generate time)")
        return {}
    table = {}
    for line in open(path, encoding="utf-8"):
        if "|" in line:
            target, items = line.rstrip("\n").split("|", 1)
            table[target] = [i for i in items.split(";") if i]
    return table


def link_target(item):
    m = re.fullmatch(r"\$<LINK_ONLY:(.*)>", item)
    return m.group(1) if m else item


def check_cmake(build):
    links = read_generated(build, "link_libraries.txt")
    for target, deps in sorted(links.items()):
        stage = TARGETS[target]
        for dep in map(link_target, deps):
            if dep in TARGETS and TARGETS[dep] != stage and TARGETS[dep] not in ALLOWED[stage]:
                fail(f"CMake: {target} ({stage}) links {dep} ({TARGETS[dep]})")
    roots = read_generated(build, "include_directories.txt")
    marker = "/stage_roots/"
    for target, dirs in sorted(roots.items()):
        stage = TARGETS[target]
        for d in dirs:
            if marker in d:
                dep = d.rsplit(marker, 1)[1].strip("/")
                if dep != stage and dep not in ALLOWED[stage]:
                    fail(f"CMake: {target} ({stage}) sees the headers of {dep}")
    # The recorder's closure.
    seen, todo = set(), ["mlprof_record"]
    while todo:
        t = todo.pop()
        for dep in map(link_target, links.get(t, [])):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    bad = sorted(seen & NOT_FOR_THE_RECORDER)
    if bad:
        fail(f"CMake: linking mlprof_record links {', '.join(bad)}")
    print(f"CMake: {len(links)} targets' edges; mlprof_record links {sorted(seen)}")


def compile_flags(build):
    db = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    by_file = {os.path.realpath(e["file"]): e for e in db}
    return by_file


def probe(entry, header, tmp):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if os.path.basename(args[0]) == "ccache":
        args = args[1:]
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-MD", "-MMD") or a == entry["file"]:
            continue
        keep.append(a)
    src = os.path.join(tmp, "probe.cpp")
    with open(src, "w") as f:
        f.write(f'#include "{header}"\n')
    run = subprocess.run(keep + ["-fsyntax-only", src], cwd=entry["directory"],
                         capture_output=True, text=True)
    return run.returncode == 0, run.stderr


def check_probes(root, build):
    flags = compile_flags(build)
    done = 0
    with tempfile.TemporaryDirectory() as tmp:
        for stage, rel in PROBE_FLAGS_FROM.items():
            entry = flags.get(os.path.realpath(os.path.join(root, rel)))
            if entry is None:
                if stage != "python":  # the module is optional (pybind11)
                    fail(f"probe: no compile command for {rel}")
                continue
            for dep, header in PROBES.items():
                ok, err = probe(entry, header, tmp)
                done += 1
                want = dep == stage or dep in ALLOWED[stage]
                if want and not ok:
                    fail(f"probe: {stage} cannot include \"{header}\" ({dep}, allowed):\n{err}")
                elif not want and ok:
                    fail(f"probe: {stage} compiles #include \"{header}\": {dep} is not "
                         "allowed, the build must refuse it")
                elif not want and "No such file" not in err:
                    fail(f"probe: {stage} including \"{header}\" failed, but not for want of "
                         f"the header:\n{err}")
    print(f"probes: {done} compiled")


def symbols(archive, undefined):
    flag = "--undefined-only" if undefined else "--defined-only"
    out = subprocess.run(["nm", "-C", flag, archive], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        if line.endswith(":") or not line.strip():
            continue  # "member.o:" headers of an archive
        parts = line.split(None, 2) if not undefined else line.split(None, 1)
        name = parts[-1]
        if "mlprof::" in name:
            names.add(name)
    return names


def check_symbols(build):
    archives = {t: p[0] for t, p in read_generated(build, "archives.txt").items() if p}
    defined = {t: symbols(p, False) for t, p in archives.items() if os.path.exists(p)}
    for target, path in sorted(archives.items()):
        if target not in defined:
            fail(f"symbols: {path} not built")
            continue
        stage = TARGETS[target]
        visible = set()
        for other, names in defined.items():
            if TARGETS[other] == stage or TARGETS[other] in ALLOWED[stage]:
                visible |= names
        missing = sorted(symbols(path, True) - visible)
        for name in missing[:10]:
            where = [t for t, names in defined.items() if name in names]
            fail(f"symbols: {target} ({stage}) uses {name}, defined in {where or 'no library'}")
    print(f"symbols: {len(defined)} libraries")


def analysis_entries(root):
    catalog = open(os.path.join(root, "include", "mlprof", "analysis_catalog.h"),
                   encoding="utf-8").read()
    rows = re.findall(r"^\s*X\((\w+), (\w+),", catalog, re.M)
    if not rows:
        fail("analysis entries: no rows read from include/mlprof/analysis_catalog.h")
    headers = "".join(open(p, encoding="utf-8").read()
                      for p in sources(root, os.path.join("include", "mlprof", "analyze")))
    entries = {f"analyze_{name}" for _, name in rows
               if re.search(rf"\banalyze_{name}\s*\(", headers)}
    for name in sorted(ENTRY_EXTRA):
        if not re.search(rf"\b{name}\s*\(", headers):
            fail(f"analysis entries: {name} (ENTRY_EXTRA) is declared in no public analyze "
                 "header: update the list")
        entries.add(name)
    return entries


def check_analysis_entries(root, build):
    entries = analysis_entries(root)
    called = re.compile(r"(?:^|[\s(])mlprof::(" + "|".join(sorted(entries)) + r")\(")
    units = [(t, TARGETS[t], p) for t, p in
             ((t, p[0]) for t, p in read_generated(build, "archives.txt").items() if p)
             if TARGETS[t] != "analyze"]
    for target, stage in ENTRY_OBJECTS.items():
        folder = os.path.join(build, "CMakeFiles", f"{target}.dir")
        for d, _, files in os.walk(folder):
            units += [(target, stage, os.path.join(d, f)) for f in sorted(files)
                      if f.endswith(".o")]
    checked = 0
    for target, stage, path in units:
        if not os.path.exists(path):
            continue
        checked += 1
        for name in sorted(symbols(path, True)):
            m = called.search(name)
            if m:
                fail(f"analysis entries: {os.path.relpath(path, build)} ({stage}) calls "
                     f"mlprof::{m.group(1)}: ask the AnalysisSet (mlprof/analysis_set.h) instead")
    print(f"analysis entries: {len(entries)} functions, {checked} archives/objects outside "
          "src/analyze")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    root, build = sys.argv[1], sys.argv[2]
    check_includes(root)
    check_public_headers(root)
    check_cmake(build)
    check_probes(root, build)
    check_symbols(build)
    check_analysis_entries(root, build)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
