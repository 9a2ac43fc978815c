#!/usr/bin/env bash
# gpu-sandbox-check.sh: on a GPU machine (not in CI), checks that an engine served in
# speedmatrix's sandbox (engine.sandbox: namespaces, docs/security.md#the-engine-sandbox) sees
# the GPUs as vLLM would: nvidia-smi lists them, and one CUDA allocation (1 MiB, through
# libcudart, else the driver's libcuda) succeeds, from inside the served engine's sandbox.
# The served engine is then `speedmatrix sim`, measured for one short cell, so that the
# whole path (sandbox, serve, measure, stop) runs. Exit 0: all passed.
#
#   scripts/gpu-sandbox-check.sh [path/to/speedmatrix]   (default: go build ./cmd/speedmatrix)
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  bin="$work/speedmatrix"
  CGO_ENABLED=0 go build -o "$bin" ./cmd/speedmatrix
fi
bin=$(realpath "$bin")

# The driver creates /dev/nvidia-uvm and friends on first use; the sandbox binds the nodes
# that exist when it is made, so make them exist (as the runner does before a job).
nvidia-smi -L

cat > "$work/gpu-probe.py" <<'PY'
import ctypes, ctypes.util, sys

def cudart():
    names = [ctypes.util.find_library("cudart"), "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    return None

rt = cudart()
ptr = ctypes.c_void_p()
if rt is not None:
    n = ctypes.c_int()
    rc = rt.cudaGetDeviceCount(ctypes.byref(n))
    if rc != 0 or n.value < 1:
        sys.exit(f"cudaGetDeviceCount: error {rc}, {n.value} devices")
    rc = rt.cudaMalloc(ctypes.byref(ptr), 1 << 20)
    if rc != 0:
        sys.exit(f"cudaMalloc: error {rc}")
    rt.cudaFree(ptr)
    print(f"gpu-probe: cudaMalloc 1 MiB ok on {n.value} device(s) (libcudart)")
    sys.exit(0)

cu = ctypes.CDLL("libcuda.so.1")  # the driver API: always there with the driver
def check(what, rc):
    if rc != 0:
        sys.exit(f"{what}: CUresult {rc}")
check("cuInit", cu.cuInit(0))
n = ctypes.c_int()
check("cuDeviceGetCount", cu.cuDeviceGetCount(ctypes.byref(n)))
dev = ctypes.c_int()
check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
ctx = ctypes.c_void_p()
check("cuCtxCreate", cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev))
dptr = ctypes.c_uint64()
check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(1 << 20)))
check("cuMemFree", cu.cuMemFree_v2(dptr))
cu.cuCtxDestroy_v2(ctx)
print(f"gpu-probe: cuMemAlloc 1 MiB ok on {n.value} device(s) (libcuda)")
PY

# The probe lies in the engine's checkout, as a repository's launch script would; build none
# serves from it. Outside the checkout nothing of $work is visible to the engine.
src="$work/engine"
mkdir -p "$src"
cp "$work/gpu-probe.py" "$src/"
cat > "$src/serve.sh" <<SH
#!/usr/bin/env bash
set -e
echo "sandbox-check: uid \$(id -u), pid \$\$, processes visible: \$(ls -d /proc/[0-9]* | wc -l)"
nvidia-smi -L | sed 's/^/sandbox-check: nvidia-smi: /'
python3 ./gpu-probe.py
echo "sandbox-check: HOME \$HOME holds: \$(ls -A "\$HOME" | wc -l) entries"
exec "$bin" sim --listen "127.0.0.1:\$1" --sim-speedup 20
SH
chmod +x "$src/serve.sh"
cat > "$work/speedmatrix.yaml" <<YAML
cells: [decode/1K/1]
duration: 1s
warmup: 0
quiet: true
engine:
  name: sandbox-check
  source: $src
  build: none
  sandbox: namespaces
  serve:
    command: [./serve.sh, "\${PORT}"]
    port: 0
    ready_timeout: 120s
    stop_grace: 10s
YAML

out="$work/results/r.json"
mkdir -p "$work/results"
"$bin" run --config "$work/speedmatrix.yaml" -o "$out"
log="$out.server.log"
echo "--- the served engine's log ---"
grep '^sandbox-check:\|^gpu-probe:' "$log" || true
grep -q '^sandbox-check: nvidia-smi: GPU 0' "$log" || { echo "FAIL: nvidia-smi saw no GPU inside the sandbox" >&2; exit 1; }
grep -q '^gpu-probe: .*Alloc 1 MiB ok' "$log" || { echo "FAIL: no CUDA allocation inside the sandbox (see $log)" >&2; exit 1; }
procs=$(sed -n 's/^sandbox-check: .*processes visible: \([0-9]*\)$/\1/p' "$log")
if [ "${procs:-99}" -gt 10 ]; then
  echo "FAIL: the engine saw $procs processes: not in a PID namespace of its own" >&2
  exit 1
fi
echo "PASS: nvidia-smi and a CUDA allocation inside the sandbox; $procs processes visible to the engine"
