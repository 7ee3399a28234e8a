"""The analysis catalogue (include/mlprof/analysis_catalog.h) is the one declaration of the
analyses: read here from the header's rows (independently of mlprof), then checked against what
mlprof does and what the web front end reads:
  - `mlprof analyze --json` holds source, format, then exactly the rows with an analyze_json
    position, in that order; its text has the sections of the rows with an analyze_text
    position, titled and ordered as the rows say (a CPU trace leaves out those it lacks);
  - every analysis the report shows (report = true) is read by the web front end (web/src), and
    the web reads no analysis that is not in the catalogue (besides compare); every tab in TABS
    has its RENDER function and every RENDER function its tab.
Usage: test_analysis_catalog.py MLPROF DATA."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def catalogue():
    text = open(os.path.join(ROOT, "include/mlprof/analysis_catalog.h")).read()
    body = text[text.index("#define MLPROF_ANALYSES(X)"):].replace("\\\n", " ")
    body = body[:body.index("MLPROF_EXTRA_ANALYSES(X)")]
    body = re.sub(r"/\*.*?\*/", "", body)
    rows = []
    for m in re.finditer(r"\bX\((.*?)\)\s*(?=X\(|$)", body, re.S):
        # needs is parenthesized: take it out before splitting on commas
        args = m.group(1)
        needs = re.search(r"\(([^()]*)\)", args)
        head, tail = args[:needs.start()], args[needs.end():]
        h = [a.strip() for a in head.split(",") if a.strip()]
        t = [a.strip() for a in tail.split(",") if a.strip()]
        rows.append({"id": h[0], "name": h[1], "requires": t[0], "report": t[1] == "true",
                     "analyze_json": int(t[2]), "analyze_text": int(t[3]),
                     "title": t[4].strip('"'), "csv": t[5].strip('"'),
                     "schema": int(t[6])})
    return rows


rows = catalogue()
check(len(rows) >= 17, f"catalogue rows read from the header ({len(rows)})")
names = [r["name"] for r in rows]

# `mlprof analyze --json` keys: source, format, then the analyze_json rows in order.
trace = os.path.join(DATA, "a_mlp_b32_w64.kineto.json.gz")
doc = json.loads(subprocess.run([MLPROF, "analyze", trace, "--json"], check=True,
                                capture_output=True, text=True).stdout)
want = ["schema", "source", "format"] + [r["name"] for r in sorted(
    (r for r in rows if r["analyze_json"]), key=lambda r: r["analyze_json"])]
check(list(doc) == want, f"analyze --json keys {list(doc)} == catalogue order {want}")
# Each row's JSON is stamped with its schema (the row's `schema` major) and has a schema file.
for r in rows:
    if r["analyze_json"]:
        check(doc[r["name"]]["schema"] == f"mlprof.{r['name']}/{r['schema']}",
              f"analyze.{r['name']} schema {doc[r['name']].get('schema')}")
    check(os.path.exists(os.path.join(ROOT, "schemas", f"{r['name']}.schema.json")),
          f"schemas/{r['name']}.schema.json for the catalogue row {r['name']}")

# The text: sections titled and ordered by analyze_text, those unavailable left out.
text = subprocess.run([MLPROF, "analyze", trace], check=True, capture_output=True,
                      text=True).stdout
titles = re.findall(r"^== (.*?) =+$", text, re.M)
want = [r["title"] for r in sorted((r for r in rows if r["analyze_text"]),
                                   key=lambda r: r["analyze_text"])
        if "unavailable" not in doc[r["name"]]]
check(titles == want, f"analyze text sections {titles} == catalogue {want}")

# The web front end.
web = os.path.join(ROOT, "web/src")
js = {f: open(os.path.join(web, f)).read() for f in os.listdir(web) if f.endswith(".js")}
read = set()
for src in js.values():
    read |= set(re.findall(r"\bget\('([a-z_]+)'\)", src))
    for group in re.findall(r"\[((?:\s*'[a-z_]+',?)+)\]\.map\(\(n\) => src\.get\(n\)\)", src):
        read |= set(re.findall(r"'([a-z_]+)'", group))
report = {r["name"] for r in rows if r["report"]}
check(report <= read, f"every report analysis is read by web/src (missing: {report - read})")
check(read <= set(names) | {"compare"},
      f"web/src reads only catalogue analyses (unknown: {read - set(names) - {'compare'}})")
main = js["main.js"]
tabs = re.findall(r"\['([a-z_]+)', '[^']*'\]", main[main.index("const TABS"):main.index("];")])
render = main[main.index("const RENDER = {"):]
render = render[:render.index("}")]
keys = [k.split(":")[0].strip() for k in render[len("const RENDER = {"):].split(",")]
check(sorted(tabs) == sorted(keys), f"TABS {tabs} and RENDER {keys} name the same tabs")

finish()
