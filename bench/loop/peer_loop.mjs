// SPDX-License-Identifier: MIT
// peer_loop.mjs - the Vercel AI SDK's generateText driving the same scripted
// loop as bench/loop/bench_loop.c: a mock model (MockLanguageModelV3 of
// ai/test, no HTTP) answers each of ITERS-1 requests with CALLS calls of a
// no-op tool `lookup {key, n}` and the last one with a text answer; the
// tool's schema is checked (zod) and it returns {ok:true}. The time the mock
// spends building its answers and the time spent in the tool are measured
// and taken out, as the C driver does. Prints one JSON line:
// {"peer":"ai-sdk","loops":L,"iterations":I,"us_per_iteration":X,
//  "peak_rss_kb":R}
//
//   node peer_loop.mjs [LOOPS] [ITERS] [CALLS]
import { readFileSync } from 'node:fs';
import { generateText, tool, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const loops = Number(process.argv[2] || 200);
const iters = Number(process.argv[3] || 20);
const ncalls = Number(process.argv[4] || 2);
const now = () => process.hrtime.bigint();
let modelNs = 0n;
let toolNs = 0n;
let seq = 0;
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function answer(step) {
  if (step >= iters) {
    return { content: [{ type: 'text', text: 'done' }],
      finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  }
  const content = [];
  for (let c = 0; c < ncalls; c++) {
    content.push({ type: 'tool-call', toolCallId: `call_${seq++}`,
      toolName: 'lookup', input: JSON.stringify({ key: `k${step}_${c}`, n: c }) });
  }
  return { content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage, warnings: [] };
}

function makeModel() {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const t0 = now();
      step++;
      const r = answer(step);
      modelNs += now() - t0;
      return r;
    },
  });
}

const tools = {
  lookup: tool({
    description: 'no-op',
    inputSchema: z.object({ key: z.string(), n: z.number().int() }),
    execute: async () => {
      const t0 = now();
      const r = { ok: true };
      toolNs += now() - t0;
      return r;
    },
  }),
};

async function once() {
  const r = await generateText({ model: makeModel(), tools, prompt: 'go',
    stopWhen: stepCountIs(iters + 1) });
  if (r.text !== 'done' || r.steps.length !== iters) throw new Error(`bad loop: ${r.steps.length} steps`);
}

for (let i = 0; i < Math.min(20, loops); i++) await once(); // warm up the JIT
modelNs = 0n; toolNs = 0n;
const t0 = now();
for (let i = 0; i < loops; i++) await once();
const wall = now() - t0;
const us = Number(wall - modelNs - toolNs) / 1000 / (loops * iters);
const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
console.log(JSON.stringify({ peer: 'ai-sdk', loops, iterations: iters, calls: ncalls,
  us_per_iteration: us, model_us: Number(modelNs) / 1000, tool_us: Number(toolNs) / 1000,
  peak_rss_kb: hwm ? Number(hwm[1]) : -1 }));
