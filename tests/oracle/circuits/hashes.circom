pragma circom 2.0.0;
// Dense linear combinations: circomlib's Poseidon (its constants are BN254's,
// so this is only a test shape here), two chained, output public.
include "circomlib/circuits/poseidon.circom";
template Hashes() {
  signal input x[2];
  signal output y;
  component h1 = Poseidon(2);
  component h2 = Poseidon(2);
  h1.inputs[0] <== x[0];
  h1.inputs[1] <== x[1];
  h2.inputs[0] <== h1.out;
  h2.inputs[1] <== x[0];
  y <== h2.out;
}
component main = Hashes();
