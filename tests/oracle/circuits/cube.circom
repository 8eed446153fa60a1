pragma circom 2.0.0;
// The smallest shape: no public input, one public output.
template Cube() {
  signal input x;
  signal output y;
  signal x2;
  x2 <== x * x;
  y <== x2 * x;
}
component main = Cube();
