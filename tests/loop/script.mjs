// SPDX-License-Identifier: MIT
// tests/loop: the script of the scripted model server (model_server.mjs)
// and what it means, shared with the request checker (check_requests.mjs):
// reading and validating a script file, which turn answers request n, and
// the tool calls a turn sends, with the ids the server gives calls the
// script left without one. Plain Node.js, no npm packages.

/* The providers the server speaks, by the names toolgate's formats use,
 * and the names `toolgate agent --provider` takes for them. */
export const PROVIDERS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];
const ALIASES = { openai: 'openai-chat', chat: 'openai-chat', responses: 'openai-responses' };

/* Which API a request is for: {provider, stream, model} from its method,
 * path (without the query) and query, or null when it is for none. stream
 * is 'sse', 'json-array' (Gemini's streamGenerateContent without alt=sse)
 * or null (decided by the body's "stream" for the others). */
export function routeOf(method, path, query) {
    if (method !== 'POST') return null;
    if (path.endsWith('/chat/completions')) return { provider: 'openai-chat', stream: null, model: null };
    if (path.endsWith('/responses')) return { provider: 'openai-responses', stream: null, model: null };
    if (path.endsWith('/messages')) return { provider: 'anthropic', stream: null, model: null };
    const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(path);
    if (m) {
        const stream = m[2] === 'generateContent' ? 'none' : query.get('alt') === 'sse' ? 'sse' : 'json-array';
        return { provider: 'gemini', stream, model: decodeURIComponent(m[1]) };
    }
    return null;
}

/* The canonical provider name for NAME (an alias or a canonical name), or
 * null when NAME names none. */
export function providerName(name) {
    const p = ALIASES[name] || name;
    return PROVIDERS.includes(p) ? p : null;
}

const TURN_KEYS = new Set(['text', 'calls', 'usage', 'cut_after_bytes', 'delay_ms',
    'chunk_bytes', 'chunk_delay_ms', 'interleave', 'status', 'headers', 'error', 'type', 'code']);

function bad(where, what) {
    throw new Error(`${where}: ${what}`);
}

function wholeAtLeast(v, min, where, key) {
    if (v === undefined) return;
    if (!Number.isInteger(v) || v < min) bad(where, `"${key}" must be a whole number >= ${min}`);
}

/* Checks one turn (turns[i]) and throws an Error naming it and what is
 * wrong. */
function checkTurn(t, i) {
    const where = `turns[${i}]`;
    if (t === null || typeof t !== 'object' || Array.isArray(t)) bad(where, 'a turn must be an object');
    for (const k of Object.keys(t)) if (!TURN_KEYS.has(k)) bad(where, `unknown key "${k}"`);
    wholeAtLeast(t.delay_ms, 0, where, 'delay_ms');
    if (t.headers !== undefined) {
        if (t.headers === null || typeof t.headers !== 'object' || Array.isArray(t.headers))
            bad(where, '"headers" must be an object of strings');
        for (const [k, v] of Object.entries(t.headers))
            if (typeof v !== 'string') bad(where, `headers["${k}"] must be a string`);
    }
    if (t.status !== undefined) {
        if (!Number.isInteger(t.status) || t.status < 400 || t.status > 599)
            bad(where, '"status" must be an HTTP error status (400..599)');
        if (t.error !== undefined && typeof t.error !== 'string') bad(where, '"error" must be a string');
        for (const k of ['text', 'calls', 'usage', 'cut_after_bytes', 'chunk_bytes', 'chunk_delay_ms', 'interleave'])
            if (t[k] !== undefined) bad(where, `an error turn ("status") cannot have "${k}"`);
        return;
    }
    for (const k of ['error', 'type', 'code'])
        if (t[k] !== undefined) bad(where, `"${k}" belongs to an error turn (one with "status")`);
    if (t.text !== undefined && typeof t.text !== 'string') bad(where, '"text" must be a string');
    wholeAtLeast(t.cut_after_bytes, 0, where, 'cut_after_bytes');
    wholeAtLeast(t.chunk_bytes, 1, where, 'chunk_bytes');
    wholeAtLeast(t.chunk_delay_ms, 0, where, 'chunk_delay_ms');
    if (t.interleave !== undefined && typeof t.interleave !== 'boolean') bad(where, '"interleave" must be a boolean');
    if (t.usage !== undefined) {
        if (t.usage === null || typeof t.usage !== 'object') bad(where, '"usage" must be an object');
        wholeAtLeast(t.usage.input, 0, where, 'usage.input');
        wholeAtLeast(t.usage.output, 0, where, 'usage.output');
    }
    if (t.calls === undefined) return;
    if (!Array.isArray(t.calls)) bad(where, '"calls" must be an array');
    t.calls.forEach((c, j) => {
        const w = `${where}.calls[${j}]`;
        if (c === null || typeof c !== 'object' || Array.isArray(c)) bad(w, 'a call must be an object');
        if (typeof c.name !== 'string' || c.name === '') bad(w, '"name" must be a non-empty string');
        if (c.id !== undefined && (typeof c.id !== 'string' || c.id === '')) bad(w, '"id" must be a non-empty string');
        const a = c.arguments;
        if (a !== undefined && typeof a !== 'string' && (a === null || typeof a !== 'object' || Array.isArray(a)))
            bad(w, '"arguments" must be an object (or a string sent verbatim)');
    });
}

/* Parses and validates a script's text ({"turns": [...], "repeat_last":
 * bool}); returns the script object (the caller owns it) or throws an Error
 * saying what is wrong and where. */
export function parseScript(text) {
    let s;
    try {
        s = JSON.parse(text);
    } catch (e) {
        throw new Error(`the script is not JSON: ${e.message}`);
    }
    if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new Error('the script must be a JSON object');
    for (const k of Object.keys(s))
        if (k !== 'turns' && k !== 'repeat_last' && k !== 'by_conversation')
            throw new Error(`the script has an unknown key "${k}"`);
    if (s.by_conversation !== undefined && typeof s.by_conversation !== 'boolean')
        throw new Error('"by_conversation" must be a boolean');
    if (!Array.isArray(s.turns)) throw new Error('the script needs "turns", an array');
    if (s.repeat_last !== undefined && typeof s.repeat_last !== 'boolean')
        throw new Error('"repeat_last" must be a boolean');
    if (s.repeat_last && s.turns.length === 0) throw new Error('"repeat_last" needs at least one turn');
    s.turns.forEach(checkTurn);
    return s;
}

/* The turn answering request number n (0-based), or null when the script is
 * exhausted. Borrowed from the script. */
export function turnFor(script, n) {
    if (n < script.turns.length) return script.turns[n];
    return script.repeat_last ? script.turns[script.turns.length - 1] : null;
}

/* The number of assistant turns in a request's conversation (body, a
 * PROVIDER request): which turn answers it when the script says
 * "by_conversation", so that a client that died and sends a request again
 * (a resumed loop) gets the same answer, whatever the count of requests.
 * OpenAI Responses: each run of output items (function_call, assistant
 * message) counts once. */
export function assistantTurns(provider, body) {
    const list = provider === 'openai-chat' || provider === 'anthropic' ? body.messages
        : provider === 'gemini' ? body.contents : body.input;
    if (!Array.isArray(list)) return 0;
    if (provider === 'openai-responses') {
        let turns = 0, inTurn = false;
        for (const it of list) {
            const out = it && (it.type === 'function_call' || it.type === 'reasoning' ||
                (it.role === 'assistant'));
            if (out && !inTurn) turns++;
            inTurn = !!out;
        }
        return turns;
    }
    const role = provider === 'gemini' ? 'model' : 'assistant';
    return list.filter((m) => m && m.role === role).length;
}

/* Whether turn is an answer (not an HTTP error). */
export function isAnswer(turn) {
    return turn !== null && turn.status === undefined;
}

/* The tool calls turn (the answer to request n) sends to PROVIDER, in
 * order: [{id, name, text, value}] where text is the arguments' JSON text as
 * sent and value their parsed value (undefined when the text is not JSON).
 * A call without an id in the script gets `call_tg<n>_<i>` (OpenAI),
 * `toolu_tg<n>_<i>` (Anthropic), or none (Gemini: id null). New array. */
export function callsOf(turn, n, provider) {
    if (!isAnswer(turn) || !turn.calls) return [];
    return turn.calls.map((c, i) => {
        let id = c.id ?? null;
        if (id === null && provider === 'anthropic') id = `toolu_tg${n}_${i}`;
        else if (id === null && provider !== 'gemini') id = `call_tg${n}_${i}`;
        const text = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {});
        let value;
        try {
            value = JSON.parse(text);
        } catch {
            value = undefined;
        }
        return { id, name: c.name, text, value };
    });
}
