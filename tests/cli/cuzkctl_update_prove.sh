#!/usr/bin/env bash
# `cuzkctl update setup|prove|verify` on a genuine 2 KiB update of a natively
# sealed sector, with development parameters (a 1,705,044-row setup: about
# 10 minutes on a loaded 2-core VM, proving about 1.5 minutes), hence "slow".
# The proof verifies against its own update.json (exit 0) and not against
# another update's public inputs (exit 1).
# Usage: cuzkctl_update_prove.sh CUZKCTL
set -u
C=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$C" update gen --sector-size 2KiB --seed 21 --sealed --out "$tmp/a" >/dev/null || { echo "FAIL: gen"; exit 1; }
"$C" update gen --sector-size 2KiB --seed 22 --sealed --out "$tmp/b" >/dev/null || { echo "FAIL: gen"; exit 1; }
"$C" update setup --sector-size 2KiB --out-dir "$tmp/params" || { echo "FAIL: setup"; exit 1; }
"$C" update prove --dir "$tmp/a" --param-dir "$tmp/params" --proof "$tmp/p.bin" || { echo "FAIL: prove"; exit 1; }
[[ $(stat -c %s "$tmp/p.bin") == 192 ]] || { echo "FAIL: proof size"; fail=1; }
vk=$(ls "$tmp"/params/v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095b*-dev.vk)
"$C" update verify --dir "$tmp/a" --proof "$tmp/p.bin" --vk "$vk" || { echo "FAIL: verify"; fail=1; }
"$C" update verify --dir "$tmp/b" --proof "$tmp/p.bin" --vk "$vk"
[[ $? == 1 ]] || { echo "FAIL: foreign inputs verified"; fail=1; }
exit $fail
