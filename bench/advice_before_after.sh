#!/usr/bin/env bash
# Top bottleneck finding and saving, and the sum of all findings' savings, for every Kineto GPU
# trace under the shared traces: run with two binaries to list before/after.
#   bench/advice_before_after.sh BUILD/mlprof [TRACES_DIR]
set -u
bin=${1:?usage: $0 MLPROF [TRACES_DIR]}
dir=${2:-${MLPROF_SHARED_TRACES:-/work/shared/traces}}
find "$dir" -type f \( -name '*.json.gz' -o -name '*.pt.trace.json' \) \
  | grep -v -e pytorch-cpu -e memory-snapshot -e /reference/ | sort | while read -r f; do
  out=$("$bin" bottlenecks --json "$f" 2>/dev/null) || { echo "${f#$dir/}	(error)"; continue; }
  printf '%s\t' "${f#$dir/}"
  python3 -c '
import json,sys
d=json.loads(sys.stdin.read())
f=d.get("findings",[])
if not f: print("none"); sys.exit()
t=f[0]; s=sum(x.get("est_savings_pct",0) for x in f)
comb=d.get("combined",{}).get("saving_pct")
print("%s %.1f%% | sum %.1f%%%s" % (t["kind"], t["est_savings_pct"], s, "" if comb is None else " | combined %.1f%%" % comb))
' <<<"$out"
done
