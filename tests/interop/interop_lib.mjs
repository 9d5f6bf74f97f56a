// SPDX-License-Identifier: MIT
// tests/interop/interop_lib.mjs - what the interop scripts of this
// directory share: scaled time bounds (TG_TEST_TIME_SCALE), the TAP-like
// report (`ok NAME` / `not ok NAME: reason`, and the count of failures for
// the exit status), a free port on 127.0.0.1, and waiting for a child
// process to listen on one.
import { createServer, connect as netConnect } from 'node:net';

export const scale = Math.max(1, Number(process.env.TG_TEST_TIME_SCALE) || 1);
export const ms = (n) => n * scale;
export const sleep = (n) => new Promise((r) => setTimeout(r, n));

// The report: report.failed counts the checks that failed.
export const report = { failed: 0 };
export function ok(name) { console.log(`ok ${name}`); }
export function notOk(name, why) {
    report.failed++;
    console.log(`not ok ${name}: ${String(why).replace(/\s+/g, ' ').slice(0, 500)}`);
}
// Runs one check: fn returns true or nothing (ok), '# SKIP why' (ok,
// skipped), anything else (the reason it failed); a throw fails it too.
export async function check(name, fn) {
    try {
        const why = await fn();
        if (why === true || why === undefined) ok(name);
        else if (typeof why === 'string' && why.startsWith('# SKIP')) console.log(`ok ${name} ${why}`);
        else notOk(name, why === false ? 'check failed' : why);
    } catch (e) {
        notOk(name, e && e.message ? e.message : e);
    }
}

// A port on 127.0.0.1 that was free a moment ago.
export function freePort() {
    return new Promise((resolve, reject) => {
        const s = createServer();
        s.on('error', reject);
        s.listen(0, '127.0.0.1', () => {
            const { port } = s.address();
            s.close(() => resolve(port));
        });
    });
}

// Waits (20 s, scaled) until something listens on 127.0.0.1:port; throws
// when the child process `what` exits first or the time is up.
export async function waitForPort(port, child, what) {
    const until = Date.now() + ms(20000);
    for (;;) {
        if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before listening`);
        const up = await new Promise((r) => {
            const s = netConnect(port, '127.0.0.1');
            s.on('connect', () => { s.destroy(); r(true); });
            s.on('error', () => r(false));
        });
        if (up) return;
        if (Date.now() > until) throw new Error(`${what} did not listen on ${port}`);
        await sleep(50);
    }
}
