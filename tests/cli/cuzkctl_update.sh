#!/usr/bin/env bash
# `cuzkctl update gen|check` and `circuit info update-*`:
#   - a genuine 2 KiB update of a natively sealed sector and a sparse 32 GiB
#     one check (exit 0), the 2 KiB one also as a satisfied circuit;
#   - a truncated partition file is malformed (exit 2), a partition file of
#     another update is invalid (exit 1);
#   - update-2k / update-poseidon-1k shapes: 1,705,039 / 32,164 constraints,
#     5 inputs (rfp storage-proofs-update tests/circuit.rs, circuit_poseidon.rs).
# Usage: cuzkctl_update.sh CUZKCTL
set -u
CUZKCTL=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect() {  # expect RC DESCRIPTION CMD...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc != "$want" ]]; then
    echo "FAIL: $what exited $rc, want $want"; cat "$tmp/err"; fail=1
  else
    echo "ok: $what ($rc)"
  fi
}

expect 0 "gen sealed 2KiB" "$CUZKCTL" update gen --sector-size 2KiB --seed 3 --sealed --out "$tmp/a"
expect 0 "check 2KiB --circuit" "$CUZKCTL" update check --dir "$tmp/a" --circuit
expect 0 "gen sparse 32GiB" "$CUZKCTL" update gen --sector-size 32GiB --seed 4 --out "$tmp/g"
expect 0 "check 32GiB" "$CUZKCTL" update check --dir "$tmp/g"
[[ $(ls "$tmp/g"/partition-*.bin | wc -l) == 16 ]] || { echo "FAIL: 32GiB partitions"; fail=1; }

cp -r "$tmp/a" "$tmp/t"
truncate -s -1 "$tmp/t/partition-0.bin"
expect 2 "truncated partition" "$CUZKCTL" update check --dir "$tmp/t"
grep -q "truncated: partition 0, challenge 9" "$tmp/err" || { echo "FAIL: error text"; cat "$tmp/err"; fail=1; }

expect 0 "gen another 2KiB" "$CUZKCTL" update gen --sector-size 2KiB --seed 5 --out "$tmp/b"
cp "$tmp/b/partition-0.bin" "$tmp/a/partition-0.bin"
expect 1 "foreign partition" "$CUZKCTL" update check --dir "$tmp/a"

for c in "update-2k 1705039" "update-poseidon-1k 32164"; do
  set -- $c
  out=$("$CUZKCTL" circuit info "$1" --json)
  grep -q "\"constraints\": $2," <<<"$out" || { echo "FAIL: $1 constraints"; echo "$out"; fail=1; }
  grep -q "\"inputs\": 5," <<<"$out" || { echo "FAIL: $1 inputs"; fail=1; }
done
exit $fail
