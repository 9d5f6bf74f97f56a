// SPDX-License-Identifier: MIT
// tests/interop: elicitation through `toolgate serve` as a gateway, between
// two pieces of software nobody here wrote: the official MCP TypeScript
// SDK's Client (pinned in package-lock.json) in front, and
// @modelcontextprotocol/server-everything (pinned too) behind, as the tool
// source "ev". Its tool trigger-elicitation-request asks the user for a
// form (elicitation/create on the call's own stream); toolgate forwards the
// question to the Client that made the call and the Client's answer back:
// accepted (the server echoes the values), declined, canceled. Then:
//   - a second call in flight while the question waits: over HTTP the
//     question still belongs to its call (it came on the call's POST
//     stream) and is forwarded; over stdio it belongs to no single call and
//     is declined without asking;
//   - the Client aborts its call while the question waits: the call ends,
//     its late answer is ignored, the next call works;
//   - over HTTP, a 2026-07-28 client (raw JSON-RPC): the question comes in
//     an InputRequiredResult while the upstream call waits, the retry with
//     the answer and the requestState gets the result, a reused state
//     -32602;
//   - the journal: decisions.elicitation of each call, without the values.
// Each check prints `ok NAME` or `not ok NAME: reason`; exit status 1 when
// any failed (2: bad usage or a broken run).
//
//   node tests/interop/sdk_gateway_elicit.mjs --toolgate BIN
//        [--transport stdio|http]   (Client <-> toolgate)
//        [--source stdio|http]      (toolgate <-> server-everything)
//
// Time bounds scale with TG_TEST_TIME_SCALE. Runs on Node >= 18.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, failures, freePort, ms, notOk, ok, sleep, waitForPort } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function usage(msg) {
    if (msg) console.error(`sdk_gateway_elicit: ${msg}`);
    console.error('usage: sdk_gateway_elicit.mjs --toolgate BIN [--transport stdio|http] [--source stdio|http]');
    process.exit(2);
}
const opt = { transport: 'stdio', source: 'stdio' };
for (let i = 2; i < process.argv.length; i += 2) {
    const a = process.argv[i], v = process.argv[i + 1];
    if (v === undefined) usage(`${a} wants a value`);
    if (a === '--toolgate') opt.toolgate = v;
    else if (a === '--transport') opt.transport = v;
    else if (a === '--source') opt.source = v;
    else usage(`unknown option ${a}`);
}
if (!opt.toolgate) usage('give --toolgate');
if (!['stdio', 'http'].includes(opt.transport)) usage(`--transport ${opt.transport}`);
if (!['stdio', 'http'].includes(opt.source)) usage(`--source ${opt.source}`);
const everything = join(here, 'node_modules', '.bin', 'mcp-server-everything');
if (!existsSync(everything)) usage(`no ${everything} (make interop-deps)`);

const textOf = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

let dir = null;
const children = [];
function cleanup() {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
}
const watchdog = setTimeout(() => {
    notOk('deadline', `the run did not end within ${ms(120)} s`);
    cleanup();
    process.exit(1);
}, ms(120000));
watchdog.unref();

const TOOL = 'ev__trigger-elicitation-request';

async function main() {
    dir = mkdtempSync(join(tmpdir(), 'tg-elicit-'));
    const work = join(dir, 'work');
    mkdirSync(work);
    let source;
    if (opt.source === 'stdio') {
        source = { command: [everything] };
    } else {
        const port = await freePort();
        const ev = spawn(everything, ['streamableHttp'], {
            env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'ignore'],
        });
        children.push(ev);
        await waitForPort(port, ev, 'server-everything');
        source = { url: `http://127.0.0.1:${port}/mcp` };
    }
    const cfg = join(dir, 'toolgate.json');
    writeFileSync(cfg, JSON.stringify({
        workspace: work, journal: join(dir, 'journal.db'), spool: null, builtin_tools: [],
        envelope: false, limits: { timeout_ms: ms(60000) },
        tools: [{ name: 'ev', mcp: source }],
    }));

    let transport, tgUrl = null;
    if (opt.transport === 'stdio') {
        transport = new StdioClientTransport({
            command: opt.toolgate, args: ['serve', '--stdio', '--config', cfg], stderr: 'inherit',
        });
    } else {
        const port = await freePort();
        const tg = spawn(opt.toolgate, ['serve', '--http', `127.0.0.1:${port}`, '--config', cfg],
            { stdio: ['ignore', 'inherit', 'inherit'] });
        children.push(tg);
        await waitForPort(port, tg, 'toolgate serve');
        tgUrl = `http://127.0.0.1:${port}/mcp`;
        transport = new StreamableHTTPClientTransport(new URL(tgUrl));
    }

    // What the user does with the next question: 'accept', 'decline',
    // 'cancel', or a function of the request.
    let answer = 'accept';
    const asked = [];
    const client = new Client({ name: 'toolgate-interop-elicit', version: '1.0.0' },
        { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
        asked.push(req.params);
        if (typeof answer === 'function') return answer(req, extra);
        if (answer !== 'accept') return { action: answer };
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } };
    });

    try {
        await client.connect(transport, { timeout: ms(10000) });
        ok('connect');
    } catch (e) {
        notOk('connect', e.message);
        return;
    }
    const call = (signal) => client.callTool({ name: TOOL, arguments: {} }, undefined,
        { timeout: ms(30000), ...(signal ? { signal } : {}) });

    await check('the elicitation tool is offered', async () => {
        // server-everything lists it only to a client that declared
        // elicitation: toolgate did, upstream
        const { tools } = await client.listTools();
        return tools.some((t) => t.name === TOOL) || `no ${TOOL} in ${tools.map((t) => t.name).join(', ')}`;
    });

    await check('accepted: the values reach the server', async () => {
        const before = asked.length;
        answer = 'accept';
        const res = await call();
        if (asked.length !== before + 1) return `${asked.length - before} questions, not 1`;
        const q = asked[before];
        if (!String(q.message).includes('Please provide inputs')) return `the message: ${q.message}`;
        if (!q.requestedSchema || !q.requestedSchema.properties || !q.requestedSchema.properties.name)
            return `no requestedSchema.properties.name in ${JSON.stringify(q)}`;
        const text = textOf(res);
        return (!res.isError && text.includes('Name: Ada Lovelace') && text.includes('Favorite Integer: 7')) ||
            `got ${JSON.stringify(res)}`;
    });

    await check('declined', async () => {
        answer = 'decline';
        const res = await call();
        return textOf(res).includes('declined') || `got ${JSON.stringify(res)}`;
    });

    await check('canceled', async () => {
        answer = 'cancel';
        const res = await call();
        return textOf(res).includes('cancelled') || `got ${JSON.stringify(res)}`;
    });

    await check(`a second call in flight (source over ${opt.source})`, async () => {
        answer = 'accept';
        const before = asked.length;
        const long = client.callTool({ name: 'ev__trigger-long-running-operation',
            arguments: { duration: 2, steps: 2 } }, undefined, { timeout: ms(30000) });
        await sleep(300);
        const res = await call();
        const text = textOf(res);
        await long;
        if (opt.source === 'http')
            // the question came on the call's own POST stream: forwarded
            return (asked.length === before + 1 && text.includes('Name: Ada Lovelace')) ||
                `${asked.length - before} questions; got ${JSON.stringify(res)}`;
        // stdio: two calls in flight, no way to tell whose: declined
        return (asked.length === before && text.includes('declined')) ||
            `${asked.length - before} questions; got ${JSON.stringify(res)}`;
    });

    await check('the client aborts while the question waits', async () => {
        const ac = new AbortController();
        let late = null;
        answer = () => {
            ac.abort('changed my mind');
            late = sleep(ms(300)).then(() => 1);
            return late.then(() => ({ action: 'accept', content: { name: 'too late' } }));
        };
        let threw = null;
        try {
            await call(ac.signal);
        } catch (e) {
            threw = e;
        }
        if (threw === null) return 'the aborted call returned';
        await late;
        await sleep(ms(200));
        answer = 'accept';
        const res = await call();
        return textOf(res).includes('Name: Ada Lovelace') || `the next call: ${JSON.stringify(res)}`;
    });

    if (tgUrl !== null) {
        // A 2026-07-28 client (raw JSON-RPC: the SDK does not speak it):
        // the upstream call parks behind an InputRequiredResult, and the
        // retry with the answer and the requestState re-attaches to it.
        const meta = {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
        };
        const post = async (id, extra) => {
            const res = await fetch(tgUrl, {
                method: 'POST',
                headers: {
                    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
                    'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': TOOL,
                },
                body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
                    params: { name: TOOL, arguments: {}, ...extra, _meta: meta } }),
                signal: AbortSignal.timeout(ms(30000)),
            });
            const lines = (await res.text()).split('\n').map((l) => (l.startsWith('data: ') ? l.slice(6) : l));
            return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((m) => m.id === id);
        };
        await check('2026-07-28: the question in an InputRequiredResult, the answer by the retry', async () => {
            const first = await post('m1', {});
            const r = first && first.result;
            if (!r || r.resultType !== 'input_required') return `first: ${JSON.stringify(first)}`;
            const [key] = Object.keys(r.inputRequests || {});
            const q = key && r.inputRequests[key];
            if (!q || q.method !== 'elicitation/create' || !String(q.params.message).includes('Please provide inputs'))
                return `the question: ${JSON.stringify(r.inputRequests)}`;
            const second = await post('m2', { requestState: r.requestState, inputResponses: {
                [key]: { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } } } });
            const text = textOf((second && second.result) || {});
            if (!text.includes('Name: Ada Lovelace')) return `the retry: ${JSON.stringify(second)}`;
            const again = await post('m3', { requestState: r.requestState, inputResponses: {
                [key]: { action: 'decline' } } });
            return (again && again.error && again.error.code === -32602) || `a reused state: ${JSON.stringify(again)}`;
        });
    }

    await client.close();
    for (const c of children) if (c.exitCode === null && c.signalCode === null && c.spawnargs.includes('serve')) {
        c.kill('SIGTERM');
        await new Promise((r) => c.once('exit', r));
    }

    await check('journal: decisions.elicitation without the values', async () => {
        const out = execFileSync(opt.toolgate, ['history', '--config', cfg, '--json', '--tool', TOOL],
            { encoding: 'utf8' });
        const rows = out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
        const acts = rows.map((r) => ((r.decisions || {}).elicitation || []).map((e) => e.action).join(','));
        const want = ['accept', 'decline', 'cancel', 'accept'];
        for (const w of want) if (!acts.includes(w)) return `no call recorded ${w}: ${JSON.stringify(acts)}`;
        const acc = rows.find((r) => ((r.decisions || {}).elicitation || [])[0]?.action === 'accept');
        const e = acc.decisions.elicitation[0];
        if (e.source !== 'ev' || e.mode !== 'form') return `the entry: ${JSON.stringify(e)}`;
        if (JSON.stringify(e.fields) !== JSON.stringify(['name', 'check', 'integer'])) return `fields: ${JSON.stringify(e.fields)}`;
        const decisions = JSON.stringify(rows.map((r) => r.decisions));
        if (decisions.includes('Ada Lovelace') || decisions.includes('too late')) return 'a value is in the decisions';
        return rows.some((r) => ((r.decisions || {}).elicitation || [])[0]?.detail?.includes('the call ended')) ||
            `the aborted call: ${JSON.stringify(acts)}`;
    });
}

main()
    .then(() => 0, (e) => { notOk('run', e && e.stack ? e.stack : e); return 2; })
    .then((code) => {
        cleanup();
        process.exit(code || (failures() ? 1 : 0));
    });
