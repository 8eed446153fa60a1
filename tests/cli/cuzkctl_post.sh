#!/usr/bin/env bash
# `cuzkctl circuit info` on the FallbackPoSt names against the counts
# rust-fil-proofs asserts (storage-proofs-post tests/fallback_circuit.rs,
# filecoin-proofs constants.rs) or that follow from them (FILECOIN.md §4),
# then `cuzkctl post gen` / `post check` on genuine 2 KiB and sparse 32 GiB
# vanilla proofs, valid (exit 0) and tampered (exit 1 invalid, 2 malformed).
# Usage: cuzkctl_post.sh CUZKCTL
set -u
CUZKCTL=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

field() { grep -E "^  \"$1\": " <<<"$2" | sed -E 's/^  "[a-z_]+": "?([^",]*)"?,?$/\1/'; }
shape() {  # shape NAME CONSTRAINTS INPUTS
  local out
  out=$("$CUZKCTL" circuit info "$1" --json) || { echo "FAIL: $1 exited $?"; fail=1; return; }
  local c i
  c=$(field constraints "$out")
  i=$(field inputs "$out")
  if [[ "$c" != "$2" || "$i" != "$3" ]]; then
    echo "FAIL: $1: $c constraints / $i inputs, want $2 / $3"; fail=1
  else
    echo "ok: $1 $2 / $3"
  fi
}
shape post-base-8 16869 19
shape post-sub-8-4 22674 19
shape post-top-8-4-2 27384 19
shape post-base-8-2 11246 13
shape post-blank-32g 266665 56
shape window-post-2k 21866 23
shape winning-post-2k 90750 133
shape winning-post-32g 370590 133
shape window-post-32g 125279217 25840
shape window-post-64g 129887900 25301

# Change detector (as circuit_fingerprints.sh): R1CS fingerprints recorded
# on 2026-12-04 when every count above matched rust-fil-proofs. A change
# means constraint or variable order or a coefficient changed, which would
# break compatibility with the published PoSt parameters.
while read -r name fingerprint; do
  got=$(field fingerprint "$("$CUZKCTL" circuit info "$name" --json)")
  [[ "$got" == "$fingerprint" ]] && echo "ok: $name fingerprint" || { echo "FAIL: $name fingerprint $got"; fail=1; }
done <<'TABLE'
post-base-8 aabc663ba989f3613ad4d3f9a623ea354ad306dc951d848e57e4bdcd9096675c
post-top-8-4-2 1eb841edd9d456958e19edc409325f3851824527ca2153594ff6e3eda5a64800
window-post-2k 14279e1c38053fa35eab6f56dbf1c5ef337b533f2c42fd3d7b4e7a116796b331
winning-post-2k ce8079a9875ac8fafc46902e0e2368fa997e7f2ffb2065d2666ef92bc3ca2f67
winning-post-32g f65cddbca7106bac1a8b92148badb4d96f488d56c233bd59b0d0a6919445cf4f
TABLE

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
rand_of() { grep '"randomness"' "$1/post.json" | sed -E 's/.*: "([0-9a-f]+)".*/\1/'; }

# WindowPoSt 2 KiB: two natively sealed sectors.
expect_rc 0 "gen window 2KiB" "$CUZKCTL" post gen --kind window --sector-size 2KiB --sectors 2 --seed 3 --out "$dir/w"
r=$(rand_of "$dir/w")
check() { "$CUZKCTL" post check --sector-size 2KiB --prover-id 1000 "$@"; }
expect_rc 0 "check window 2KiB --circuit" check --kind window --randomness "$r" --circuit "$dir"/w/vanilla-*.bin
grep -q "valid" "$dir/out" || { echo "FAIL: no verdict"; fail=1; }
other=$(printf '%064x' 5)
expect_rc 1 "wrong randomness" check --kind window --randomness "$other" --circuit "$dir"/w/vanilla-*.bin
expect_rc 2 "truncated" bash -c "head -c 1000 '$dir/w/vanilla-1.bin' > '$dir/t.bin' && $CUZKCTL post check --kind window --sector-size 2KiB --prover-id 1000 --randomness $r '$dir/t.bin'"
expect_rc 2 "a window proof as winning" check --kind winning --randomness "$r" "$dir/w/vanilla-1.bin"
expect_rc 2 "duplicate sector" check --kind window --randomness "$r" "$dir/w/vanilla-1.bin" "$dir/w/vanilla-1.bin"
# Byte 40..47 is the inclusion-proof count; 48..51 the first proof's enum
# tag; byte 60 lies in its root: flip it (still canonical) -> root mismatch.
cp "$dir/w/vanilla-1.bin" "$dir/root.bin"
printf '\x01' | dd of="$dir/root.bin" bs=1 seek=60 conv=notrunc status=none
expect_rc 1 "tampered root" check --kind window --randomness "$r" --circuit "$dir/root.bin" "$dir/w/vanilla-2.bin"
# comm_r (bytes 8..39): flip its lowest byte -> comm_r mismatch; the circuit
# names the failing constraint.
cp "$dir/w/vanilla-2.bin" "$dir/commr.bin"
printf '\x00' | dd of="$dir/commr.bin" bs=1 seek=8 conv=notrunc status=none
expect_rc 1 "tampered comm_r" check --kind window --randomness "$r" --circuit "$dir/w/vanilla-1.bin" "$dir/commr.bin"
grep -q "enforce_comm_c_comm_r_last_hash_comm_r" "$dir/err" || { echo "FAIL: constraint not named: $(cat "$dir/err")"; fail=1; }

# WinningPoSt 2 KiB.
expect_rc 0 "gen winning 2KiB" "$CUZKCTL" post gen --kind winning --sector-size 2KiB --seed 4 --out "$dir/n"
expect_rc 0 "check winning 2KiB --circuit" check --kind winning --randomness "$(rand_of "$dir/n")" --circuit "$dir/n/vanilla-1.bin"

# WindowPoSt 32 GiB, sparse sectors, partition 1 under V1 (ApiVersion
# 1.0.0: the partition index enters the challenge indexes).
v1=StackedDrgWindow32GiBV1
expect_rc 0 "gen window 32GiB V1 partition 1" "$CUZKCTL" post gen --kind window --sector-size 32GiB --sectors 3 \
  --seed 5 --partition 1 --registered-proof $v1 --out "$dir/b"
r=$(rand_of "$dir/b")
big() { "$CUZKCTL" post check --kind window --sector-size 32GiB --prover-id 1000 --randomness "$r" "$@"; }
expect_rc 0 "check window 32GiB --circuit" big --registered-proof $v1 --partition 1 --circuit "$dir"/b/vanilla-*.bin
expect_rc 1 "another partition index under V1" big --registered-proof $v1 --partition 0 "$dir"/b/vanilla-*.bin
expect_rc 1 "the same proofs under V1_2" big --partition 1 "$dir"/b/vanilla-*.bin
exit $fail
