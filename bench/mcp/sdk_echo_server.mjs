// SPDX-License-Identifier: MIT
// The peer of bench/mcp: an McpServer of the MCP TypeScript SDK (pinned in
// tests/interop/package-lock.json) with one tool, `echo {text}`, returning
// {content: [{type: "text", text}]} - the same tool toolgate's built-in
// `echo` is. Served over stdio (the default) or Streamable HTTP:
//
//   node bench/mcp/sdk_echo_server.mjs                  stdio
//   node bench/mcp/sdk_echo_server.mjs --http PORT      http://127.0.0.1:PORT/mcp,
//        stateful sessions, responses as the SDK sends them by default (a
//        request's response on an SSE stream)
//   node bench/mcp/sdk_echo_server.mjs --http PORT --json   the same with
//        enableJsonResponse (plain application/json responses)
//
// Over HTTP it uses node:http and the SDK's StreamableHTTPServerTransport
// directly (no Express), one McpServer and transport per session, as the
// SDK's own examples do; that is the SDK's fastest plain setup. It writes
// nothing but errors, on stderr.
// Runs on Node >= 18 (on 18 with the global Web Crypto filled in below).
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The SDK lives in tests/interop/node_modules (one pin for the interop tests
// and this benchmark); bare ESM imports would look in bench/ instead, so it
// is loaded through a require() rooted there (the SDK ships CommonJS too).
const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.TG_INTEROP_DIR || join(here, '..', '..', 'tests', 'interop');
const require = createRequire(join(peers, 'package.json'));
let sdk;
try {
    sdk = {
        ...require('@modelcontextprotocol/sdk/server/mcp.js'),
        ...require('@modelcontextprotocol/sdk/server/stdio.js'),
        z: require('zod'),
    };
} catch (e) {
    console.error(`sdk_echo_server: cannot load the MCP SDK from ${peers}/node_modules ` +
        `(run: make interop-deps): ${e.message}`);
    process.exit(2);
}

function newServer() {
    const server = new sdk.McpServer({ name: 'sdk-echo', version: '1.0.0' });
    server.registerTool('echo', {
        description: 'Echo the text back',
        inputSchema: { text: sdk.z.string() },
    }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    return server;
}

const argv = process.argv.slice(2);
let port = null, json = false;
for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--http' && i + 1 < argv.length) port = Number(argv[++i]);
    else if (argv[i] === '--json') json = true;
    else {
        console.error('usage: sdk_echo_server.mjs [--http PORT [--json]]');
        process.exit(2);
    }
}

if (port === null) {
    await newServer().connect(new sdk.StdioServerTransport());
} else {
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error(`sdk_echo_server: bad port ${argv[argv.indexOf('--http') + 1]}`);
        process.exit(2);
    }
    // Node 18 (Debian 12's) has Web Crypto only as node:crypto's webcrypto;
    // the SDK's HTTP transport looks for the global that Node 20 has.
    if (globalThis.crypto === undefined)
        globalThis.crypto = (await import('node:crypto')).webcrypto;
    const { StreamableHTTPServerTransport } =
        require('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const sessions = new Map(); // session id -> transport
    const http = createServer(async (req, res) => {
        try {
            if (!req.url.startsWith('/mcp')) {
                res.writeHead(404).end();
                return;
            }
            const sid = req.headers['mcp-session-id'];
            let transport = sid ? sessions.get(sid) : undefined;
            if (sid && !transport) {
                res.writeHead(404, { 'content-type': 'application/json' }).end(
                    '{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
                return;
            }
            if (!transport) {
                // No session yet: the transport accepts only an initialize
                // request here and answers anything else with 400 itself.
                transport = new StreamableHTTPServerTransport({
                    sessionIdGenerator: () => randomUUID(),
                    enableJsonResponse: json,
                    onsessioninitialized: (id) => { sessions.set(id, transport); },
                });
                transport.onclose = () => {
                    if (transport.sessionId) sessions.delete(transport.sessionId);
                };
                await newServer().connect(transport);
            }
            await transport.handleRequest(req, res);
        } catch (e) {
            console.error('sdk_echo_server:', e);
            if (!res.headersSent) res.writeHead(500).end();
        }
    });
    http.keepAliveTimeout = 60000;
    http.on('error', (e) => {
        console.error(`sdk_echo_server: ${e.message}`);
        process.exit(1);
    });
    http.listen(port, '127.0.0.1');
}
