#!/bin/bash
# Session 4's interleaved experiment (BENCHMARKS.md, "Run 6"): the shipped client against
# variants that are NOT shipped, at 100k rows, 3 rounds, each against a fresh sandbox
# process. Usage, from the repository root after `npm run build`:
#   bash bench/results/run6-variants/variants.sh /tmp/variants > exp.log
# Variants: A shipped; B a hand-written CSV encoder instead of csv-stringify
# (B-hand-encoder.patch); C = B with --max-semi-space-size=64; D csv-stringify in a
# worker thread (D-stringify-worker.patch, worker young generation 32 MB); E shipped with
# --max-semi-space-size=64.
set -euo pipefail
repo=$(pwd)
work=${1:?work dir}
here="$repo/bench/results/run6-variants"
mkdir -p "$work"
for v in B D; do
  rm -rf "$work/$v" && mkdir -p "$work/$v"
  cp -r "$repo/bin" "$repo/dist" "$repo/package.json" "$work/$v/"
  ln -s "$repo/node_modules" "$work/$v/node_modules"
done
patch -s -d "$work/B" -p0 < "$here/B-hand-encoder.patch"
patch -s -d "$work/D" -p0 < "$here/D-stringify-worker.patch"
[ -f "$work/c100k.csv" ] || node -e "import('$repo/bench/lib/gen-contacts.js').then((m) => m.writeContacts('$work/c100k.csv', 100000))"

run() { # bin, node flags...
  local bin=$1; shift
  local st; st=$(mktemp -d)
  node "$repo/bin/enrich.js" sandbox --port 0 --host 127.0.0.1 --json --job-ms 0 --rate-limit 0 --credits 100000000 > "$st/sb.json" &
  local sb=$!
  while [ ! -s "$st/sb.json" ]; do sleep 0.1; done
  local url key
  url=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8").split("\n")[0]).base_url)' "$st/sb.json")
  key=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8").split("\n")[0]).api_key)' "$st/sb.json")
  ENRICH_BASE_URL=$url ENRICH_API_KEY=$key ENRICH_STATE_DIR=$st/state ENRICH_CONFIG_DIR=$st/config WYG=32 \
    /usr/bin/time -f "wall %e s  user %U  sys %S  maxrss %M KB" node "$@" "$bin" contacts "$work/c100k.csv" -o "$st/out.csv" --quiet 2>&1 | tr '\n' ' '
  echo "sandbox cpu: $(ps -o times= -p $sb) s"
  kill $sb; wait $sb 2>/dev/null || true
  rm -rf "$st"
}
for round in 1 2 3; do
  /usr/bin/time -f "copy wall %e user %U sys %S maxrss %M" node "$repo/bench/baseline-copy.js" "$work/c100k.csv" "$work/copy.csv" 2>&1 | sed "s/^/r$round /"
  echo -n "r$round A "; run "$repo/bin/enrich.js"
  echo -n "r$round B "; run "$work/B/bin/enrich.js"
  echo -n "r$round C "; run "$work/B/bin/enrich.js" --max-semi-space-size=64
  echo -n "r$round D "; run "$work/D/bin/enrich.js"
  echo -n "r$round E "; run "$repo/bin/enrich.js" --max-semi-space-size=64
done
