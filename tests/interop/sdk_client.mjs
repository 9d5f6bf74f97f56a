// SPDX-License-Identifier: MIT
// tests/interop: the official MCP TypeScript SDK's Client (pinned in
// package-lock.json) against `toolgate serve`, for one protocol version and
// one transport. It connects, lists the tools, calls each kind of tool
// (command, built-in, artifact), gets an isError result and a -32602 for an
// unknown tool, receives progress notifications, answers an elicitation
// (a policy `ask`; then declines one), runs a task (2025-11-25), cancels a
// long call with an AbortSignal and checks that the tool's process is gone.
// Each check prints `ok NAME` or `not ok NAME: reason`; the exit status is
// 1 when any failed (2: bad usage, or the run itself broke: toolgate did
// not start listening, an exception outside the checks).
//
//   node tests/interop/sdk_client.mjs --toolgate BIN [--transport stdio|http]
//        [--protocol-version 2025-06-18|2025-11-25]
//
// It makes a fresh directory with a workspace and toolgate's state, writes
// tests/interop/toolgate.json there with its placeholders filled (@WORK@,
// @STATE@, @INTEROP@: the workspace, where this directory's fixtures/ is
// copied), and starts
//   BIN serve --stdio --config CFG                   (StdioClientTransport)
//   BIN serve --http 127.0.0.1:PORT --config CFG      (StreamableHTTPClientTransport
//                                                     on http://127.0.0.1:PORT/mcp)
// Or, to debug the client side against another server with the same tools:
//   node tests/interop/sdk_client.mjs --url URL --workspace DIR [...]
//
// The SDK 1.32.2 client always offers its latest version (2025-11-25) in
// initialize; for another version the initialize request is rewritten on its
// way out, and the check `version` says what the server chose. Time bounds
// scale with TG_TEST_TIME_SCALE. Runs on Node >= 18.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, freePort, ms, notOk, ok, report, sleep, waitForPort } from './interop_lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function usage(msg) {
    if (msg) console.error(`sdk_client: ${msg}`);
    console.error('usage: sdk_client.mjs (--toolgate BIN [--transport stdio|http] | --url URL --workspace DIR)\n' +
        '         [--protocol-version V]');
    process.exit(2);
}

const opt = { transport: 'stdio', version: '2025-11-25' };
for (let i = 2; i < process.argv.length; i++) {
    const a = process.argv[i], v = process.argv[i + 1];
    if (v === undefined) usage(`${a} wants a value`);
    if (a === '--toolgate') opt.toolgate = v;
    else if (a === '--transport') opt.transport = v;
    else if (a === '--protocol-version') opt.version = v;
    else if (a === '--url') opt.url = v;
    else if (a === '--workspace') opt.workspace = v;
    else usage(`unknown option ${a}`);
    i++;
}
if (!opt.toolgate === !opt.url) usage('give --toolgate or --url');
if (opt.url && !opt.workspace) usage('--url needs --workspace');
if (!['stdio', 'http'].includes(opt.transport)) usage(`--transport ${opt.transport}`);

const textOf = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

// Nothing may hang: the whole run has a deadline.
const watchdog = setTimeout(() => {
    notOk('deadline', `the run did not end within ${ms(120)} s`);
    cleanup();
    process.exit(1);
}, ms(120000));
watchdog.unref();

let dir = null, server = null;
function cleanup() {
    if (server && server.exitCode === null) server.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
}

// The test config, placeholders filled, in a fresh directory.
function writeConfig() {
    dir = mkdtempSync(join(tmpdir(), 'tg-interop-'));
    const work = join(dir, 'work');
    mkdirSync(work);
    writeFileSync(join(work, 'hello.txt'), 'hello from the workspace\n');
    // The fixture scripts go into the workspace: the sandbox hides the rest
    // of /tmp, where a checkout (a CI clone) may lie.
    cpSync(join(here, 'fixtures'), join(work, 'fixtures'), { recursive: true });
    const text = readFileSync(join(here, 'toolgate.json'), 'utf8')
        .replaceAll('@WORK@', work).replaceAll('@STATE@', dir).replaceAll('@INTEROP@', work);
    const cfg = join(dir, 'toolgate.json');
    writeFileSync(cfg, text);
    return { cfg, work };
}

// The SDK offers only its latest version; this makes it offer `version`
// and records what the server answered.
function pinVersion(transport, version, seen) {
    const send = transport.send.bind(transport);
    let initId = null;
    transport.send = (msg, o) => {
        if (msg.method === 'initialize') {
            initId = msg.id;
            msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
        }
        return send(msg, o);
    };
    const start = transport.start.bind(transport);
    transport.start = async () => {
        const onmessage = transport.onmessage;
        transport.onmessage = (m, extra) => {
            if (initId !== null && m.id === initId && m.result) seen.version = m.result.protocolVersion;
            onmessage(m, extra);
        };
        return start();
    };
    return transport;
}

// Whether process pid is gone (or a zombie nobody waited for yet).
function gone(pid) {
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
    } catch {
        return true;
    }
}

async function waitFor(what, fn, limit) {
    const until = Date.now() + limit;
    while (!(await fn())) {
        if (Date.now() > until) throw new Error(`${what} within ${limit} ms`);
        await sleep(20);
    }
}

async function main() {
    let transport, work;
    if (opt.url) {
        work = opt.workspace;
        transport = new StreamableHTTPClientTransport(new URL(opt.url));
    } else {
        const c = writeConfig();
        work = c.work;
        if (opt.transport === 'stdio') {
            transport = new StdioClientTransport({
                command: opt.toolgate,
                args: ['serve', '--stdio', '--config', c.cfg],
                stderr: 'inherit',
            });
        } else {
            const port = await freePort();
            server = spawn(opt.toolgate, ['serve', '--http', `127.0.0.1:${port}`, '--config', c.cfg],
                { stdio: ['ignore', 'inherit', 'inherit'] });
            server.on('error', (e) => { console.error(`sdk_client: ${e.message}`); });
            await waitForPort(port, server, 'toolgate serve');
            transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
        }
    }
    const seen = {};
    pinVersion(transport, opt.version, seen);

    const elicitations = [];
    let elicitAnswer = 'accept';
    const client = new Client({ name: 'toolgate-interop', version: '1.0.0' },
        { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
        elicitations.push(req.params);
        if (elicitAnswer !== 'accept') return { action: elicitAnswer };
        // Fill whatever form it asks for with a yes.
        const content = {};
        const props = (req.params.requestedSchema && req.params.requestedSchema.properties) || {};
        for (const [k, s] of Object.entries(props)) {
            if (s.type === 'boolean') content[k] = s.default ?? false; // yes to this call only
            else if (Array.isArray(s.enum))
                content[k] = s.enum.find((e) => /yes|allow|approve|accept|once/i.test(e)) ?? s.enum[0];
            else if (s.type === 'number' || s.type === 'integer') content[k] = s.minimum ?? 1;
            else content[k] = 'yes';
        }
        return { action: 'accept', content };
    });

    try {
        await client.connect(transport, { timeout: ms(10000) });
        ok('connect');
    } catch (e) {
        notOk('connect', e.message);
        return;
    }
    await check('version', () => seen.version === opt.version ||
        `asked for ${opt.version}, the server chose ${seen.version}`);

    await check('tools/list', async () => {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        for (const want of ['greet', 'fail', 'progress', 'delete_file', 'numbers', 'slow', 'list_dir', 'artifact_head']) {
            if (!names.includes(want)) return `no tool ${want} in ${names.join(', ')}`;
        }
        const bad = tools.find((t) => !t.inputSchema || t.inputSchema.type !== 'object');
        if (bad) return `tool ${bad.name} has no object inputSchema`;
        const again = (await client.listTools()).tools.map((t) => t.name);
        return JSON.stringify(again) === JSON.stringify(names) || 'the order changed between two lists';
    });

    await check('call command tool', async () => {
        const res = await client.callTool({ name: 'greet', arguments: { name: 'interop' } });
        return (!res.isError && textOf(res).includes('hello, interop')) || `got ${JSON.stringify(res)}`;
    });

    await check('call built-in tool', async () => {
        const res = await client.callTool({ name: 'list_dir', arguments: { path: '.' } });
        return (!res.isError && textOf(res).includes('hello.txt')) || `got ${JSON.stringify(res)}`;
    });

    await check('call artifact tool', async () => {
        const res = await client.callTool({ name: 'numbers', arguments: { n: 20000 } });
        if (res.isError) return `numbers failed: ${JSON.stringify(res)}`;
        const whole = JSON.stringify(res);
        const id = (whole.match(/art_[0-9a-f]{24}/) || [])[0];
        if (!id) return `no artifact id in a 108 KB result: ${whole.slice(0, 300)}`;
        const head = await client.callTool({ name: 'artifact_head', arguments: { artifact: id, lines: 3 } });
        return (!head.isError && /1(\n|\\n)2(\n|\\n)3/.test(textOf(head))) || `artifact_head: ${JSON.stringify(head)}`;
    });

    await check('isError result', async () => {
        const res = await client.callTool({ name: 'fail', arguments: {} });
        if (res.isError !== true) return `isError is ${res.isError}: ${JSON.stringify(res)}`;
        return /status 3|failed on purpose/.test(textOf(res)) || `the text says nothing of the failure: ${textOf(res)}`;
    });

    await check('unknown tool', async () => {
        try {
            const res = await client.callTool({ name: 'no_such_tool', arguments: {} });
            return `a result instead of an error: ${JSON.stringify(res)}`;
        } catch (e) {
            return (e instanceof McpError && e.code === ErrorCode.InvalidParams) ||
                `not a -32602 error: ${e.code} ${e.message}`;
        }
    });

    await check('progress', async () => {
        const seenProgress = [];
        const res = await client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined,
            { onprogress: (p) => seenProgress.push(p), timeout: ms(20000) });
        if (res.isError || !textOf(res).includes('step 5 of 5')) return `got ${JSON.stringify(res)}`;
        if (seenProgress.length === 0) return 'no progress notification';
        for (let i = 1; i < seenProgress.length; i++)
            if (!(seenProgress[i].progress > seenProgress[i - 1].progress))
                return `progress did not increase: ${JSON.stringify(seenProgress)}`;
        return true;
    });

    await check('elicitation accepted', async () => {
        elicitAnswer = 'accept';
        const before = elicitations.length;
        const res = await client.callTool({ name: 'delete_file', arguments: { path: 'notes.txt' } },
            undefined, { timeout: ms(20000) });
        if (elicitations.length !== before + 1) return `${elicitations.length - before} elicitations, not 1`;
        const asked = JSON.stringify(elicitations[before]);
        if (!asked.includes('delete_file')) return `the question does not name the tool: ${asked}`;
        return (!res.isError && textOf(res).includes('deleted notes.txt')) || `got ${JSON.stringify(res)}`;
    });

    await check('elicitation declined', async () => {
        elicitAnswer = 'decline';
        const before = elicitations.length;
        const res = await client.callTool({ name: 'delete_file', arguments: { path: 'other.txt' } },
            undefined, { timeout: ms(20000) });
        if (elicitations.length !== before + 1) return `${elicitations.length - before} elicitations, not 1`;
        return (res.isError === true && !textOf(res).includes('deleted')) || `got ${JSON.stringify(res)}`;
    });

    await check('task', async () => {
        if (opt.version < '2025-11-25') return '# SKIP tasks came with 2025-11-25';
        const kinds = [];
        let result = null;
        for await (const m of client.experimental.tasks.callToolStream(
            { name: 'slow', arguments: { marker: 'task', seconds: 0.5 } }, undefined,
            { task: { ttl: 60000 }, timeout: ms(20000) })) {
            kinds.push(m.type);
            if (m.type === 'error') return `error: ${m.error.message}`;
            if (m.type === 'result') result = m.result;
        }
        if (!kinds.includes('taskCreated')) return `no task was created: ${kinds.join(', ')}`;
        return (result && !result.isError) || `the task's result: ${JSON.stringify(result)}`;
    });

    await check('cancel', async () => {
        const marker = `cancel-${process.pid}`;
        const pidFile = join(work, `${marker}.pid`);
        const ac = new AbortController();
        const call = client.callTool({ name: 'slow', arguments: { marker, seconds: 600 } }, undefined,
            { signal: ac.signal, timeout: ms(60000) });
        let settled = false;
        const outcome = call.then((r) => ({ result: r }), (e) => ({ error: e }))
            .finally(() => { settled = true; });
        await waitFor('the slow tool wrote its PID', () => existsSync(pidFile) || settled, ms(10000));
        if (!existsSync(pidFile)) return `the call ended before it started: ${JSON.stringify(await outcome)}`;
        const pid = Number(readFileSync(pidFile, 'utf8'));
        if (!(pid > 1) || gone(pid)) return `PID ${pid} from ${pidFile} is not a running process`;
        ac.abort('the test cancels it');
        const o = await outcome;
        if (!o.error) return `the aborted call resolved: ${JSON.stringify(o.result)}`;
        // SIGTERM ends `sleep` at once; the group gets SIGKILL after 2 s.
        await waitFor(`process ${pid} gone`, () => gone(pid), ms(10000));
        // The server keeps serving after a cancel.
        const res = await client.callTool({ name: 'greet', arguments: { name: 'again' } });
        return textOf(res).includes('hello, again') || `after the cancel: ${JSON.stringify(res)}`;
    });

    await client.close();
}

let code = 0;
try {
    await main();
} catch (e) {
    notOk('run', e && e.stack ? e.stack : e);
    code = 2;
}
cleanup();
process.exit(code || (report.failed ? 1 : 0));
