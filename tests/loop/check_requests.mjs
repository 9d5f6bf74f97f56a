// SPDX-License-Identifier: MIT
// tests/loop: checks the requests an agent loop sent to the scripted model
// server (model_server.mjs --log FILE) for the invariant every provider
// enforces: in each request's conversation, every tool call of an
// assistant turn is answered by exactly one tool result with its id, in
// the provider's format and place (OpenAI Chat: the role:"tool" messages
// right after the assistant message, tool_call_id; Responses: a later
// function_call_output item, call_id; Anthropic: tool_result blocks in the
// next message, a user message, before any other block, tool_use_id; Gemini: functionResponse parts
// in the next content, by id when the call has one, else by name in order),
// nothing dangling and no result without its call. Given the server's
// script too, it checks that the calls the server sent in turn k (an
// answer that was not cut) are in every later request's conversation.
//
// node check_requests.mjs LOG PROVIDER [--script FILE]
//   PROVIDER: openai-chat (or openai), openai-responses, anthropic, gemini.
//   Prints each problem and exits 1, or a one-line summary and exits 0;
//   2 for a usage error or an unreadable log or script.
// As a library: conversationProblems(provider, body, opts) and
// checkLog(entries, provider, opts).
import fs from 'node:fs';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseScript, providerName, turnFor, isAnswer, callsOf, routeOf } from './script.mjs';

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const q = (s) => JSON.stringify(s);

/* The calls and results of one request's conversation, in order:
 * {calls: [{id, name, where}], problems: [string]} per provider. */

function chatProblems(body, out) {
    const msgs = body.messages;
    if (!Array.isArray(msgs)) return out.problems.push('no "messages" array');
    for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i];
        if (!isObj(m)) continue;
        if (m.role === 'tool') {
            out.problems.push(`messages[${i}]: a tool result for ${q(m.tool_call_id)} with no assistant tool call right before it`);
            continue;
        }
        if (m.role !== 'assistant' || !Array.isArray(m.tool_calls) || !m.tool_calls.length) continue;
        const pending = new Map();
        m.tool_calls.forEach((c, j) => {
            const id = c?.id;
            const name = c?.function?.name;
            if (typeof id !== 'string') out.problems.push(`messages[${i}].tool_calls[${j}]: no id`);
            else if (pending.has(id)) out.problems.push(`messages[${i}]: tool call id ${q(id)} twice`);
            else pending.set(id, name);
            out.calls.push({ id, name, where: `messages[${i}]` });
        });
        let k = i + 1;
        for (; k < msgs.length && isObj(msgs[k]) && msgs[k].role === 'tool'; k++) {
            const id = msgs[k].tool_call_id;
            if (!pending.has(id))
                out.problems.push(`messages[${k}]: a tool result for ${q(id)}, which messages[${i}] does not call (or answered already)`);
            else pending.delete(id);
            out.results++;
        }
        for (const id of pending.keys())
            out.problems.push(`messages[${i}]: tool call ${q(id)} has no role:"tool" message after it`);
        i = k - 1;
    }
}

function responsesProblems(body, out, opts) {
    const items = typeof body.input === 'string' ? [] : body.input;
    if (!Array.isArray(items)) return out.problems.push('no "input" string or array');
    const pending = new Map();
    const prev = body.previous_response_id;
    if (typeof prev === 'string') {
        const ids = opts.priorCalls ? opts.priorCalls(prev) : null;
        if (ids === null) out.problems.push(`previous_response_id ${q(prev)}: its calls are unknown here (give the script)`);
        else for (const id of ids) pending.set(id, `the response ${prev}`);
    }
    items.forEach((it, i) => {
        if (!isObj(it)) return;
        if (it.type === 'function_call') {
            if (typeof it.call_id !== 'string') out.problems.push(`input[${i}]: a function_call without call_id`);
            else if (pending.has(it.call_id)) out.problems.push(`input[${i}]: call_id ${q(it.call_id)} twice`);
            else pending.set(it.call_id, `input[${i}]`);
            out.calls.push({ id: it.call_id, name: it.name, where: `input[${i}]` });
        } else if (it.type === 'function_call_output') {
            if (!pending.has(it.call_id))
                out.problems.push(`input[${i}]: a function_call_output for ${q(it.call_id)} with no function_call before it (or answered already)`);
            else pending.delete(it.call_id);
            out.results++;
        }
    });
    for (const [id, where] of pending) out.problems.push(`${where}: function_call ${q(id)} has no function_call_output`);
}

function anthropicProblems(body, out) {
    const msgs = body.messages;
    if (!Array.isArray(msgs)) return out.problems.push('no "messages" array');
    const blocks = (m) => (isObj(m) && Array.isArray(m.content) ? m.content.filter(isObj) : []);
    let pending = null; /* the previous assistant message's tool_use ids */
    let from = -1;
    msgs.forEach((m, i) => {
        const results = m?.role === 'user' ? blocks(m).filter((b) => b.type === 'tool_result') : [];
        /* The API takes tool_result blocks only before any other content of
         * their message. */
        const other = blocks(m).findIndex((b) => b.type !== 'tool_result');
        if (results.length && other >= 0 && other < blocks(m).findLastIndex((b) => b.type === 'tool_result'))
            out.problems.push(`messages[${i}]: a tool_result after other content (tool_result blocks come first)`);
        for (const r of results) {
            if (!pending || !pending.has(r.tool_use_id))
                out.problems.push(`messages[${i}]: a tool_result for ${q(r.tool_use_id)}, which the message before it does not call (or answered already)`);
            else pending.delete(r.tool_use_id);
            out.results++;
        }
        if (pending) for (const id of pending.keys()) out.problems.push(`messages[${from}]: tool_use ${q(id)} has no tool_result in the next message`);
        pending = null;
        if (m?.role !== 'assistant') return;
        const uses = blocks(m).filter((b) => b.type === 'tool_use');
        if (!uses.length) return;
        pending = new Map();
        from = i;
        for (const u of uses) {
            if (typeof u.id !== 'string') out.problems.push(`messages[${i}]: a tool_use block without id`);
            else if (pending.has(u.id)) out.problems.push(`messages[${i}]: tool_use id ${q(u.id)} twice`);
            else pending.set(u.id, u.name);
            out.calls.push({ id: u.id, name: u.name, where: `messages[${i}]` });
        }
    });
    if (pending) for (const id of pending.keys()) out.problems.push(`messages[${from}]: tool_use ${q(id)} has no tool_result in the next message`);
}

function geminiProblems(body, out) {
    const contents = body.contents;
    if (!Array.isArray(contents)) return out.problems.push('no "contents" array');
    const parts = (c) => (isObj(c) && Array.isArray(c.parts) ? c.parts.filter(isObj) : []);
    let pending = null; /* [{id, name, done}] of the previous model content */
    let from = -1;
    const flush = () => {
        if (pending)
            for (const p of pending.filter((x) => !x.done))
                out.problems.push(`contents[${from}]: functionCall ${q(p.name)}${p.id ? ` (id ${q(p.id)})` : ''} has no functionResponse in the next content`);
        pending = null;
    };
    contents.forEach((c, i) => {
        const resps = parts(c).filter((p) => isObj(p.functionResponse)).map((p) => p.functionResponse);
        for (const r of resps) {
            const hit = pending?.find((p) => !p.done && p.name === r.name && (p.id ? p.id === r.id : true));
            if (!hit)
                out.problems.push(`contents[${i}]: a functionResponse for ${q(r.name)}${r.id ? ` (id ${q(r.id)})` : ''} with no functionCall in the content before it (or answered already)`);
            else hit.done = true;
            out.results++;
        }
        flush();
        if (c?.role !== 'model') return;
        const calls = parts(c).filter((p) => isObj(p.functionCall)).map((p) => p.functionCall);
        if (!calls.length) return;
        from = i;
        pending = calls.map((f) => ({ id: typeof f.id === 'string' ? f.id : null, name: f.name, done: false }));
        const seen = new Set();
        for (const p of pending) {
            if (p.id && seen.has(p.id)) out.problems.push(`contents[${i}]: functionCall id ${q(p.id)} twice`);
            if (p.id) seen.add(p.id);
            out.calls.push({ id: p.id, name: p.name, where: `contents[${i}]` });
        }
    });
    flush();
}

const CHECKERS = {
    'openai-chat': chatProblems, 'openai-responses': responsesProblems, anthropic: anthropicProblems, gemini: geminiProblems,
};

/* Reads one request body (a parsed JSON object) of PROVIDER and returns
 * {calls: [{id, name, where}], results: count, problems: [string]}: the
 * tool calls its conversation holds and what breaks the invariant. opts:
 * {priorCalls(responseId) → [call ids] or null} for Responses requests
 * chained with previous_response_id. New object. */
export function readConversation(provider, body, opts = {}) {
    const out = { calls: [], results: 0, problems: [] };
    if (!isObj(body)) out.problems.push('the body is not a JSON object');
    else CHECKERS[provider](body, out, opts);
    return out;
}

/* The problems of one request body: [] when every call is answered and
 * every result has its call. New array. */
export function conversationProblems(provider, body, opts = {}) {
    return readConversation(provider, body, opts).problems;
}

/* Checks a server log (entries: parsed log lines) for PROVIDER: every
 * request of that provider's endpoint, and, when opts.script is given (a
 * parsed script), that the calls each answered (and not cut) turn sent are
 * in every later request's conversation. Returns {problems: [string],
 * summary: string}. */
export function checkLog(entries, provider, opts = {}) {
    const script = opts.script ?? null;
    const problems = [];
    const mine = entries
        .filter((e) => isObj(e) && Number.isInteger(e.n))
        .filter((e) => {
            let u;
            try {
                u = new URL(String(e.path), 'http://127.0.0.1');
            } catch {
                return false;
            }
            return routeOf(e.method, u.pathname, u.searchParams)?.provider === provider;
        })
        .sort((a, b) => a.n - b.n);
    /* The calls sent with each answered turn that was not cut. */
    const sent = new Map();
    if (script)
        for (const e of mine) {
            const t = turnFor(script, e.n);
            if (isAnswer(t) && t.cut_after_bytes === undefined && isObj(e.body)) sent.set(e.n, callsOf(t, e.n, provider));
        }
    const priorCalls = (rid) => {
        const m = /^resp_tg([0-9]+)$/.exec(rid);
        if (!m || !script) return null;
        return callsOf(turnFor(script, Number(m[1])), Number(m[1]), provider).map((c) => c.id);
    };
    /* A Responses request's context goes on through previous_response_id:
     * the calls of request k's input and of its answer. */
    const byN = new Map(mine.map((e) => [e.n, e]));
    const chainIds = (body, depth = 0) => {
        const ids = new Set();
        const prev = body?.previous_response_id;
        const m = typeof prev === 'string' ? /^resp_tg([0-9]+)$/.exec(prev) : null;
        if (!m || depth > 10000) return ids;
        const k = Number(m[1]);
        for (const id of priorCalls(prev) || []) ids.add(id);
        const e = byN.get(k);
        if (e) {
            for (const c of readConversation(provider, e.body, { priorCalls: () => [] }).calls) ids.add(c.id);
            for (const id of chainIds(e.body, depth + 1)) ids.add(id);
        }
        return ids;
    };
    let calls = 0;
    let results = 0;
    let checkedBodies = 0;
    for (const e of mine) {
        if (!isObj(e.body)) continue;
        checkedBodies++;
        const conv = readConversation(provider, e.body, { priorCalls });
        calls += conv.calls.length;
        results += conv.results;
        for (const p of conv.problems) problems.push(`request ${e.n}: ${p}`);
        /* What earlier turns sent must be there. */
        const ids = new Set(conv.calls.map((c) => c.id));
        for (const id of chainIds(e.body)) ids.add(id);
        const nameSeqs = new Set();
        if (provider === 'gemini')
            for (const c of e.body.contents ?? [])
                if (c?.role === 'model' && Array.isArray(c.parts))
                    nameSeqs.add(c.parts.filter((p) => isObj(p?.functionCall)).map((p) => p.functionCall.name).join('\0'));
        for (const [k, sc] of sent) {
            if (k >= e.n || !sc.length) continue;
            if (sc.every((c) => c.id === null)) {
                const seq = sc.map((c) => c.name).join('\0');
                if (!nameSeqs.has(seq)) problems.push(`request ${e.n}: the ${sc.length} functionCall(s) of turn ${k} (${sc.map((c) => c.name).join(', ')}) are not in its contents`);
                continue;
            }
            for (const c of sc)
                if (c.id !== null && !ids.has(c.id))
                    problems.push(`request ${e.n}: the call ${q(c.id)} (${c.name}) the server sent in turn ${k} is not in its conversation`);
        }
    }
    const summary = `check_requests: ${provider}: ${checkedBodies} requests, ${calls} tool calls in their conversations, ${results} results, ` +
        (script ? `${[...sent.values()].reduce((a, s) => a + s.length, 0)} calls sent in ${[...sent.values()].filter((s) => s.length).length} turns carried on, ` : '') +
        'nothing dangling';
    return { problems, summary };
}

function usage(msg) {
    process.stderr.write(`check_requests: ${msg}\nusage: node check_requests.mjs LOG PROVIDER [--script FILE]\n`);
    process.exit(2);
}

function main(argv) {
    const pos = [];
    let scriptFile = null;
    let provider = null;
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--script') scriptFile = argv[++i] ?? usage('--script needs a value');
        else if (argv[i] === '--provider') provider = argv[++i] ?? usage('--provider needs a value');
        else if (argv[i].startsWith('--')) usage(`unknown option '${argv[i]}'`);
        else pos.push(argv[i]);
    }
    if (provider === null && pos.length === 2) provider = pos.pop();
    if (pos.length !== 1 || provider === null) usage('give the log file and the provider');
    const p = providerName(provider);
    if (!p) usage(`unknown provider '${provider}' (openai-chat, openai-responses, anthropic, gemini)`);
    let entries;
    let script = null;
    try {
        entries = fs.readFileSync(pos[0], 'utf8').split('\n').filter((l) => l.trim() !== '')
            .map((l, i) => {
                try {
                    return JSON.parse(l);
                } catch (e) {
                    throw new Error(`line ${i + 1} is not JSON: ${e.message}`);
                }
            });
        if (scriptFile) script = parseScript(fs.readFileSync(scriptFile, 'utf8'));
    } catch (e) {
        process.stderr.write(`check_requests: ${e.message}\n`);
        process.exit(2);
    }
    const { problems, summary } = checkLog(entries, p, { script });
    if (problems.length) {
        for (const pr of problems) process.stdout.write(`${pr}\n`);
        process.stdout.write(`check_requests: ${p}: ${problems.length} problem(s)\n`);
        process.exit(1);
    }
    process.stdout.write(`${summary}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) main(process.argv.slice(2));
