// SPDX-License-Identifier: MIT
// tests/interop/conformance/judge.mjs - the verdict of tests/interop/
// conformance.sh: reads the checks.json the MCP conformance suite wrote for
// each scenario of each run (`-o DIR`), and scope.json (which scenarios and
// checks apply to toolgate serve, and why the others do not), and prints
// one line per scenario the suite has: its result in each run (passed,
// failed, - not run) and the verdict (passed, FAILED, out of scope: why).
// An in-scope scenario passes when none of its checks is FAILURE or WARNING
// (leaving out the checks scope.json puts out of scope) and the checks
// scope.json names under must_succeed are SUCCESS; it must have run in at
// least one run. Exit status 1 when an in-scope scenario failed or never
// ran, else 0.
//
// usage: node judge.mjs [--partial] SCOPE.json LIST.txt LABEL=DIR...
//   --partial  only some versions ran: an in-scope scenario none of them
//              ran is "not run", not a failure
//   LIST.txt  the output of `conformance list --server` (every scenario)
//   LABEL=DIR a run's label (its protocol version) and its output dir
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const partial = args[0] === '--partial';
if (partial) args.shift();
const [scopePath, listPath, ...runArgs] = args;
if (!scopePath || !listPath || runArgs.length === 0) {
    console.error('usage: judge.mjs [--partial] SCOPE.json LIST.txt LABEL=DIR...');
    process.exit(2);
}
const scope = JSON.parse(readFileSync(scopePath, 'utf8'));
const all = [];
for (const line of readFileSync(listPath, 'utf8').split('\n')) {
    const m = /^\s*-\s+(\S+)/.exec(line);
    if (m && !all.includes(m[1])) all.push(m[1]);
}

// The result of one scenario's checks: {ok, why}.
function judge(name, checks) {
    const skip = (scope.checks_out_of_scope || {})[name] || {};
    const bad = checks.filter((c) => !(c.id in skip) &&
        (c.status === 'FAILURE' || c.status === 'WARNING'));
    const why = bad.map((c) => `${c.id} ${c.status}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
    for (const id of (scope.must_succeed || {})[name] || [])
        if (!checks.some((c) => c.id === id && c.status === 'SUCCESS'))
            why.push(`${id} is not SUCCESS`);
    return { ok: why.length === 0, why };
}

const runs = runArgs.map((a) => {
    const at = a.indexOf('=');
    const label = a.slice(0, at), dir = a.slice(at + 1);
    const results = new Map();
    for (const d of existsSync(dir) ? readdirSync(dir).sort() : []) {
        const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
        const file = join(dir, d, 'checks.json');
        if (!m || !existsSync(file)) continue;
        let checks;
        try {
            checks = JSON.parse(readFileSync(file, 'utf8'));
        } catch (e) {
            checks = [{ id: 'checks.json', status: 'FAILURE', errorMessage: `unreadable: ${e.message}` }];
        }
        if (!all.includes(m[1])) all.push(m[1]);
        results.set(m[1], judge(m[1], checks));
    }
    return { label, results };
});

const out = scope.out_of_scope || {};
const width = Math.max(...all.map((n) => n.length)) + 2;
let failed = 0, passed = 0, outside = 0;
console.log(['scenario'.padEnd(width), ...runs.map((r) => r.label.padEnd(12)), 'verdict'].join(''));
for (const name of all) {
    const cells = runs.map((r) => {
        const res = r.results.get(name);
        return (res === undefined ? '-' : res.ok ? 'passed' : 'failed').padEnd(12);
    });
    let verdict;
    const ran = runs.filter((r) => r.results.has(name));
    if (name in out) {
        verdict = `out of scope: ${out[name]}`;
        outside++;
    } else if (ran.length === 0 && partial) {
        verdict = 'not run (another version)';
    } else if (ran.length === 0) {
        verdict = 'FAILED: in scope and never ran';
        failed++;
    } else if (ran.every((r) => r.results.get(name).ok)) {
        verdict = 'passed';
        passed++;
    } else {
        verdict = 'FAILED';
        failed++;
    }
    console.log([name.padEnd(width), ...cells, verdict].join(''));
    if (verdict.startsWith('FAILED'))
        for (const r of ran)
            for (const w of r.results.get(name).why) console.log(`    ${r.label}: ${w}`);
}
console.log(`\n${passed} in scope passed, ${failed} in scope failed, ${outside} out of scope (of ${all.length} scenarios)`);
process.exit(failed > 0 ? 1 : 0);
