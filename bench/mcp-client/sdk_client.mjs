// SPDX-License-Identifier: MIT
// sdk_client.mjs - the peer of client_load.c: the MCP TypeScript SDK's
// Client calling one tool of a server it starts over stdio, directly (no
// toolgate between), N calls one at a time then N with K in flight, after
// a warm-up; prints calls/s and p50/p99 of each phase as one JSON line, the
// same keys as client_load.
//
//   node bench/mcp-client/sdk_client.mjs --tool NAME --args JSON
//        [--calls N] [--inflight K] [--warmup N] -- COMMAND ARGS...
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(new URL('../../tests/interop/', import.meta.url));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const argv = process.argv.slice(2);
const opt = { calls: 2000, inflight: 16, warmup: 200, tool: null, args: '{}' };
let cmd = null;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--') { cmd = argv.slice(i + 1); break; }
  const v = argv[++i];
  const k = argv[i - 1].replace(/^--/, '');
  if (!(k in opt) || v === undefined) {
    console.error('usage: sdk_client.mjs --tool NAME --args JSON [--calls N] [--inflight K] [--warmup N] -- COMMAND...');
    process.exit(2);
  }
  opt[k] = ['calls', 'inflight', 'warmup'].includes(k) ? Number(v) : v;
}
if (!cmd || !opt.tool) {
  console.error('sdk_client.mjs: a --tool and a server command are needed');
  process.exit(2);
}
const args = JSON.parse(opt.args);

const transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: 'ignore' });
const client = new Client({ name: 'bench', version: '1' });
await client.connect(transport);

async function one(lat, i) {
  const t0 = performance.now();
  const r = await client.callTool({ name: opt.tool, arguments: args });
  if (r.isError) throw new Error(`${opt.tool} failed: ${JSON.stringify(r.content)}`);
  lat[i] = (performance.now() - t0) * 1000;
}

async function phase(n, k) {
  const lat = new Array(n);
  let next = 0;
  const t0 = performance.now();
  async function worker() {
    while (next < n) await one(lat, next++);
  }
  await Promise.all(Array.from({ length: Math.min(k, n) }, worker));
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { per_s: n / secs, p50: lat[Math.floor(n / 2)], p99: lat[Math.floor((n * 99) / 100)] };
}

if (opt.warmup > 0) await phase(opt.warmup, opt.inflight);
const seq = await phase(opt.calls, 1);
const par = await phase(opt.calls, opt.inflight);
const r1 = (x) => Math.round(x * 10) / 10;
console.log(JSON.stringify({
  label: 'sdk', calls: opt.calls, inflight: opt.inflight,
  seq_per_s: r1(seq.per_s), seq_p50_us: r1(seq.p50), seq_p99_us: r1(seq.p99),
  par_per_s: r1(par.per_s), par_p50_us: r1(par.p50), par_p99_us: r1(par.p99),
}));
await client.close();
