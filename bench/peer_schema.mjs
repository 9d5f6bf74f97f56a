// SPDX-License-Identifier: MIT
// peer_schema.mjs - Ajv, the usual JavaScript JSON Schema validator, on the
// schemas and instances toolgate's bench_schema measures: each schema compiled
// once (Ajv for draft-07, Ajv2020 for 2020-12; formats asserted by neither),
// then per validation JSON.parse of the instance text and validate.
// Usage: node peer_schema.mjs N FILE... (FILE: {"schema","instance"}).
// Prints one JSON line per file: {"file":F,"ns_per_validation":X}.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; }
const [nArg, ...files] = process.argv.slice(2);
const n = Number(nArg || 200000);
for (const file of files) {
  const { schema, instance } = JSON.parse(readFileSync(file, 'utf8'));
  const is2020 = !schema.$schema || schema.$schema.includes('2020-12');
  const ajv = is2020 ? new Ajv2020({ allErrors: false, strict: false, validateFormats: false })
                     : new Ajv({ allErrors: false, strict: false, validateFormats: false });
  const validate = ajv.compile(schema);
  const text = JSON.stringify(instance);
  let valid = 0;
  const once = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (validate(JSON.parse(text))) valid++;
    return Number(process.hrtime.bigint() - t0) / n;
  };
  once();
  const times = [];
  for (let r = 0; r < 5; r++) times.push(once());
  if (valid === 0) throw new Error(`${file}: instance is not valid`);
  console.log(JSON.stringify({ file, ns_per_validation: median(times) }));
}
