#!/usr/bin/env bash
# demo-under-load.sh runs the README's first command, `speedmatrix demo`, again and again while
# busy loops keep the cores occupied, and counts how often it gives the README's verdict.
# It is not a test of `go test` nor of CI: it takes minutes and depends on the machine.
#
#   scripts/demo-under-load.sh [RUNS] [BUSY_LOOPS]      (default 20 runs, 2 busy loops)
#
# The README's verdict is the default demo's: `demo --exit-code` exits 3 (a regression), the
# check's title starts "Blocked:", and every cell compare found slower is a decode cell at 8 or
# more requests (the injected decode=1.3@batch>=8), none at 1 request and no prefill cell. Any
# other end (another verdict, "Incomplete", an error such as a machine that could not keep up
# even at the lowest speedup) counts against it. Each run's line says its speedup (the demo
# lowers it on a machine that cannot keep up), its wall time, the slower cells and the load.
set -euo pipefail

runs=${1:-20}
loops=${2:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/demo-under-load.XXXXXX")
bin="$work/speedmatrix"
(cd "$root" && go build -o "$bin" ./cmd/speedmatrix)

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$loops"); do
	yes >/dev/null &
	pids+=($!)
done
echo "demo-under-load: $runs runs of 'speedmatrix demo' with $loops busy loops on $(nproc) cores; files in $work"

good=0
for i in $(seq "$runs"); do
	dir="$work/run$i"
	start=$(date +%s.%N)
	set +e
	"$bin" demo --quiet --exit-code --dir "$dir" >"$work/run$i.out" 2>"$work/run$i.err"
	rc=$?
	set -e
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	load=$(cut -d' ' -f1 /proc/loadavg)
	verdict=$(python3 - "$dir" "$rc" <<'EOF'
import json, os, re, sys
d, rc = sys.argv[1], int(sys.argv[2])
try:
    c = json.load(open(os.path.join(d, "comparison.json")))
    check = open(os.path.join(d, "check.md")).read()
    head = json.load(open(os.path.join(d, "head.json")))
except OSError:
    print("no\tno comparison (exit %d)" % rc)
    sys.exit()
title = re.search(r"\*\*Title:\*\* (.*)", check).group(1)
slower = [x for x in c["cells"] if x["verdict"] == "regression"]
ok = (rc == 3 and c["verdict"] == "regression" and title.startswith("Blocked:") and slower
      and all(x["phase"] == "decode" and x.get("concurrency", 0) >= 8 for x in slower))
scale = ((head.get("run") or {}).get("settings") or {}).get("simulator", {}).get("speedup")
names = ",".join(x["cell"] for x in slower) or "-"
print("%s\t%s× · exit %d · %s · slower %s" % ("yes" if ok else "no", scale, rc, title[:70], names))
EOF
)
	ok=${verdict%%$'\t'*}
	if [ "$ok" = yes ]; then good=$((good + 1)); fi
	if [ ! -f "$dir/comparison.json" ]; then verdict="no	$(tail -n1 "$work/run$i.err" | cut -c1-200)"; fi
	printf 'run %2d: %-3s %6.1f s  load %s  %s\n' "$i" "$ok" "$secs" "$load" "${verdict#*$'\t'}"
done
echo "demo-under-load: the README's verdict $good times of $runs"
