// SPDX-License-Identifier: MIT
// peer_spawn.mjs - Node's child_process.spawn of a command, awaited one by
// one, N times: the peer of bench_spawn. Prints {"peer":"node-spawn",
// "calls":N,"per_second":X}.
import { spawn } from 'node:child_process';

const [cmd, nArg] = process.argv.slice(2);
const n = Number(nArg || 1000);
const run = () => new Promise((resolve, reject) => {
  const child = spawn(cmd, [], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  child.on('error', reject);
  child.on('close', resolve);
});
for (let i = 0; i < 20; i++) await run(); // warm up
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) await run();
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ peer: 'node-spawn', calls: n, per_second: n / s }));
