# Shared by bench/porep-e2e.sh and bench/filecoin-e2e.sh (sourced, not run):
# starts cuzkd in its own session with the config WORK/cuzkd.toml, waits for
# its socket, and starts the samplers that outlive the device command: the
# daemon's RSS (VmRSS/VmHWM) to WORK/rss.log and, with nvidia-smi, GPU memory
# and utilization to WORK/gpu.log, once a second. WORK/cuzkd.pid and
# WORK/nvsmi.pid name what to stop.
# Usage: start_cuzkd BIN_DIR WORK_DIR SOCKET
start_cuzkd() {
  local bin=$1 work=$2 sock=$3 pid
  echo "== starting cuzkd"
  setsid "$bin/cuzkd" --config "$work/cuzkd.toml" >"$work/cuzkd.log" 2>&1 </dev/null &
  echo $! >"$work/cuzkd.pid"
  for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
  [[ -S $sock ]] || { echo "cuzkd did not start"; cat "$work/cuzkd.log"; return 1; }
  pid=$(cat "$work/cuzkd.pid")
  setsid bash -c "while kill -0 $pid 2>/dev/null; do
      echo \"\$(date +%s) \$(grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' ' | tr '\n' ' ')\"; sleep 1; done" \
    >"$work/rss.log" 2>&1 </dev/null &
  if command -v nvidia-smi >/dev/null; then
    setsid nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader -lms 1000 \
      >"$work/gpu.log" 2>&1 </dev/null &
    echo $! >"$work/nvsmi.pid"
  fi
}
