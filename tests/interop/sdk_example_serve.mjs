// SPDX-License-Identifier: MIT
// tests/interop: the official MCP TypeScript SDK's Client (pinned in
// package-lock.json) against examples/c/serve.c, a C program that
// registers a C function as the tool `stats` and serves it with the public
// server API (include/toolgate_serve.h), over stdio or Streamable HTTP;
// and against its Python twin, examples/python/mcp_server.py (a Python
// function served with toolgate.Server), which must behave the same.
// It initializes, finds `stats` (and nothing else) in tools/list with its
// schema, calls it and gets what the C function computed, gets an isError
// result for arguments the schema refuses (the function never ran), and
// sees the program end cleanly: on EOF of its stdin over stdio, on SIGTERM
// over HTTP. Over HTTP the program listens on port 0 and prints the URL
// it got from tg_server_url. Each check prints `ok NAME` or
// `not ok NAME: reason`; the exit status is 1 when any failed (2: bad
// usage, or the run itself broke).
//
//   node tests/interop/sdk_example_serve.mjs --server BIN [--transport stdio|http]
//
// Time bounds scale with TG_TEST_TIME_SCALE. Runs on Node >= 18.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { check, failures, gone, ms, notOk, ok, textOf, waitFor } from './harness.mjs';

function usage(msg) {
    if (msg) console.error(`sdk_example_serve: ${msg}`);
    console.error('usage: sdk_example_serve.mjs --server BIN [--transport stdio|http]');
    process.exit(2);
}

const opt = { transport: 'stdio' };
for (let i = 2; i < process.argv.length; i += 2) {
    const a = process.argv[i], v = process.argv[i + 1];
    if (v === undefined) usage(`${a} wants a value`);
    if (a === '--server') opt.server = v;
    else if (a === '--transport') opt.transport = v;
    else usage(`unknown option ${a}`);
}
if (!opt.server) usage('give --server');
if (!['stdio', 'http'].includes(opt.transport)) usage(`--transport ${opt.transport}`);

// Nothing may hang: the whole run has a deadline.
let child = null;
const watchdog = setTimeout(() => {
    notOk('deadline', `the run did not end within ${ms(60)} s`);
    if (child && child.exitCode === null) child.kill('SIGKILL');
    process.exit(1);
}, ms(60000));
watchdog.unref();

// The example over HTTP: started with --http 0; resolves with the URL it
// prints once it listens (the port the system chose).
function startHttp() {
    child = spawn(opt.server, ['--http', '0'], { stdio: ['ignore', 'inherit', 'pipe'] });
    const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
    const url = new Promise((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d) => {
            err += d;
            process.stderr.write(d);
            const m = err.match(/serving MCP on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/);
            if (m && Number(m[2]) > 0) resolve(m[1]);
        });
        child.on('error', reject);
        exited.then(({ code, sig }) => reject(new Error(`it exited (${code ?? sig}) before listening: ${err}`)));
    });
    return { url, exited };
}

// The JSON the tool returned, inside the result's text (toolgate wraps
// tool output in a trust envelope).
function statsOf(res) {
    const m = textOf(res).match(/\{"count".*\}/);
    return m ? JSON.parse(m[0]) : null;
}

async function main() {
    let transport, http = null;
    if (opt.transport === 'stdio') {
        transport = new StdioClientTransport({ command: opt.server, args: [], stderr: 'inherit' });
    } else {
        http = startHttp();
        const url = await http.url;
        ok(`listening on an ephemeral port (${url})`);
        transport = new StreamableHTTPClientTransport(new URL(url));
    }
    const client = new Client({ name: 'toolgate-example-serve', version: '1.0.0' });
    try {
        await client.connect(transport, { timeout: ms(10000) });
        ok('initialize');
    } catch (e) {
        notOk('initialize', e.message);
        return;
    }
    const pid = opt.transport === 'stdio' ? transport.pid : child.pid;

    await check('tools/list has the C tool, alone', async () => {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        if (names.join() !== 'stats') return `tools: ${names.join(', ')}`;
        const s = tools[0].inputSchema;
        return (s.type === 'object' && s.properties.numbers.type === 'array' &&
            /smallest and largest/.test(tools[0].description)) || `stats: ${JSON.stringify(tools[0])}`;
    });

    await check('tools/call returns the callback\'s result', async () => {
        const res = await client.callTool({ name: 'stats', arguments: { numbers: [2, 40, 0.5, -3] } });
        const got = statsOf(res);
        if (res.isError || got === null) return `got ${JSON.stringify(res)}`;
        return (got.count === 4 && got.sum === 39.5 && got.min === -3 && got.max === 40) ||
            `stats: ${JSON.stringify(got)}`;
    });

    await check('arguments the schema refuses never reach the callback', async () => {
        const res = await client.callTool({ name: 'stats', arguments: { numbers: ['two'] } });
        if (res.isError !== true) return `isError is ${res.isError}: ${JSON.stringify(res)}`;
        const meta = (res._meta || {})['io.toolgate/result'] || {};
        return (/INVALID_ARGUMENTS/.test(textOf(res)) && meta.execution === 'not_started') ||
            `got ${JSON.stringify(res)}`;
    });

    await check('calls at once', async () => {
        const all = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((n) =>
            client.callTool({ name: 'stats', arguments: { numbers: [n, n] } })));
        const sums = all.map((r) => (statsOf(r) || {}).sum);
        return sums.join() === '2,4,6,8,10,12,14,16' || `sums: ${sums.join()}`;
    });

    if (opt.transport === 'stdio') {
        // EOF on its stdin stops the server, which then exits 0. The
        // SDK's close would end stdin too, but send SIGTERM after 2 s: the
        // test ends stdin itself (the transport's process, a private
        // field) and waits for the exit.
        const proc = transport._process;
        const exited = new Promise((r) => {
            if (proc.exitCode !== null || proc.signalCode !== null) r();
            else proc.once('exit', () => r());
        });
        proc.stdin.end();
        await check('exits 0 on EOF of stdin', async () => {
            await Promise.race([exited, new Promise((r) => setTimeout(r, ms(10000)))]);
            return proc.exitCode === 0 || `exit ${proc.exitCode ?? proc.signalCode ?? 'none: still running'}`;
        });
        await client.close();
        await check('gone', () => waitFor(`process ${pid} gone`, () => gone(pid), ms(10000)));
    } else {
        await client.close();
        child.kill('SIGTERM');
        await check('exits 0 on SIGTERM', async () => {
            const { code, sig } = await Promise.race([http.exited,
                new Promise((r) => setTimeout(() => r({ code: 'none', sig: 'still running' }), ms(10000)))]);
            return code === 0 || `exit ${code ?? sig}`;
        });
    }
}

let code = 0;
try {
    await main();
} catch (e) {
    notOk('run', e && e.stack ? e.stack : e);
    code = 2;
}
if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
process.exit(code || (failures() ? 1 : 0));
