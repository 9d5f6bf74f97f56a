/* SPDX-License-Identifier: MIT */
/*
 * stdio_limit.c - the fastest MCP server over stdio that mcp_load accepts:
 * no JSON parser, no checks, no tool, no journal. It answers initialize
 * with a fixed result, ignores notifications, and answers a tools/call
 * with a text block holding the call's "text" argument, copied as it came;
 * every line read in one read() is answered in one write(). What
 * mcp_load measures against it is what the pipes and the load client
 * allow any server on this machine: the ceiling of "calls/s with K in
 * flight" (bench/mcp/run.sh reports it beside toolgate and the SDK). It
 * trusts its input to be mcp_load's; it is a measuring stick, not a
 * server.
 *
 *   stdio_limit            (stdin and stdout are the client's pipes)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_CAP (1 << 20)

struct out {
    char *p;
    size_t len, cap;
};

static void add(struct out *o, const char *s, size_t n)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        while (cap < o->len + n)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (p == NULL) {
            fputs("stdio_limit: out of memory\n", stderr);
            exit(1);
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void adds(struct out *o, const char *s)
{
    add(o, s, strlen(s));
}

/* The value text after `"key":` in line (up to its end: a number's digits
 * or a string with its quotes), or NULL. */
static const char *member(const char *line, size_t n, const char *key,
                          size_t *len)
{
    size_t kl = strlen(key);
    for (const char *p = line; p + kl < line + n; p++) {
        if (memcmp(p, key, kl) != 0)
            continue;
        const char *v = p + kl, *end = line + n;
        while (v < end && (*v == ' ' || *v == ':'))
            v++;
        const char *e = v;
        if (e < end && *e == '"') {
            for (e++; e < end && *e != '"'; e++)
                if (*e == '\\')
                    e++;
            e++;
        } else {
            while (e < end && *e != ',' && *e != '}')
                e++;
        }
        *len = (size_t)(e - v);
        return v;
    }
    return NULL;
}

static void answer(struct out *o, const char *line, size_t n)
{
    size_t il = 0, tl = 0;
    const char *id = member(line, n, "\"id\"", &il);
    if (id == NULL)
        return; /* a notification */
    adds(o, "{\"jsonrpc\":\"2.0\",\"id\":");
    add(o, id, il);
    if (member(line, n, "\"initialize\"", &tl) != NULL) {
        adds(o, ",\"result\":{\"protocolVersion\":\"2025-06-18\","
                "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":"
                "\"stdio_limit\",\"version\":\"1\"}}}\n");
        return;
    }
    const char *text = member(line, n, "\"text\"", &tl);
    adds(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    if (text != NULL)
        add(o, text, tl);
    else
        adds(o, "\"\"");
    adds(o, "}]}}\n");
}

int main(void)
{
    static char in[IN_CAP];
    size_t have = 0;
    struct out o = {0};
    for (;;) {
        ssize_t got = read(0, in + have, sizeof in - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        have += (size_t)got;
        size_t start = 0;
        for (size_t i = 0; i < have; i++)
            if (in[i] == '\n') {
                answer(&o, in + start, i - start);
                start = i + 1;
            }
        memmove(in, in + start, have - start);
        have -= start;
        if (have == sizeof in) {
            fputs("stdio_limit: a line over 1 MiB\n", stderr);
            return 1;
        }
        for (size_t off = 0; off < o.len;) {
            ssize_t w = write(1, o.p + off, o.len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return 1;
            off += (size_t)w;
        }
        o.len = 0;
    }
}
