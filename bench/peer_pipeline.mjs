// SPDX-License-Identifier: MIT
// peer_pipeline.mjs - the Vercel AI SDK doing its per-call work on the same
// turn toolgate's bench_pipeline measures: JSON.parse of the response, then
// per tool call safeParseJSON (with the tool's schema, and once without) and
// the tool's execute, then the tool messages serialised. Prints one JSON line:
// {"peer":"ai-sdk", "calls":N, "us_per_call_schema":X, "us_per_call_noschema":Y}
import { readFileSync } from 'node:fs';
import { safeParseJSON, zodSchema } from '@ai-sdk/provider-utils';
import { z } from 'zod';

const [file, roundsArg] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const rounds = Number(roundsArg || 7);

const schema = zodSchema(z.object({
  path: z.string(),
  pattern: z.string(),
  max_results: z.number().int(),
  case_sensitive: z.boolean(),
  include: z.array(z.string()),
  context_lines: z.number().int(),
  mode: z.enum(['content', 'files', 'count']),
}));
const execute = async (args) => ({ ok: true });

async function once(withSchema) {
  const t0 = process.hrtime.bigint();
  const response = JSON.parse(text);
  const calls = response.choices[0].message.tool_calls;
  const out = [];
  for (const tc of calls) {
    const parsed = withSchema
      ? await safeParseJSON({ text: tc.function.arguments, schema })
      : await safeParseJSON({ text: tc.function.arguments });
    let content;
    if (parsed.success) content = JSON.stringify(await execute(parsed.value));
    else content = JSON.stringify({ error: { message: String(parsed.error) } });
    out.push({ role: 'tool', tool_call_id: tc.id, content });
  }
  const rendered = JSON.stringify(out);
  const t1 = process.hrtime.bigint();
  if (rendered.length < calls.length) throw new Error('bad render');
  return { ns: Number(t1 - t0), n: calls.length };
}

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; }
const res = {};
for (const withSchema of [true, false]) {
  await once(withSchema); // warm up the JIT
  const times = [];
  let n = 0;
  for (let i = 0; i < rounds; i++) { const r = await once(withSchema); times.push(r.ns); n = r.n; }
  res[withSchema ? 'us_per_call_schema' : 'us_per_call_noschema'] = median(times) / 1000 / n;
  res.calls = n;
}
console.log(JSON.stringify({ peer: 'ai-sdk', ...res }));
