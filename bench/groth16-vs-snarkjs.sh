#!/usr/bin/env bash
# CPU Groth16 proving: cuzk against snarkjs on the same circuit, zkey and
# machine, in one run. The circuit is the ORACLES.md chain with 65533
# constraints (+2 public +1 = a 2^16 domain). The zkey comes from our own
# development setup (cuzkctl setup --zkey): a snarkjs ceremony at power 16
# takes ~45 minutes here; snarkjs proves and verifies with it unchanged.
# Usage: bench/groth16-vs-snarkjs.sh [N=65533] [runs=3]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-65533}
RUNS=${2:-3}
C=$ROOT/build/release/tools/cuzkctl
NM=$ROOT/tests/oracle/node_modules
S="node $NM/snarkjs/build/cli.cjs"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat > "$W/chain.circom" <<CIRCOM
pragma circom 2.0.0;
template Chain(N) { signal input x; signal input k; signal output y; signal s[N+1]; s[0] <== x;
  for (var i = 0; i < N; i++) { s[i+1] <== s[i]*s[i] + k; }  y <== s[N]; }
component main {public [k]} = Chain($N);
CIRCOM
echo '{"x":"3","k":"7"}' > "$W/input.json"
cd "$W"
node "$NM/circom2/cli.js" chain.circom --r1cs --wasm --prime bls12381 -o . >/dev/null
$S wtns calculate chain_js/chain.wasm input.json w.wtns >/dev/null
$C setup --r1cs chain.r1cs --zkey chain.zkey --params chain.params --vk chain.vk >/dev/null 2>&1
$S zkey export verificationkey chain.zkey vk.json >/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() {  # prints seconds of one run
  local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l
}
snark=(); ours_z=(); ours_p=()
for _ in $(seq "$RUNS"); do
  snark+=("$(timeit $S groth16 prove chain.zkey w.wtns p_s.json pub_s.json)")
  ours_z+=("$(timeit "$C" prove --zkey chain.zkey --wtns w.wtns --snarkjs-proof p_z.json --snarkjs-public pub_z.json)")
  ours_p+=("$(timeit "$C" prove --params chain.params --r1cs chain.r1cs --wtns w.wtns --proof p.bin --snarkjs-public pub_p.json)")
done
$S groth16 verify vk.json pub_s.json p_s.json | grep -q OK || { echo "snarkjs proof did not verify"; exit 1; }
$S groth16 verify vk.json pub_z.json p_z.json | grep -q OK || { echo "our zkey proof did not verify with snarkjs"; exit 1; }
"$C" verify --vk chain.vk --proof p.bin --public pub_p.json >/dev/null || { echo "our params proof did not verify"; exit 1; }
ms=$(printf '%s\n' "${snark[@]}" | median); mz=$(printf '%s\n' "${ours_z[@]}" | median); mp=$(printf '%s\n' "${ours_p[@]}" | median)
echo "| circuit | snarkjs groth16 prove (s) | cuzkctl prove --zkey (s) | cuzkctl prove --params (s) | speed-up (zkey) |"
echo "|---|---|---|---|---|"
printf '| chain N=%s (domain 2^%s), %s threads | %.2f | %.2f | %.2f | %.1fx |\n' "$N" \
  "$(python3 -c "import math;print(math.ceil(math.log2($N+3)))")" "$(nproc)" "$ms" "$mz" "$mp" "$(echo "$ms / $mz" | bc -l)"
echo "(medians of $RUNS runs, wall time including process start-up and file loading; all proofs verified)"
