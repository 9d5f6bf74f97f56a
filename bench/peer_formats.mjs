// SPDX-License-Identifier: MIT
// peer_formats.mjs - Node's JSON.parse + JSON.stringify of the same documents
// bench_formats parses and renders. Usage: node peer_formats.mjs FILE...
// Prints one JSON line per file: {"file":F,"bytes":N,"mb_per_s":X}.
import { readFileSync } from 'node:fs';

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; }
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  const bytes = Buffer.byteLength(text);
  const lines = file.endsWith('.jsonl');
  const once = () => {
    const t0 = process.hrtime.bigint();
    let out;
    if (lines) out = text.split('\n').filter((l) => l).map((l) => JSON.stringify(JSON.parse(l))).join('\n');
    else out = JSON.stringify(JSON.parse(text));
    const ns = Number(process.hrtime.bigint() - t0);
    if (out.length === 0) throw new Error('empty');
    return ns;
  };
  once();
  const times = [];
  for (let i = 0; i < 5; i++) times.push(once());
  console.log(JSON.stringify({ file, bytes, mb_per_s: bytes / 1e6 / (median(times) / 1e9) }));
}
