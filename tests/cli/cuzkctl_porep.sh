#!/usr/bin/env bash
# `cuzkctl porep` end to end on a genuine 2 KiB sector (slow: the 2 KiB
# partition is 2.69M constraints; the development setup dominates, about
# 1.5 CPU-minutes, then ~20 CPU-seconds per proof):
#   make-c1 -> setup (dev params) -> prove -> verify (valid, exit 0);
#   the proof against another sector's C1 (exit 1);
#   setup again (loads, does not regenerate);
#   verify-golden: rust-fil-proofs' 2 KiB records parse but do not verify
#   under our development key (exit 1, 0 verified, none malformed).
# Usage: cuzkctl_porep.sh CUZKCTL RECORDS_JSON
set -u
CUZKCTL=$1
RECORDS=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect_rc() {  # expect_rc WANT DESCRIPTION CMD...
  local want=$1 what=$2
  shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAIL: $what: exit $rc, want $want"; cat "$dir/err"; fail=1
  else
    echo "ok: $what"
  fi
}

expect_rc 0 "make-c1" "$CUZKCTL" porep make-c1 --out "$dir/a.json" --sector-id 5 --data-seed 1
expect_rc 0 "make-c1 (other sector)" "$CUZKCTL" porep make-c1 --out "$dir/b.json" --sector-id 6 --data-seed 2
expect_rc 0 "setup" "$CUZKCTL" porep setup --sector-size 2KiB --out-dir "$dir/p" --json
grep -q '"generated":true' "$dir/out" || { echo "FAIL: setup did not generate"; fail=1; }
grep -q 'DEVELOPMENT' "$dir/err" || { echo "FAIL: no development warning"; fail=1; }
vk=$(ls "$dir"/p/*-dev.vk)
expect_rc 0 "prove" "$CUZKCTL" porep prove --c1 "$dir/a.json" --param-dir "$dir/p" --proof "$dir/a.proof" --json
[[ $(stat -c %s "$dir/a.proof") -eq 192 ]] || { echo "FAIL: proof is not 192 bytes"; fail=1; }
expect_rc 0 "verify" "$CUZKCTL" porep verify --c1 "$dir/a.json" --proof "$dir/a.proof" --vk "$vk"
expect_rc 1 "verify against another sector" "$CUZKCTL" porep verify --c1 "$dir/b.json" --proof "$dir/a.proof" --vk "$vk"
expect_rc 0 "setup again" "$CUZKCTL" porep setup --sector-size 2KiB --out-dir "$dir/p" --json
grep -q '"generated":false' "$dir/out" || { echo "FAIL: setup regenerated"; fail=1; }
expect_rc 1 "verify-golden under the dev vk" "$CUZKCTL" porep verify-golden --vk "$vk" --records "$RECORDS" --json
grep -q '"verified":0' "$dir/out" && grep -q '"malformed":0' "$dir/out" && grep -q '"invalid":93' "$dir/out" ||
  { echo "FAIL: verify-golden: $(cat "$dir/out")"; fail=1; }
exit $fail
