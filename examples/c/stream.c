/* SPDX-License-Identifier: MIT */
/*
 * stream.c - tools that start while the model still writes: a streamed
 * model turn (Server-Sent Events, as a provider sends them) goes into
 * toolgate's incremental parser a few bytes at a time, as if from the
 * network; each call the parser gives out complete is submitted to the
 * runtime at once, as a turn of one call, and its tool (a C function on
 * the runtime's thread pool) starts while the rest of the stream is still
 * on its way. At the end the results are rendered in the model's order,
 * in the provider's format, ready for the next request.
 *
 * The tools are read_file, list_dir and grep over the workspace, written
 * here in C (toolgate's own built-in tools of those names are turned off).
 * The program prints when each call started, against the moment the last
 * bytes of the stream arrived, and how many started before that.
 *
 *   stream [TURN.sse [WORKSPACE]]
 *   build/examples/c/stream examples/turns/openai-chat-stream.sse \
 *       examples/workspace
 */
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "toolgate.h"

#define CHUNK 64 /* bytes a network read gives */
#define GAP_MS 3 /* between two reads */
#define MAX_CALLS 64
#define MAX_DEPTH 8 /* grep's walk */

/* ------------------------------------------------------------- the tools */

/* The string member `key` of the JSON object text args (already checked
 * against the tool's schema) into out; 0, or -1 when it is missing, too
 * long or holds an escape this small reader does not decode (\uXXXX). */
static int arg_string(const char *args, const char *key, char *out, size_t cap)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(args, quoted);
    if (p == NULL)
        return -1;
    p += strlen(quoted);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':')
        p++;
    if (*p++ != '"')
        return -1;
    size_t n = 0;
    for (; *p != '"'; p++) {
        char c = *p;
        if (c == '\0' || n + 1 >= cap)
            return -1;
        if (c == '\\') {
            c = *++p;
            if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c != '"' && c != '\\' && c != '/')
                return -1;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

/* The workspace path of the argument "path" into out, or the call ended:
 * an absolute path or a ".." component is refused (tg_handler_deny), as
 * toolgate's own file tools refuse what leaves the workspace. 0 or -1. */
static int workspace_path(tg_handler_ctx *ctx, const char *args, char *out,
                          size_t cap)
{
    char rel[1024];
    if (arg_string(args, "path", rel, sizeof rel) != 0) {
        tg_handler_fail(ctx, "BAD_INPUT", "path must be a plain string", NULL);
        return -1;
    }
    const char *p = rel;
    for (const char *seg = p; seg != NULL;) {
        if (strncmp(seg, "..", 2) == 0 && (seg[2] == '/' || seg[2] == '\0')) {
            tg_handler_deny(ctx, "the path leaves the workspace", NULL);
            return -1;
        }
        seg = strchr(seg, '/');
        if (seg != NULL)
            seg++;
    }
    if (rel[0] == '/') {
        tg_handler_deny(ctx, "the path leaves the workspace", NULL);
        return -1;
    }
    if ((size_t)snprintf(out, cap, "%s/%s", tg_handler_workspace(ctx), rel) >=
        cap) {
        tg_handler_fail(ctx, "BAD_INPUT", "the path is too long", NULL);
        return -1;
    }
    return 0;
}

static int read_file(tg_handler_ctx *ctx, const char *args, size_t len,
                     void *ud)
{
    (void)len;
    (void)ud;
    char path[2048];
    if (workspace_path(ctx, args, path, sizeof path) != 0)
        return -1;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return tg_handler_fail(ctx, "NOT_FOUND", "no such file", NULL);
    char buf[4096];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0)
        rc = tg_handler_write(ctx, buf, n, NULL);
    fclose(f);
    return rc == 0 ? 0 : -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory path, sorted; *n of them, each and the array
 * freed by the caller. NULL when it cannot be read. */
static char **dir_names(const char *path, size_t *n)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc(names, cap * sizeof *grown);
            if (grown == NULL)
                break;
            names = grown;
        }
        if ((names[*n] = strdup(de->d_name)) != NULL)
            (*n)++;
    }
    closedir(d);
    if (names != NULL)
        qsort(names, *n, sizeof *names, by_name);
    return names != NULL ? names : calloc(1, sizeof *names);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int list_dir(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)len;
    (void)ud;
    char path[2048];
    if (workspace_path(ctx, args, path, sizeof path) != 0)
        return -1;
    size_t n = 0;
    char **names = dir_names(path, &n);
    if (names == NULL)
        return tg_handler_fail(ctx, "NOT_FOUND", "no such directory", NULL);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char line[1100];
        int m = snprintf(line, sizeof line, "%s\n", names[i]);
        rc = tg_handler_write(
            ctx, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1,
            NULL);
    }
    free_names(names, n);
    return rc == 0 ? 0 : -1;
}

/* grep's walk: every line of the regular files under dir (shown as
 * `shown`) that holds `needle`, as "file:line: text". */
static int grep_walk(tg_handler_ctx *ctx, const char *dir, const char *shown,
                     const char *needle, int depth)
{
    size_t n = 0;
    char **names = dir_names(dir, &n);
    if (names == NULL)
        return 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n && !tg_handler_canceled(ctx); i++) {
        char path[2048], label[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (strcmp(shown, ".") == 0)
            snprintf(label, sizeof label, "%s", names[i]);
        else
            snprintf(label, sizeof label, "%s/%s", shown, names[i]);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH && names[i][0] != '.') {
            rc = grep_walk(ctx, path, label, needle, depth + 1);
            continue;
        }
        FILE *f = S_ISREG(st.st_mode) ? fopen(path, "r") : NULL;
        if (f == NULL)
            continue;
        char text[1024], line[3200];
        for (long no = 1; rc == 0 && fgets(text, sizeof text, f); no++) {
            if (strstr(text, needle) == NULL)
                continue;
            int m = snprintf(line, sizeof line, "%s:%ld:%s%s", label, no, text,
                             strchr(text, '\n') ? "" : "\n");
            rc = tg_handler_write(
                ctx, line,
                (size_t)m < sizeof line ? (size_t)m : sizeof line - 1, NULL);
        }
        fclose(f);
    }
    free_names(names, n);
    return rc;
}

static int grep(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)len;
    (void)ud;
    char needle[512], path[2048], shown[1024];
    if (arg_string(args, "pattern", needle, sizeof needle) != 0)
        return tg_handler_fail(ctx, "BAD_INPUT",
                               "pattern must be a plain string", NULL);
    if (arg_string(args, "path", shown, sizeof shown) != 0)
        snprintf(shown, sizeof shown, ".");
    if (workspace_path(ctx, args, path, sizeof path) != 0)
        return -1;
    return grep_walk(ctx, path, shown, needle, 0) == 0 ? 0 : -1;
}

/* ---------------------------------------------------- the stream's calls */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One call, submitted as a turn of its own. */
typedef struct slot {
    tg_turn *turn;
    double started_ms; /* 0: not started */
    size_t bytes_seen; /* of the stream, when it was submitted */
    int done;
} slot;

typedef struct run {
    tg_runtime *rt;
    const char *format;
    slot calls[MAX_CALLS];
    size_t n;
    size_t bytes_seen;
} run;

static void on_started(void *ud, const tg_call *call)
{
    (void)call;
    ((slot *)ud)->started_ms = now_ms();
}

static void on_done(void *ud, tg_turn *turn, int status, const tg_error *err)
{
    (void)turn;
    if (status != 0)
        fprintf(stderr, "stream: the runtime failed: %s\n", err->message);
    ((slot *)ud)->done = 1;
}

/* Submits call c (borrowed from the stream) as a turn of one call and has
 * the runtime start it now. */
static int submit(run *r, const tg_call *c, tg_error *err)
{
    if (r->n == MAX_CALLS) {
        snprintf(err->message, sizeof err->message, "more than %d calls",
                 MAX_CALLS);
        return TG_ELIMIT;
    }
    /* A call that cannot run (malformed arguments) has none as JSON: it is
     * submitted with what the model wrote, and ends with its error. */
    const char *args = tg_call_args_json(c);
    if (args == NULL)
        args = tg_call_args_raw(c) != NULL ? tg_call_args_raw(c) : "";
    slot *s = &r->calls[r->n];
    memset(s, 0, sizeof *s);
    s->bytes_seen = r->bytes_seen;
    int rc = tg_turn_new_call(r->format, tg_call_id(c) ? tg_call_id(c) : "",
                              tg_call_tool(c) ? tg_call_tool(c) : "", args,
                              strlen(args), &s->turn, err);
    if (rc != 0)
        return rc;
    static const tg_turn_ops ops = {on_started, NULL, NULL, on_done};
    rc = tg_runtime_submit(r->rt, s->turn, &ops, s, err);
    if (rc != 0) {
        tg_turn_free(s->turn);
        return rc;
    }
    r->n++;
    tg_runtime_flush(r->rt); /* journaled, checked and started: now */
    return 0;
}

/* Waits ms milliseconds as a network read would, running the runtime's
 * work (tools' ends) as it comes: the caller's own poll loop. */
static void wait_ms(tg_runtime *rt, double ms)
{
    double until = now_ms() + ms;
    for (double left = ms; left > 0; left = until - now_ms()) {
        int t = tg_runtime_timeout(rt);
        int wait = (int)left + 1;
        if (t >= 0 && t < wait)
            wait = t;
        struct pollfd p = {tg_runtime_fd(rt), POLLIN, 0};
        if (poll(&p, 1, wait) >= 0)
            tg_runtime_step(rt);
    }
}

static slot *slot_of(run *r, const char *id)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(tg_call_id(tg_turn_call(r->calls[i].turn, 0)), id) == 0)
            return &r->calls[i];
    return NULL;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            cap = cap ? cap * 2 : 16384;
            char *grown = realloc(buf, cap);
            if (grown == NULL)
                break;
            buf = grown;
        }
        size_t n = fread(buf + *len, 1, cap - *len, f);
        if (n == 0)
            break;
        *len += n;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    const char *turn_path =
        argc > 1 ? argv[1] : "examples/turns/openai-chat-stream.sse";
    const char *workspace = argc > 2 ? argv[2] : "examples/workspace";
    static const char *const path_schema =
        "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{"
        "\"path\":{\"type\":\"string\"}},\"additionalProperties\":false}";
    static const char *const grep_schema =
        "{\"type\":\"object\",\"required\":[\"pattern\"],\"properties\":{"
        "\"pattern\":{\"type\":\"string\",\"minLength\":1},"
        "\"path\":{\"type\":\"string\"}},\"additionalProperties\":false}";
    tg_error err = {0};
    tg_config *cfg = tg_config_new();
    tg_stream *stream = NULL;
    tg_turn *whole = NULL;
    run r;
    memset(&r, 0, sizeof r);
    int status = 1;
    signal(SIGPIPE, SIG_IGN); /* tg_runtime_step's contract */
    size_t len = 0;
    char *bytes = read_all(turn_path, &len);
    if (bytes == NULL || cfg == NULL) {
        fprintf(stderr, "stream: cannot read %s\n", turn_path);
        goto done;
    }
    /* The tools below take the built-in ones' names: those are off. */
    static const char no_builtins[] = "{\"builtin_tools\":[]}";
    if (tg_config_set_journal(cfg, NULL, &err) != 0 || /* no side effects */
        tg_config_set_workspace(cfg, workspace, &err) != 0 ||
        tg_config_load(cfg, no_builtins, sizeof no_builtins - 1, NULL, &err) !=
            0 ||
        tg_runtime_new(cfg, &r.rt, &err) != 0 ||
        tg_runtime_register(r.rt, "read_file", "Read a file", path_schema,
                            read_file, NULL, 0, &err) != 0 ||
        tg_runtime_register(r.rt, "list_dir", "List a directory", path_schema,
                            list_dir, NULL, 0, &err) != 0 ||
        tg_runtime_register(r.rt, "grep", "Lines holding a string", grep_schema,
                            grep, NULL, 0, &err) != 0 ||
        tg_stream_new("auto", &stream, &err) != 0)
        goto fail;

    /* The stream, CHUNK bytes every GAP_MS, each call submitted the moment
     * the parser gives it out. */
    double last_arrived = 0;
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        if (off + n == len)
            last_arrived = now_ms();
        if (tg_stream_feed(stream, bytes + off, n, &err) != 0)
            goto fail;
        r.bytes_seen = off + n;
        r.format = tg_stream_format(stream);
        const tg_call *c;
        while ((c = tg_stream_next_call(stream)) != NULL)
            if (submit(&r, c, &err) != 0)
                goto fail;
        if (off + n < len)
            wait_ms(r.rt, GAP_MS);
    }
    if (tg_stream_finish(stream, &whole, &err) != 0)
        goto fail;
    /* Calls the stream never said were complete (a cut stream) run now. */
    for (size_t i = 0; i < tg_turn_call_count(whole); i++) {
        const tg_call *c = tg_turn_call(whole, i);
        if (slot_of(&r, tg_call_id(c)) == NULL && submit(&r, c, &err) != 0)
            goto fail;
    }
    while (tg_runtime_pending(r.rt) > 0)
        wait_ms(r.rt, 10);

    size_t early = 0;
    printf("%zu bytes in %zu-byte reads every %d ms; the last arrived at "
           "0 ms\n",
           len, (size_t)CHUNK, GAP_MS);
    for (size_t i = 0; i < tg_turn_call_count(whole); i++) {
        slot *s = slot_of(&r, tg_call_id(tg_turn_call(whole, i)));
        const tg_result *res = tg_turn_result(s->turn, 0);
        double at = s->started_ms - last_arrived;
        if (s->started_ms > 0 && at < 0)
            early++;
        printf("%s %s: started at %+.1f ms (byte %zu of %zu): %s\n",
               tg_result_id(res), tg_result_tool(res),
               s->started_ms > 0 ? at : 0.0, s->bytes_seen, len,
               tg_outcome_name(tg_result_outcome(res)));
    }
    printf("%zu of %zu calls started before the stream ended\n", early,
           tg_turn_call_count(whole));

    /* The results in the model's order, in its format: one message each. */
    printf("results (%s):\n", tg_turn_format(whole));
    for (size_t i = 0; i < tg_turn_call_count(whole); i++) {
        slot *s = slot_of(&r, tg_call_id(tg_turn_call(whole, i)));
        char *out = NULL;
        size_t out_len = 0;
        if (tg_turn_render(s->turn, tg_turn_format(whole), &out, &out_len,
                           &err) != 0)
            goto fail;
        fwrite(out, 1, out_len, stdout);
        if (out_len == 0 || out[out_len - 1] != '\n')
            putchar('\n');
        tg_free(out);
    }
    status = 0;
    goto done;
fail:
    fprintf(stderr, "stream: %s\n", err.message);
done:
    tg_runtime_free(r.rt); /* ends what still runs before the turns go */
    for (size_t i = 0; i < r.n; i++)
        tg_turn_free(r.calls[i].turn);
    tg_turn_free(whole);
    tg_stream_free(stream);
    tg_config_free(cfg);
    free(bytes);
    return status;
}
