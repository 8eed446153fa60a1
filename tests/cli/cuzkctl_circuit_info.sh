#!/usr/bin/env bash
# `cuzkctl circuit info NAME --json` on small built-in circuits, checked
# against counts asserted in external sources:
#   por-8 / por-8-8-2: 1,063 / 1,907 constraints, 3 inputs (rfp storage-proofs-core tests/por_circuit.rs)
#   poseidon-2 / poseidon-11: 311 / 598 (rfp stacked/circuit/hash.rs)
#   insertion-8: 22 + 3 index-bit allocations (rfp gadgets/insertion.rs)
#   sha256-hash2-leaf: 45,387 (rfp storage-proofs-core util.rs)
#   sha256-512: 44,874 + 512 message-bit allocations (bellpepper sha256.rs)
#   stacked-base-8: 1,199,620 constraints, 22 inputs (rfp tests/stacked_circuit.rs)
# Usage: cuzkctl_circuit_info.sh CUZKCTL
set -u
CUZKCTL=$1
fail=0

# field NAME JSON -> the integer (or string) value of "NAME" in pretty JSON.
field() { grep -E "^  \"$1\": " <<<"$2" | sed -E 's/^  "[a-z_]+": "?([^",]*)"?,?$/\1/'; }

check() {  # check NAME KEY EXPECTED
  local out got
  out=$("$CUZKCTL" circuit info "$1" --json) || { echo "FAIL: $1 exited $?"; fail=1; return; }
  got=$(field "$2" "$out")
  if [[ "$got" != "$3" ]]; then echo "FAIL: $1 $2 = '$got', want $3"; fail=1; else echo "ok: $1 $2 = $3"; fi
}

check por-8 constraints 1063
check por-8 inputs 3
check por-8 constraints_with_input_constraints 1066
check por-8-8-2 constraints 1907
check poseidon-2 constraints 311
check poseidon-11 constraints 598
check insertion-8 constraints 25
check sha256-hash2-leaf constraints 45387
check sha256-512 constraints 45386
check stacked-base-8 constraints 1199620
check stacked-base-8 inputs 22
check stacked-base-8 density_b_input 1

# Every key is present; the fingerprint is a blake2s-256 hex digest.
out=$("$CUZKCTL" circuit info poseidon-2 --json)
for k in constraints constraints_with_input_constraints inputs aux nnz_a nnz_b nnz_c \
         density_a_aux density_b_input density_b_aux fingerprint; do
  grep -q "^  \"$k\": " <<<"$out" || { echo "FAIL: key $k missing"; fail=1; }
done
[[ $(field fingerprint "$out") =~ ^[0-9a-f]{64}$ ]] || { echo "FAIL: fingerprint not hex"; fail=1; }
# Different circuits, different fingerprints.
[[ $(field fingerprint "$out") != $(field fingerprint "$("$CUZKCTL" circuit info poseidon-11 --json)") ]] \
  || { echo "FAIL: poseidon-2 and poseidon-11 share a fingerprint"; fail=1; }

# An unknown name is malformed input: exit status 2.
"$CUZKCTL" circuit info no-such-circuit --json >/dev/null 2>&1
rc=$?
[[ $rc == 2 ]] || { echo "FAIL: unknown name exited $rc, want 2"; fail=1; }

exit $fail
