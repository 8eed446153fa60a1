// Times snarkjs' field library (ffjavascript 0.3.1, WASM + worker threads) on
// BLS12-381 Fr FFTs of 2^16 and 2^20 elements, for comparison with bench_ntt.
//
//   cd bench/js && npm ci && node ../ffjs_ntt.mjs [log2 sizes...]
//
// Prints one line per size: best and median wall time in ms over the runs.
import { createRequire } from "node:module";
import { randomFillSync } from "node:crypto";
import os from "node:os";

const require = createRequire(new URL("./js/package.json", import.meta.url));
const { buildBls12381 } = require("ffjavascript");

const sizes = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [16, 20];
const curve = await buildBls12381(); // multi-threaded: one worker per hardware thread
const Fr = curve.Fr;

for (const logN of sizes) {
  const n = 1 << logN;
  const buff = new Uint8Array(n * Fr.n8);
  randomFillSync(buff);
  // Clear the two top bits of each 32-byte little-endian element: < 2^254 < r.
  for (let i = 0; i < n; i++) buff[i * Fr.n8 + Fr.n8 - 1] &= 0x3f;
  await Fr.fft(buff); // warm-up: worker start-up and WASM compilation
  const runs = logN >= 20 ? 5 : 20;
  const times = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await Fr.fft(buff);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(
    `ffjavascript bls12381 Fr.fft 2^${logN}: best ${times[0].toFixed(1)} ms, median ${median.toFixed(1)} ms ` +
      `(${runs} runs, ${os.availableParallelism()} hardware threads)`,
  );
}
await curve.terminate();
