// SPDX-License-Identifier: MIT
// tests/loop: the scripted model server the agent loop's tests run
// against. It speaks the four model APIs toolgate's loop talks to, on their
// real wire formats, whole and streamed (SSE): OpenAI Chat Completions
// (any path ending in /chat/completions), OpenAI Responses (/responses),
// Anthropic Messages (/messages) and Gemini (/models/M:generateContent,
// :streamGenerateContent, with ?alt=sse or as a JSON array). Request n
// (0-based, counted over every request it receives) is answered with turn n
// of a script (script.mjs): an assistant answer with text and tool calls,
// or an HTTP error in the provider's error shape, optionally delayed, sent
// in small chunks, or cut after some bytes. Every request is logged (JSON
// Lines, keys redacted) before it is answered, so a test can check what the
// loop sent (check_requests.mjs), even after killing it.
//
// node model_server.mjs --script FILE [--port N] [--log FILE] [--stdin-eof]
//                       [--strict]
// prints `listening http://127.0.0.1:PORT` once listening; stops on
// SIGTERM, SIGINT, or the end of stdin with --stdin-eof. --strict answers a
// request whose conversation leaves a tool call unanswered (or answers a
// call it does not make) with the provider's 400, as the real APIs do.
// Only Node's built-in modules: no npm packages.
import http from 'node:http';
import fs from 'node:fs';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseScript, turnFor, isAnswer, callsOf, routeOf, assistantTurns } from './script.mjs';
import { conversationProblems } from './check_requests.mjs';

const MAX_BODY = 64 * 1024 * 1024;
const REDACTED_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key']);

/* ---- Requests ---- */

/* The provider whose error shape answers a request no route takes: the one
 * its path looks like, else OpenAI's. */
function errorShapeOf(path) {
    if (/\/messages$/.test(path)) return 'anthropic';
    if (/\/models\//.test(path) || /^\/v1beta\//.test(path)) return 'gemini';
    return 'openai-chat';
}

/* The value a redacted secret is logged as. */
function redact(v) {
    return `<redacted len=${String(v).length}>`;
}

/* A request's log line (an object): its number, method, path (a `key`
 * query parameter redacted: Gemini takes the API key there too), headers
 * (lower-case names, keys redacted), parsed body (null when not JSON) and
 * the body's length in bytes. */
function logEntry(n, req, body, rawLen) {
    const url = new URL(req.url, 'http://127.0.0.1');
    let path = url.pathname;
    if (url.search) {
        const q = new URLSearchParams(url.search);
        for (const k of [...q.keys()]) if (k.toLowerCase() === 'key') q.set(k, redact(q.get(k)));
        path += `?${q.toString()}`;
    }
    const headers = {};
    for (const [k, v] of Object.entries(req.headers))
        headers[k.toLowerCase()] = REDACTED_HEADERS.has(k.toLowerCase()) ? redact(v) : v;
    return { n, method: req.method, path, headers, body, raw_len: rawLen };
}

/* ---- Errors ---- */

const OPENAI_ERR = {
    400: ['invalid_request_error', null], 401: ['invalid_request_error', 'invalid_api_key'],
    403: ['permission_denied', null], 404: ['invalid_request_error', 'not_found'],
    429: ['requests', 'rate_limit_exceeded'], 500: ['server_error', null], 503: ['server_error', null],
};
const ANTHROPIC_ERR = {
    400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error',
    404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error',
    529: 'overloaded_error',
};
const GEMINI_ERR = {
    400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

/* The JSON error body PROVIDER sends with STATUS and MESSAGE (type and code
 * override the usual ones for OpenAI and Anthropic). New object. */
export function errorBody(provider, status, message, type, code) {
    if (provider === 'anthropic') {
        const t = type || ANTHROPIC_ERR[status] || (status >= 500 ? 'api_error' : 'invalid_request_error');
        return { type: 'error', error: { type: t, message } };
    }
    if (provider === 'gemini') {
        const s = code || GEMINI_ERR[status] || (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
        return { error: { code: status, message, status: s } };
    }
    const [t, c] = OPENAI_ERR[status] || [status >= 500 ? 'server_error' : 'invalid_request_error', null];
    return { error: { message, type: type || t, param: null, code: code !== undefined ? code : c } };
}

/* ---- Answers ---- */

/* Splits s into pieces of at most size characters (whole code points). */
function pieces(s, size) {
    const cps = Array.from(s);
    const out = [];
    for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
    return out;
}

const ARG_PIECE = 7; /* characters of arguments per streamed delta */
const TEXT_PIECE = 12; /* characters of text per streamed delta */
const CREATED = 1767225600; /* a fixed creation time: answers are reproducible */

/* The argument pieces of calls in the order the stream writes them: each
 * call's in turn, or with turn.interleave one piece of each open call in
 * turn. Returns [{i, piece, first, last}]: i the call's index, first/last
 * whether this is its first/last piece (a call with empty arguments has
 * one empty piece). */
function argSchedule(calls, interleave) {
    const per = calls.map((c) => {
        const p = pieces(c.text, ARG_PIECE);
        return p.length ? p : [''];
    });
    const out = [];
    if (!interleave) {
        per.forEach((p, i) => p.forEach((piece, k) => out.push({ i, piece, first: k === 0, last: k === p.length - 1 })));
        return out;
    }
    const max = Math.max(0, ...per.map((p) => p.length));
    for (let k = 0; k < max; k++)
        per.forEach((p, i) => {
            if (k < p.length) out.push({ i, piece: p[k], first: k === 0, last: k === p.length - 1 });
        });
    return out;
}

/* The token counts of an answer: the script's, else about a token per four
 * bytes of request and of answer (at least 1). */
function usageOf(turn, rawLen, calls) {
    const outLen = (turn.text || '').length + calls.reduce((a, c) => a + c.name.length + c.text.length, 0);
    return {
        input: turn.usage?.input ?? Math.max(1, Math.ceil(rawLen / 4)),
        output: turn.usage?.output ?? Math.max(1, Math.ceil(outLen / 4)),
    };
}

function sse(events, eol = '\n') {
    return events.map((e) => (e.event ? `event: ${e.event}${eol}` : '') + `data: ${e.data}${eol}${eol}`).join('');
}

/* OpenAI Chat Completions: a chat.completion, or its chat.completion.chunk
 * stream ending in `data: [DONE]` (usage in a last chunk when the request
 * asked for it with stream_options.include_usage, as the API does). */
function chatAnswer(turn, ctx, calls, usage) {
    const id = `chatcmpl-tg${ctx.n}`;
    const finish = calls.length ? 'tool_calls' : 'stop';
    const u = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
    if (!ctx.stream) {
        const message = { role: 'assistant', content: turn.text ?? null };
        if (calls.length)
            message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.text } }));
        message.refusal = null;
        return {
            id, object: 'chat.completion', created: CREATED, model: ctx.model,
            choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage: u,
        };
    }
    const withUsage = ctx.body?.stream_options?.include_usage === true;
    const chunk = (delta, finishReason = null) => {
        const c = {
            id, object: 'chat.completion.chunk', created: CREATED, model: ctx.model,
            choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        };
        if (withUsage) c.usage = null;
        return { data: JSON.stringify(c) };
    };
    const ev = [chunk({ role: 'assistant', content: turn.text !== undefined ? '' : null, refusal: null })];
    for (const p of pieces(turn.text ?? '', TEXT_PIECE)) ev.push(chunk({ content: p }));
    for (const s of argSchedule(calls, turn.interleave)) {
        const c = calls[s.i];
        const tc = s.first
            ? { index: s.i, id: c.id, type: 'function', function: { name: c.name, arguments: s.piece } }
            : { index: s.i, function: { arguments: s.piece } };
        ev.push(chunk({ tool_calls: [tc] }));
    }
    ev.push(chunk({}, finish));
    if (withUsage)
        ev.push({ data: JSON.stringify({ id, object: 'chat.completion.chunk', created: CREATED, model: ctx.model, choices: [], usage: u }) });
    ev.push({ data: '[DONE]' });
    return sse(ev);
}

/* OpenAI Responses: a response whose output holds a message item (the
 * text) and function_call items, or its response.* event stream. */
function responsesAnswer(turn, ctx, calls, usage) {
    const rid = `resp_tg${ctx.n}`;
    const u = { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input + usage.output };
    const msgItem = (status, text) => ({
        id: `msg_tg${ctx.n}`, type: 'message', status, role: 'assistant',
        content: text === null ? [] : [{ type: 'output_text', text, annotations: [] }],
    });
    const fcItem = (c, i, status, args) => ({
        id: `fc_tg${ctx.n}_${i}`, type: 'function_call', status, arguments: args, call_id: c.id, name: c.name,
    });
    const output = [];
    if (turn.text !== undefined) output.push(msgItem('completed', turn.text));
    calls.forEach((c, i) => output.push(fcItem(c, i, 'completed', c.text)));
    const response = (status, out, us) => ({
        id: rid, object: 'response', created_at: CREATED, status, error: null, incomplete_details: null,
        model: ctx.model, output: out, parallel_tool_calls: true, previous_response_id: ctx.body?.previous_response_id ?? null,
        usage: us,
    });
    if (!ctx.stream) return response('completed', output, u);
    let seq = 0;
    const ev = [];
    const push = (type, fields) => ev.push({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...fields }) });
    push('response.created', { response: response('in_progress', [], null) });
    push('response.in_progress', { response: response('in_progress', [], null) });
    const base = turn.text !== undefined ? 1 : 0;
    if (turn.text !== undefined) {
        const item_id = `msg_tg${ctx.n}`;
        push('response.output_item.added', { output_index: 0, item: msgItem('in_progress', null) });
        push('response.content_part.added', { item_id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        for (const p of pieces(turn.text, TEXT_PIECE))
            push('response.output_text.delta', { item_id, output_index: 0, content_index: 0, delta: p });
        push('response.output_text.done', { item_id, output_index: 0, content_index: 0, text: turn.text });
        push('response.content_part.done', { item_id, output_index: 0, content_index: 0, part: { type: 'output_text', text: turn.text, annotations: [] } });
        push('response.output_item.done', { output_index: 0, item: msgItem('completed', turn.text) });
    }
    /* Interleaved, every call's item is added before the first piece. */
    if (turn.interleave)
        calls.forEach((c, i) => push('response.output_item.added', { output_index: base + i, item: fcItem(c, i, 'in_progress', '') }));
    for (const s of argSchedule(calls, turn.interleave)) {
        const c = calls[s.i];
        const oi = base + s.i;
        const item_id = `fc_tg${ctx.n}_${s.i}`;
        if (s.first && !turn.interleave)
            push('response.output_item.added', { output_index: oi, item: fcItem(c, s.i, 'in_progress', '') });
        if (s.piece !== '') push('response.function_call_arguments.delta', { item_id, output_index: oi, delta: s.piece });
        if (s.last) {
            push('response.function_call_arguments.done', { item_id, output_index: oi, name: c.name, arguments: c.text });
            push('response.output_item.done', { output_index: oi, item: fcItem(c, s.i, 'completed', c.text) });
        }
    }
    push('response.completed', { response: response('completed', output, u) });
    return sse(ev);
}

/* Anthropic Messages: a message of text and tool_use blocks, or its event
 * stream (message_start, a ping, content_block_start/delta/stop,
 * message_delta, message_stop). */
function anthropicAnswer(turn, ctx, calls, usage) {
    const mid = `msg_tg${ctx.n}`;
    const stop = calls.length ? 'tool_use' : 'end_turn';
    if (!ctx.stream) {
        const content = [];
        if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
        /* A string that is not JSON has no object to send: the API never
         * does this, a hostile proxy might; it goes as the string. */
        for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.value !== undefined ? c.value : c.text });
        return {
            id: mid, type: 'message', role: 'assistant', model: ctx.model, content, stop_reason: stop,
            stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: usage.output },
        };
    }
    const ev = [];
    const push = (type, fields) => ev.push({ event: type, data: JSON.stringify({ type, ...fields }) });
    push('message_start', {
        message: {
            id: mid, type: 'message', role: 'assistant', model: ctx.model, content: [], stop_reason: null,
            stop_sequence: null, usage: { input_tokens: usage.input, output_tokens: 1 },
        },
    });
    push('ping', {});
    const base = turn.text !== undefined ? 1 : 0;
    if (turn.text !== undefined) {
        push('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        for (const p of pieces(turn.text, TEXT_PIECE)) push('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } });
        push('content_block_stop', { index: 0 });
    }
    for (const s of argSchedule(calls, turn.interleave)) {
        const c = calls[s.i];
        if (s.first) push('content_block_start', { index: base + s.i, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
        push('content_block_delta', { index: base + s.i, delta: { type: 'input_json_delta', partial_json: s.piece } });
        if (s.last) push('content_block_stop', { index: base + s.i });
    }
    push('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } });
    push('message_stop', {});
    return sse(ev);
}

/* Gemini: a GenerateContentResponse whose candidate's parts hold the text
 * and functionCall parts (an id only where the script gives one), or the
 * stream of them: the text in pieces, the calls whole in the last chunk
 * with the finishReason, as SSE (CRLF line ends: a client's SSE reader must
 * take them) or
 * as one JSON array. */
function geminiAnswer(turn, ctx, calls, usage) {
    const um = { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output };
    const callParts = calls.map((c) => {
        const fc = { name: c.name, args: c.value !== undefined ? c.value : c.text };
        if (c.id !== null) fc.id = c.id;
        return { functionCall: fc };
    });
    const chunk = (parts, finish) => {
        const cand = { content: { parts, role: 'model' }, index: 0 };
        if (finish) cand.finishReason = 'STOP';
        return { candidates: [cand], usageMetadata: um, modelVersion: ctx.model, responseId: `tg${ctx.n}` };
    };
    if (ctx.stream === 'none') {
        const parts = turn.text !== undefined ? [{ text: turn.text }] : [];
        return chunk(parts.concat(callParts), true);
    }
    const texts = pieces(turn.text ?? '', TEXT_PIECE);
    const chunks = texts.slice(0, -1).map((t) => chunk([{ text: t }], false));
    const lastParts = texts.length ? [{ text: texts[texts.length - 1] }] : [];
    if (!lastParts.length && !callParts.length) lastParts.push({ text: '' });
    chunks.push(chunk(lastParts.concat(callParts), true));
    if (ctx.stream === 'json-array') return `[${chunks.map((c) => JSON.stringify(c)).join(',\r\n')}]`;
    return sse(chunks.map((c) => ({ data: JSON.stringify(c) })), '\r\n');
}

/* The answer of turn (not an error turn) to a request: {status, headers,
 * body (a string), streamed}. ctx: {n, provider, stream, model, body,
 * rawLen}. */
export function renderAnswer(turn, ctx) {
    const calls = callsOf(turn, ctx.n, ctx.provider);
    const usage = usageOf(turn, ctx.rawLen, calls);
    const fn = { 'openai-chat': chatAnswer, 'openai-responses': responsesAnswer, anthropic: anthropicAnswer, gemini: geminiAnswer }[ctx.provider];
    const out = fn(turn, ctx, calls, usage);
    if (typeof out !== 'string') return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(out), streamed: false };
    const json = ctx.stream === 'json-array';
    return {
        status: 200,
        headers: json ? { 'content-type': 'application/json' } : { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
        body: out,
        streamed: true,
    };
}

/* ---- The server ---- */

function sendJson(res, status, obj, headers = {}) {
    const body = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));

/* Writes buf to res, waiting for the socket to drain when it is full. */
function write(res, buf) {
    return new Promise((resolve) => {
        if (res.write(buf)) resolve();
        else res.once('drain', resolve);
    });
}

/* Sends an answer: whole, in chunk_bytes pieces with a turn of the event
 * loop (or chunk_delay_ms) between them, or its first cut_after_bytes bytes followed by the
 * connection's end (the socket destroyed: the client sees a transfer cut
 * short). */
async function sendAnswer(res, turn, a) {
    const body = Buffer.from(a.body);
    const cut = turn.cut_after_bytes !== undefined && turn.cut_after_bytes < body.length ? turn.cut_after_bytes : -1;
    const headers = { ...a.headers, ...(turn.headers || {}) };
    /* Streams go chunked like the real APIs'; a whole answer has its
     * length, so a cut one is short of it. */
    if (!a.streamed) headers['content-length'] = body.length;
    res.writeHead(a.status, headers);
    const end = cut >= 0 ? cut : body.length;
    const step = turn.chunk_bytes || end || 1;
    if (end === 0) res.flushHeaders();
    for (let off = 0; off < end; off += step) {
        await write(res, body.subarray(off, Math.min(end, off + step)));
        if (turn.chunk_bytes && off + step < end) await (turn.chunk_delay_ms ? sleep(turn.chunk_delay_ms) : tick());
    }
    if (cut < 0) {
        res.end();
        return;
    }
    /* Let what was written leave before the socket goes. */
    await new Promise((r) => res.write('', r));
    res.socket?.destroy();
}

/* Starts the server for script on 127.0.0.1:port; logFile (or null) gets
 * one line per request. Returns the http.Server (listening when its
 * 'listening' event fires). */
export function startServer({ script, port = 0, logFile = null, strict = false }) {
    let next = 0;
    const server = http.createServer((req, res) => {
        const n = next++;
        const chunks = [];
        let size = 0;
        let tooBig = false;
        req.on('data', (d) => {
            size += d.length;
            if (size > MAX_BODY) tooBig = true;
            else chunks.push(d);
        });
        req.on('error', () => {});
        req.on('end', () => {
            handle(n, req, res, tooBig ? null : Buffer.concat(chunks), size).catch((e) => {
                process.stderr.write(`model_server: request ${n}: ${e.stack || e}\n`);
                res.socket?.destroy();
            });
        });
    });

    async function handle(n, req, res, raw, rawLen) {
        const url = new URL(req.url, 'http://127.0.0.1');
        const route = routeOf(req.method, url.pathname, url.searchParams);
        let body = null;
        if (raw !== null && raw.length) {
            try {
                body = JSON.parse(raw.toString('utf8'));
            } catch {
                body = null;
            }
        }
        if (logFile) fs.appendFileSync(logFile, JSON.stringify(logEntry(n, req, body, rawLen)) + '\n');
        if (!route) {
            sendJson(res, 404, errorBody(errorShapeOf(url.pathname), 404, `no such endpoint: ${req.method} ${url.pathname}`));
            return;
        }
        const p = route.provider;
        if (raw === null) {
            sendJson(res, 413, errorBody(p, 413, `the request body is over ${MAX_BODY} bytes`));
            return;
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
            sendJson(res, 400, errorBody(p, 400, 'the request body is not a JSON object'));
            return;
        }
        if (strict) {
            const priorCalls = (rid) => {
                const m = /^resp_tg([0-9]+)$/.exec(rid);
                return m ? callsOf(turnFor(script, Number(m[1])), Number(m[1]), p).map((c) => c.id) : null;
            };
            const probs = conversationProblems(p, body, { priorCalls });
            if (probs.length) {
                sendJson(res, 400, errorBody(p, 400, probs.join('; ')));
                return;
            }
        }
        const tn = script.by_conversation ? assistantTurns(p, body) : n;
        const turn = turnFor(script, tn);
        if (turn?.delay_ms) await sleep(turn.delay_ms);
        if (turn === null) {
            sendJson(res, 500, errorBody(p, 500, `script exhausted: request ${n}, the script has ${script.turns.length} turns`));
            return;
        }
        if (!isAnswer(turn)) {
            sendJson(res, turn.status, errorBody(p, turn.status, turn.error ?? `scripted error ${turn.status}`, turn.type, turn.code), turn.headers || {});
            return;
        }
        const stream = p === 'gemini' ? route.stream : body.stream === true ? 'sse' : null;
        const model = route.model ?? (typeof body.model === 'string' ? body.model : 'scripted-model');
        const a = renderAnswer(turn, { n: tn, provider: p, stream, model, body, rawLen });
        await sendAnswer(res, turn, a);
    }
    /* A loop may wait long between requests (a slow tool): the connection
     * it keeps stays open for it rather than closing under a request. */
    server.keepAliveTimeout = 600000;
    server.headersTimeout = 601000;
    server.listen(port, '127.0.0.1');
    return server;
}

function usage(msg) {
    process.stderr.write(`model_server: ${msg}\nusage: node model_server.mjs --script FILE [--port N] [--log FILE] [--stdin-eof] [--strict]\n`);
    process.exit(2);
}

function main(argv) {
    const opt = { port: 0, logFile: null, stdinEof: false, strict: false, scriptFile: null };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const val = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
        if (a === '--script') opt.scriptFile = val();
        else if (a === '--log') opt.logFile = val();
        else if (a === '--port') {
            const v = val();
            if (!/^[0-9]{1,5}$/.test(v) || Number(v) > 65535) usage(`--port must be 0..65535, not '${v}'`);
            opt.port = Number(v);
        } else if (a === '--stdin-eof') opt.stdinEof = true;
        else if (a === '--strict') opt.strict = true;
        else usage(`unknown argument '${a}'`);
    }
    if (!opt.scriptFile) usage('--script FILE is required');
    let script;
    try {
        script = parseScript(fs.readFileSync(opt.scriptFile, 'utf8'));
    } catch (e) {
        process.stderr.write(`model_server: ${opt.scriptFile}: ${e.message}\n`);
        process.exit(2);
    }
    if (opt.logFile) {
        try {
            fs.appendFileSync(opt.logFile, '');
        } catch (e) {
            process.stderr.write(`model_server: --log ${opt.logFile}: ${e.message}\n`);
            process.exit(2);
        }
    }
    const server = startServer({ script, port: opt.port, logFile: opt.logFile, strict: opt.strict });
    server.on('error', (e) => {
        process.stderr.write(`model_server: ${e.message}\n`);
        process.exit(1);
    });
    server.on('listening', () => {
        fs.writeSync(1, `listening http://127.0.0.1:${server.address().port}\n`);
    });
    const stop = () => process.exit(0);
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    if (opt.stdinEof) {
        process.stdin.on('end', stop);
        process.stdin.resume();
    }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) main(process.argv.slice(2));
