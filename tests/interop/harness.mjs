// SPDX-License-Identifier: MIT
// tests/interop: what the scripts that drive the official MCP TypeScript
// SDK's Client against toolgate share (sdk_client.mjs, sdk_gateway.mjs,
// sdk_gateway_elicit.mjs):
// the checks and their `ok NAME` / `not ok NAME: reason` lines, time bounds
// scaled by TG_TEST_TIME_SCALE, waiting for a condition, and starting
// `toolgate serve` over stdio or Streamable HTTP with an SDK transport in
// front of it.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, connect as netConnect } from 'node:net';

/* Time: every bound is multiplied by TG_TEST_TIME_SCALE (at least 1). */
export const scale = Math.max(1, Number(process.env.TG_TEST_TIME_SCALE) || 1);
export const ms = (n) => n * scale;
export const sleep = (n) => new Promise((r) => setTimeout(r, n));

let failed = 0;
/* How many checks failed so far. */
export const failures = () => failed;
export function ok(name) { console.log(`ok ${name}`); }
export function notOk(name, why) {
    failed++;
    console.log(`not ok ${name}: ${String(why).replace(/\s+/g, ' ').slice(0, 500)}`);
}
/* Runs one check: fn returns true or undefined (passed), a string (why it
 * failed, or '# SKIP reason'), or false; a throw is a failure too. */
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

/* The text of a CallToolResult's text blocks, joined. */
export const textOf = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

/* Polls fn (may be async) every 20 ms until it is true; throws "WHAT
 * within LIMIT ms" when it is still false after limit ms. */
export async function waitFor(what, fn, limit) {
    const until = Date.now() + limit;
    while (!(await fn())) {
        if (Date.now() > until) throw new Error(`${what} within ${limit} ms`);
        await sleep(20);
    }
}

/* Whether process pid is gone (or a zombie nobody waited for yet). */
export function gone(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
    } catch {
        return true;
    }
}

/* A TCP port of 127.0.0.1 that was free a moment ago. */
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

/* Resolves once something listens on 127.0.0.1:port; rejects when child
 * (named `what` in the error) exits first or after 20 s (scaled). */
export async function waitForPort(port, child, what = 'toolgate serve') {
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

/* Starts `toolgate serve --config cfg` and returns {transport, child,
 * stop}: over stdio the SDK's StdioClientTransport starts it (child is
 * null: the transport owns the process), over http it listens on a free
 * port of 127.0.0.1 and the transport is a StreamableHTTPClientTransport
 * to its /mcp. stop() ends a listening server (SIGTERM) and resolves when
 * it exited. toolgate's stderr goes to ours. */
export async function startServe(toolgate, kind, cfg) {
    if (kind === 'stdio') {
        const transport = new StdioClientTransport({
            command: toolgate,
            args: ['serve', '--stdio', '--config', cfg],
            env: { ...process.env },
            stderr: 'inherit',
        });
        return { transport, child: null, stop: async () => {} };
    }
    const port = await freePort();
    const child = spawn(toolgate, ['serve', '--http', `127.0.0.1:${port}`, '--config', cfg],
        { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (e) => { console.error(`toolgate serve: ${e.message}`); });
    const exited = new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) r();
        else child.on('exit', () => r());
    });
    const stop = async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
    };
    try {
        await waitForPort(port, child);
    } catch (e) {
        await stop();
        throw e;
    }
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    return { transport, child, stop };
}
