#!/usr/bin/env bash
# Cold .params load: the disk's sequential read bandwidth (dd, fio) against our
# loader (bench_load), in one run, on one synthetic file.
#
# Cold means: O_DIRECT reads (no page cache) for dd and the loader, and for
# the buffered runs the file's own pages evicted first (fdatasync +
# POSIX_FADV_DONTNEED via `dd iflag=nocache count=0`, checked with fincore).
# The machine-wide drop_caches is not used: the machine is shared.
#
# Usage: bench/load-bench.sh [SIZE_MIB=4096] [RUNS=3]
#   env BENCH_LOAD=path/to/bench_load (default build/io/bench/bench_load)
#       BENCH_DIR=dir for the file      (default build/io/bench-data)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE_MIB=${1:-4096}
RUNS=${2:-3}
B=${BENCH_LOAD:-$ROOT/build/io/bench/bench_load}
DIR=${BENCH_DIR:-$ROOT/build/io/bench-data}
F=$DIR/load-bench.params
mkdir -p "$DIR"
trap 'rm -f "$F"' EXIT

df -h "$DIR"
avail_mib=$(df -Pm "$DIR" | awk 'NR==2 {print $4}')
if (( avail_mib < SIZE_MIB + 2048 )); then
  echo "not enough space in $DIR: ${avail_mib} MiB free, need $((SIZE_MIB + 2048))" >&2
  exit 1
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

"$B" gen "$F" "$SIZE_MIB"
evict() { dd if="$F" iflag=nocache count=0 status=none; fincore -n -o RES "$F" | awk '{print "  page cache now holds " $1 " of the file"}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# dd prints "... copied, 1.23 s, 1.1 GB/s"; return MiB/s from bytes and seconds.
dd_mibs() { dd if="$F" of=/dev/null bs=16M "$@" 2>&1 | awk '/copied/ {printf "%.1f\n", $1 / $(NF-3) / 1048576}'; }
field() { tr ' ' '\n' | awk -F= -v k="$1" '$1 == k {print $2}'; }

# The virtual disk is shared and its rate drifts by 2x within a minute, so
# every run goes round all modes once (dd and the loader side by side) and
# the medians are compared.
MODES=(dd_direct dd_buffered scan_uring_direct scan_pool_direct scan_uring_buffered decode_uring_direct)
# fio (apt-get install fio) with the loader's access pattern (8 MiB reads,
# 16 in flight, O_DIRECT) gives the disk's best sequential rate; dd is one
# read at a time.
HAVE_FIO=0
if command -v fio >/dev/null; then HAVE_FIO=1; MODES=(fio_direct_qd16 "${MODES[@]}"); fi
fio_mibs() {
  fio --name=seq --filename="$F" --rw=read --bs=8M --iodepth=16 --ioengine=io_uring --direct=1 --readonly \
      --output-format=terse --terse-version=3 | awk -F';' '{printf "%.1f\n", $7 / 1024}'
}
cmd() {
  case $1 in
    fio_direct_qd16) fio_mibs ;;
    dd_direct) dd_mibs iflag=direct ;;
    dd_buffered) dd_mibs ;;
    scan_uring_direct) "$B" load "$F" --mode scan --backend uring --direct auto ;;
    scan_pool_direct) "$B" load "$F" --mode scan --backend pool --direct auto ;;
    scan_uring_buffered) "$B" load "$F" --mode scan --backend uring --direct off ;;
    decode_uring_direct) "$B" load "$F" --mode decode --backend uring --direct auto ;;
  esac
}
declare -A V CPU
for ((i = 0; i < RUNS; i++)); do
  echo "run $((i + 1)) of $RUNS"
  for m in "${MODES[@]}"; do
    [[ $m == *buffered* ]] && evict
    out=$(cmd "$m")
    if [[ $out == *MiB_s=* ]]; then
      echo "  $m: $out"
      V[$m]+="$(field MiB_s <<<"$out") "
      CPU[$m]+="$(field MiB_per_cpu_s <<<"$out") "
    else
      echo "  $m: $out MiB/s"
      V[$m]+="$out "
    fi
  done
done
med() { tr ' ' '\n' | grep . | median; }

echo
echo "medians of $RUNS runs, MiB/s, file $SIZE_MIB MiB"
for m in "${MODES[@]}"; do printf '  %-22s %8.1f\n' "$m" "$(med <<<"${V[$m]}")"; done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f%%", 100 * a / b}'; }
dd_d=$(med <<<"${V[dd_direct]}")
dd_b=$(med <<<"${V[dd_buffered]}")
echo "read pipeline (scan, io_uring, O_DIRECT) / dd O_DIRECT: $(ratio "$(med <<<"${V[scan_uring_direct]}")" "$dd_d")"
echo "read pipeline (scan, pread pool, O_DIRECT) / dd O_DIRECT: $(ratio "$(med <<<"${V[scan_pool_direct]}")" "$dd_d")"
echo "read pipeline (scan, io_uring, buffered) / dd buffered: $(ratio "$(med <<<"${V[scan_uring_buffered]}")" "$dd_b")"
echo "full load (decode, io_uring, O_DIRECT) / dd O_DIRECT:   $(ratio "$(med <<<"${V[decode_uring_direct]}")" "$dd_d")"
if ((HAVE_FIO)); then
  fio_d=$(med <<<"${V[fio_direct_qd16]}")
  echo "read pipeline (scan, io_uring, O_DIRECT) / fio O_DIRECT qd16: $(ratio "$(med <<<"${V[scan_uring_direct]}")" "$fio_d")"
  echo "full load (decode, io_uring, O_DIRECT) / fio O_DIRECT qd16:   $(ratio "$(med <<<"${V[decode_uring_direct]}")" "$fio_d")"
fi
dec_cpu=$(med <<<"${CPU[decode_uring_direct]}")
echo "decode cost: $dec_cpu MiB per CPU-second (curve checks, no subgroup checks);"
echo "  decode-bound rate with $(nproc) dedicated cores: $(awk -v c="$dec_cpu" -v n="$(nproc)" 'BEGIN {printf "%.0f", c * n}') MiB/s;"
echo "  cores needed to decode at dd O_DIRECT speed: $(awk -v c="$dec_cpu" -v d="$dd_d" 'BEGIN {printf "%.1f", d / c}')"
