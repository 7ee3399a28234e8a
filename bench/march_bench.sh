#!/usr/bin/env bash
# Two builds of mlprof against each other, interleaved in the same run (the machines here are
# shared and noisy: compare ratios, not absolute times). Made to choose the default -march
# (docs/install.md, "Which -march"): a portable x86-64-v2 build against an x86-64-v3 one on the
# README's benchmark commands: `summary` of the largest trace as plain JSON and gzip (the import
# benchmark), `analyze --json` of the four traces of the end-to-end benchmark.
#   usage: bench/march_bench.sh MLPROF_A MLPROF_B   (ROUNDS=5; prints B's time / A's time)
# Per command: the best wall time and the best CPU time (user + sys) of each binary over ROUNDS
# rounds; each round runs A and B back to back, the order swapped every round.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2
ROUNDS=${ROUNDS:-5}
S=${MLPROF_SHARED_DIR:-../shared}/traces
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
big=$S/pytorch-cpu/transformer_big.json.gz
[ -e "$big" ] || { echo "march_bench: $big not found (MLPROF_SHARED_DIR)"; exit 1; }
zcat "$big" > "$tmp/big.json"
cases=("summary $tmp/big.json --top 1" "summary $big --top 1")
names=("summary transformer_big.json" "summary transformer_big.json.gz")
for t in pytorch-cpu-kineto-schema/d_transformer_50steps.kineto.json.gz \
         kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz \
         kineto-gpu/df_index_resolver/df_index_resolver.json.gz; do
  [ -e "$S/$t" ] || continue
  cases+=("analyze $S/$t --json"); names+=("analyze $(basename "$t" .json.gz)")
done
cases+=("analyze $big --json"); names+=("analyze transformer_big")

: > "$tmp/times"
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order="A B"; else order="B A"; fi
  for i in "${!cases[@]}"; do
    for who in $order; do
      bin=$A; [ "$who" = B ] && bin=$B
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$bin" ${cases[$i]} > /dev/null 2>&1
      echo "$i $who $(cat "$tmp/t")" >> "$tmp/times"
    done
  done
done
python3 - "$tmp/times" "${names[@]}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
names = sys.argv[2:]
best = {}
for i, who, w, u, s in rows:
    k = (int(i), who)
    w, c = float(w), float(u) + float(s)
    bw, bc = best.get(k, (1e9, 1e9))
    best[k] = (min(bw, w), min(bc, c))
print(f"{'command':36} {'A wall':>7} {'B wall':>7} {'B/A':>6} {'A cpu':>7} {'B cpu':>7} {'B/A':>6}")
rw, rc = [], []
for i, n in enumerate(names):
    (aw, ac), (bw, bc) = best[(i, 'A')], best[(i, 'B')]
    rw.append(bw / aw); rc.append(bc / ac)
    print(f"{n:36} {aw:7.3f} {bw:7.3f} {bw / aw:6.3f} {ac:7.3f} {bc:7.3f} {bc / ac:6.3f}")
g = lambda xs: __import__('math').prod(xs) ** (1 / len(xs))
print(f"{'geometric mean':36} {'':7} {'':7} {g(rw):6.3f} {'':7} {'':7} {g(rc):6.3f}")
PY
