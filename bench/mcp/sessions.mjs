// SPDX-License-Identifier: MIT
// sessions.mjs - holds N MCP sessions on one Streamable HTTP server at
// once and proves none is dropped: N keep-alive connections each
// initialize a session of their own (all at the same time), then every
// session calls the echo tool, all at the same time again, and each answer
// must carry its own session's text. Prints one line and exits 0 when all
// N sessions answered, 1 otherwise.
//
//   node bench/mcp/sessions.mjs URL [N]     (default N = 1000)
import http from 'node:http';

const url = new URL(process.argv[2] || 'http://127.0.0.1:8765/mcp');
const n = Number(process.argv[3] || 1000);
const agent = new http.Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });

function post(body, session) {
    return new Promise((resolve, reject) => {
        const headers = {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
        };
        if (session) headers['mcp-session-id'] = session;
        const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
            let data = '';
            res.setEncoding('utf8');
            res.on('data', (c) => { data += c; });
            res.on('end', () => resolve({ status: res.statusCode, session: res.headers['mcp-session-id'], data }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
    });
}

// The JSON-RPC response in a body (JSON, or the data lines of an SSE stream).
function response(text) {
    for (const line of text.split('\n')) {
        const t = line.startsWith('data:') ? line.slice(5).trim() : line.trim();
        if (!t.startsWith('{')) continue;
        const m = JSON.parse(t);
        if ('result' in m || 'error' in m) return m;
    }
    return null;
}

const t0 = process.hrtime.bigint();
const init = await Promise.allSettled(Array.from({ length: n }, (_, i) => post({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `s${i}`, version: '1' } },
})));
const sessions = init.map((r) => (r.status === 'fulfilled' && r.value.status === 200 ? r.value.session : null));
const opened = sessions.filter(Boolean).length;
const t1 = process.hrtime.bigint();
const calls = await Promise.allSettled(sessions.map((s, i) => (s === null ? Promise.reject(new Error('no session')) : post({
    jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: `session ${i}` } },
}, s))));
let answered = 0;
calls.forEach((r, i) => {
    if (r.status !== 'fulfilled' || r.value.status !== 200) return;
    const m = response(r.value.data);
    const text = m && m.result && m.result.content && m.result.content[0] && m.result.content[0].text;
    if (typeof text === 'string' && text.includes(`session ${i}`)) answered++;
});
const t2 = process.hrtime.bigint();
const ms = (a, b) => Number(b - a) / 1e6;
console.log(`sessions: ${opened}/${n} opened in ${ms(t0, t1).toFixed(0)} ms, ` +
    `${answered}/${n} answered a call at once in ${ms(t1, t2).toFixed(0)} ms`);
agent.destroy();
process.exit(opened === n && answered === n ? 0 : 1);
