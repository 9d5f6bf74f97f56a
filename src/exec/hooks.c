/* SPDX-License-Identifier: MIT */
/*
 * hooks.c - the before and after hooks of the configuration
 * (docs/configuration.md, "hooks"). A hook is a command the operator
 * configured: it reads JSON on its standard input and answers one JSON object
 * on its standard output.
 *
 * Before hooks run, in order, once a call has passed its checks (schema,
 * policy) and before its tool starts. Each gets the call record and answers
 * {"decision":"allow"|"deny"|"cancel","reason":…}, an allow optionally with
 * "args" to rewrite the arguments: the rewrite is validated against the
 * tool's schema, re-checksummed, the command templates are expanded again,
 * and the next hook sees the new call. The first deny (-> denied) or cancel
 * (-> canceled by policy) ends the call. A hook that cannot start, exits
 * non-zero, dies by a signal, outlives its deadline, writes too much or
 * answers nonsense denies the call, and the reason says which hook and what
 * went wrong: a broken gate stays shut.
 *
 * After hooks run over the result of a tool that ran (success or error, or
 * a timeout carrying what the command printed) and get
 * {"call":…,"result":…}; {"payload":…} replaces the payload (redaction:
 * the content blocks and the artifact handle, which carry the same output,
 * are dropped with it), {} or no output keeps it. An after hook that fails
 * must not let the payload it was meant to redact through, so the result
 * becomes an error HOOK_FAILED naming the hook and what went wrong; its
 * execution stays what it was (the tool did run).
 *
 * Each hook runs on libuv's thread pool as a subprocess of its own
 * (tg__proc_spawn: own process group, PR_SET_PDEATHSIG, the watchdog), with
 * the runtime's allowlisted environment plus TOOLGATE_HOOK_STAGE, the
 * workspace as its directory, and its own deadline (poll(2) on its pipes,
 * its pidfd and a wake-up eventfd; SIGKILL of its group when the deadline
 * passes or its call is canceled). The loop thread only prepares the input
 * and reads the answer. Every decision is appended to the job's decisions
 * under "hooks".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "jint.h"
#include "json_out.h"
#include "process.h"
#include "runtime.h"
#include "timeutil.h"

#define HOOK_TIMEOUT_MS 5000 /* hooks.timeout_ms when not configured */
#define HOOK_ERR_TAIL 1024   /* stderr kept for the reason */
#define HOOK_DRAIN_MS 200    /* pipes held open after the hook exited */
#define HOOK_OUT_SLACK 65536 /* answer cap beyond what the input allows */
#define HOOK_CHUNK 16384

/* What went wrong running a hook (the answer is judged separately). */
enum {
    RUN_OK = 0,
    RUN_SPAWN,    /* could not start: spawn_stage, errnum */
    RUN_SETUP,    /* pipes, pidfd, poll: errnum */
    RUN_TIMEOUT,  /* outlived its deadline */
    RUN_OUTPUT,   /* answered more than out.limit bytes */
    RUN_CANCELED, /* its call was canceled */
};

struct tg__hook {
    tg_runtime *rt;
    tg__job *job;    /* NULL once the job ended without waiting for it */
    int stage;       /* TG__HOOKS_BEFORE or TG__HOOKS_AFTER */
    size_t index;    /* in its stage's list */
    tg_result *held; /* after hooks: the result under review (owned) */
    uv_work_t work;
    /* what the worker reads: owned, or the runtime's (which outlives the
     * work: tg_runtime_free runs the loop until it returned) */
    char **argv; /* NULL-terminated, strings in the same allocation */
    char **envp;
    void *env_owned;
    const char *cwd; /* the workspace */
    char *input;
    size_t input_len;
    int64_t timeout_ms;
    int wake_fd; /* eventfd: readable once the call is canceled */
    atomic_int canceled;
    /* what the worker found */
    int run;
    int spawn_stage, errnum;
    bool status_known;
    int status;
    tg__buf out;
    char err[2 * HOOK_ERR_TAIL];
    size_t err_len;
};

/* ------------------------------------------------------------ config */

/* The list of a stage (borrowed from the configuration), or NULL. */
static const json_t *stage_list(const tg_runtime *rt, int stage)
{
    if (rt->cfg->hooks == NULL)
        return NULL;
    const json_t *l = json_object_get(
        rt->cfg->hooks,
        stage == TG__HOOKS_BEFORE ? "before" : "after"); /* borrowed */
    return json_is_array(l) ? l : NULL;
}

bool tg__hooks_have(const tg_runtime *rt, int stage)
{
    const json_t *l = stage_list(rt, stage); /* borrowed */
    return l != NULL && json_array_size(l) > 0;
}

static const char *stage_name(int stage)
{
    return stage == TG__HOOKS_BEFORE ? "before" : "after";
}

/* Hook i of a stage: its argv (borrowed) and deadline. The configuration
 * was validated when loaded (config.c): an argv array, or an object with
 * "command" and maybe "timeout_ms". */
static const json_t *hook_spec(const tg_runtime *rt, int stage, size_t i,
                               int64_t *timeout_ms)
{
    const json_t *h = json_array_get(stage_list(rt, stage), i); /* borrowed */
    const json_t *t =
        json_object_get(rt->cfg->hooks, "timeout_ms"); /* borrowed */
    /* config.c took 5e3 as 5000: read it the same way (tg__json_int) */
    if (!tg__json_int(t, timeout_ms))
        *timeout_ms = HOOK_TIMEOUT_MS;
    if (!json_is_object(h))
        return h;
    t = json_object_get(h, "timeout_ms"); /* borrowed */
    (void)tg__json_int(t, timeout_ms);
    return json_object_get(h, "command");
}

/* The name a hook goes by in reasons and records: its argv[0]. */
static const char *hook_name(const tg__hook *h)
{
    return h->argv[0];
}

/* ------------------------------------------------------------ worker */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Keeps the last HOOK_ERR_TAIL bytes of stderr. */
static void err_add(tg__hook *h, const char *d, size_t n)
{
    if (n >= HOOK_ERR_TAIL) {
        memcpy(h->err, d + n - HOOK_ERR_TAIL, HOOK_ERR_TAIL);
        h->err_len = HOOK_ERR_TAIL;
        return;
    }
    if (h->err_len + n > sizeof h->err) {
        size_t keep = HOOK_ERR_TAIL - n;
        memmove(h->err, h->err + h->err_len - keep, keep);
        h->err_len = keep;
    }
    memcpy(h->err + h->err_len, d, n);
    h->err_len += n;
}

/* Kills what is left of the hook's group and reaps its leader. While the
 * leader is unreaped its pid names the group, so the kill hits no one
 * else. */
static void reap(tg__hook *h, pid_t pid)
{
    kill(-pid, SIGKILL);
    int st = 0;
    pid_t r;
    do {
        r = waitpid(pid, &st, 0);
    } while (r < 0 && errno == EINTR);
    if (r == pid) {
        h->status_known = true;
        h->status = st;
    }
}

/* Writes what the pipe takes of the input; closes it when all is written
 * or the hook stopped reading (EPIPE: SIGPIPE is blocked here). */
static void feed(tg__hook *h, int *fd, size_t *done)
{
    while (*done < h->input_len) {
        ssize_t n = write(*fd, h->input + *done, h->input_len - *done);
        if (n > 0) {
            *done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        break; /* EPIPE: the hook does not want it all */
    }
    close_fd(fd);
}

/* Reads what is there; returns false when the output went over its cap. */
static bool drain(tg__hook *h, int *fd, bool is_out)
{
    char chunk[HOOK_CHUNK];
    for (;;) {
        ssize_t n = read(*fd, chunk, sizeof chunk);
        if (n > 0) {
            if (!is_out) {
                err_add(h, chunk, (size_t)n);
                continue;
            }
            if (tg__buf_append(&h->out, chunk, (size_t)n) != 0)
                return false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        close_fd(fd); /* end of file, or an error that ends it */
        return true;
    }
}

/* Runs the hook to its end, its deadline, or its cancellation. On a pool
 * thread: touches only h and async-safe process state. */
static void hook_exec(tg__hook *h)
{
    int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    int pidfd = -1;
    pid_t pid = -1;
    bool exited = false;
    char path[PATH_MAX];
    int e = tg__proc_resolve(h->argv[0], tg__proc_getenv(h->envp, "PATH"),
                             h->cwd, path, sizeof path);
    if (e != 0) {
        h->run = RUN_SPAWN;
        h->spawn_stage = TG__SPAWN_STAGE_EXEC;
        h->errnum = e;
        return;
    }
    if (pipe2(inp, O_CLOEXEC) != 0 || pipe2(outp, O_CLOEXEC) != 0 ||
        pipe2(errp, O_CLOEXEC) != 0) {
        h->run = RUN_SETUP;
        h->errnum = errno;
        goto done;
    }
    uint64_t deadline = tg__mono_ns() + (uint64_t)h->timeout_ms * 1000000u;
    /* Hooks are the operator's own programs: no sandbox, no limits. */
    tg__spawn sp = {.path = path,
                    .argv = h->argv,
                    .envp = h->envp,
                    .cwd = h->cwd,
                    .fd_in = inp[0],
                    .fd_out = outp[1],
                    .fd_err = errp[1]};
    tg__watchdog_ready(&h->rt->watch);
    if (tg__proc_spawn(&sp, &pid, &h->spawn_stage, &h->errnum) != 0) {
        pid = -1;
        h->run = RUN_SPAWN;
        goto done;
    }
    tg__watchdog_add(&h->rt->watch, pid); /* its group dies with the runtime */
    close_fd(&inp[0]);
    close_fd(&outp[1]);
    close_fd(&errp[1]);
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        h->run = RUN_SETUP;
        h->errnum = errno;
        goto done;
    }
    set_nonblock(inp[1]);
    set_nonblock(outp[0]);
    set_nonblock(errp[0]);
    size_t fed = 0;
    if (h->input_len == 0)
        close_fd(&inp[1]);
    uint64_t drain_end = 0;
    for (;;) {
        if (exited && outp[0] < 0 && errp[0] < 0)
            break;
        uint64_t now = tg__mono_ns();
        uint64_t end = exited ? drain_end : deadline;
        if (now >= end) {
            /* After the exit only something that escaped the group holds a
             * pipe: the answer is what came so far. */
            if (!exited)
                h->run = RUN_TIMEOUT;
            break;
        }
        struct pollfd fds[5];
        int n = 0, iw = -1, io = -1, ie = -1, ip = -1;
        fds[n++] = (struct pollfd){.fd = h->wake_fd, .events = POLLIN};
        if (inp[1] >= 0) {
            iw = n;
            fds[n++] = (struct pollfd){.fd = inp[1], .events = POLLOUT};
        }
        if (outp[0] >= 0) {
            io = n;
            fds[n++] = (struct pollfd){.fd = outp[0], .events = POLLIN};
        }
        if (errp[0] >= 0) {
            ie = n;
            fds[n++] = (struct pollfd){.fd = errp[0], .events = POLLIN};
        }
        if (!exited) {
            ip = n;
            fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        }
        uint64_t wait_ms = (end - now + 999999u) / 1000000u;
        int pr =
            poll(fds, (nfds_t)n, wait_ms > INT_MAX ? INT_MAX : (int)wait_ms);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            h->run = RUN_SETUP;
            h->errnum = errno;
            break;
        }
        if (fds[0].revents != 0) {
            h->run = RUN_CANCELED;
            break;
        }
        if (iw >= 0 && fds[iw].revents != 0)
            feed(h, &inp[1], &fed);
        if (io >= 0 && fds[io].revents != 0 && !drain(h, &outp[0], true)) {
            h->run = RUN_OUTPUT;
            break;
        }
        if (ie >= 0 && fds[ie].revents != 0)
            (void)drain(h, &errp[0], false);
        if (ip >= 0 && fds[ip].revents != 0) {
            reap(h, pid);
            exited = true;
            close_fd(&inp[1]);
            drain_end = tg__mono_ns() + HOOK_DRAIN_MS * 1000000u;
        }
    }
done:
    if (pid > 0) {
        if (!exited)
            reap(h, pid);
        tg__watchdog_remove(&h->rt->watch, pid);
    }
    close_fd(&pidfd);
    close_fd(&inp[0]);
    close_fd(&inp[1]);
    close_fd(&outp[0]);
    close_fd(&outp[1]);
    close_fd(&errp[0]);
    close_fd(&errp[1]);
}

static void on_hook_work(uv_work_t *w)
{
    tg__hook *h = w->data;
    if (h->run != RUN_OK)
        return; /* set up failed on the loop; it says why */
    if (atomic_load(&h->canceled)) {
        h->run = RUN_CANCELED;
        return;
    }
    /* Writing to a hook that stopped reading must fail with EPIPE, not
     * kill the host: SIGPIPE is blocked on this thread meanwhile, and one
     * raised here is taken before the mask is restored. */
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    hook_exec(h);
    if (!sigismember(&old, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&s, NULL, &zero) > 0)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------ records */

static void hook_free(tg__hook *h)
{
    if (h == NULL)
        return;
    free(h->argv);
    free(h->env_owned);
    free(h->input);
    tg__buf_cleanup(&h->out);
    if (h->wake_fd >= 0)
        close(h->wake_fd);
    tg__result_free(h->held);
    free(h);
}

/* Appends one entry (taken) to the job's decisions under "hooks". */
static int log_decision(tg__job *job, json_t *entry)
{
    if (entry == NULL)
        return TG_ENOMEM;
    if (job->decisions == NULL && (job->decisions = json_object()) == NULL)
        goto fail;
    json_t *list = json_object_get(job->decisions, "hooks"); /* borrowed */
    if (!json_is_array(list)) {
        list = json_array();
        if (list == NULL || json_object_set_new(job->decisions, "hooks", list))
            goto fail;
    }
    if (json_array_append_new(list, entry) != 0)
        return TG_ENOMEM;
    return 0;
fail:
    json_decref(entry);
    return TG_ENOMEM;
}

/* {"hook","stage","decision","reason"} plus "failed": true when the hook
 * itself failed. */
static json_t *entry_new(const tg__hook *h, const char *decision,
                         const char *reason, bool failed)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "hook", hook_name(h), "stage",
                          stage_name(h->stage), "decision", decision, "reason",
                          reason ? reason : ""); /* new ref */
    if (e != NULL && failed &&
        json_object_set_new(e, "failed", json_true()) != 0) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* ------------------------------------------------------------ verdicts */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/* What went wrong running the hook, as the end of a sentence starting with
 * its name ("timed out after 200 ms"), into why; false when it ran and
 * exited 0. A before hook's stderr tail is quoted, an after hook's never.
 * Returns TG_ENOMEM through *rc. */
static bool run_failure(const tg__hook *h, tg__buf *why, int *rc)
{
    char sig[32];
    *rc = 0;
    switch (h->run) {
    case RUN_SPAWN:
        *rc = h->spawn_stage == TG__SPAWN_STAGE_CHDIR
                  ? tg__buf_printf(why,
                                   "could not change to the workspace "
                                   "'%s': %s",
                                   h->cwd, strerror(h->errnum))
                  : tg__buf_printf(why, "could not start: %s",
                                   strerror(h->errnum));
        return true;
    case RUN_SETUP:
        *rc = tg__buf_printf(why, "could not be run: %s", strerror(h->errnum));
        return true;
    case RUN_TIMEOUT:
        *rc = tg__buf_printf(why, "timed out after %lld ms (its deadline)",
                             (long long)h->timeout_ms);
        return true;
    case RUN_OUTPUT:
        *rc = tg__buf_printf(why, "answered more than %zu bytes", h->out.limit);
        return true;
    case RUN_CANCELED:
        *rc = tg__buf_printf(why, "was stopped: its call was canceled");
        return true;
    default:
        break;
    }
    if (!h->status_known) {
        *rc = tg__buf_printf(why, "ended with an unknown exit status");
        return true;
    }
    if (WIFSIGNALED(h->status)) {
        int s = WTERMSIG(h->status);
        *rc = tg__buf_printf(why, "was killed by signal %d (%s)", s,
                             tg__signal_name(s, sig));
        return true;
    }
    int code = WEXITSTATUS(h->status);
    if (code == 0)
        return false;
    size_t b = 0, n = h->err_len;
    while (b < n && is_space(h->err[b]))
        b++;
    while (n > b && is_space(h->err[n - 1]))
        n--;
    *rc = tg__buf_printf(why, "exited with status %d", code);
    /* An after hook's stderr may echo the output it was to redact. */
    if (*rc == 0 && n > b && h->stage == TG__HOOKS_BEFORE)
        *rc = tg__buf_printf(why, ": %.*s", (int)(n - b), h->err + b);
    return true;
}

/* The answer as an object (new ref): NULL with the reason in why when it
 * is not one. Blank output is `empty_ok`'s to allow: *answer stays NULL. */
static bool parse_answer(const tg__hook *h, bool empty_ok, json_t **answer,
                         tg__buf *why, int *rc)
{
    *answer = NULL;
    *rc = 0;
    size_t b = 0;
    while (b < h->out.len && is_space(h->out.data[b]))
        b++;
    if (b == h->out.len) {
        if (!empty_ok)
            *rc = tg__buf_printf(why, "answered nothing (a JSON object with a "
                                      "\"decision\" was expected)");
        return empty_ok;
    }
    json_error_t jerr;
    json_t *a = json_loadb(h->out.data, h->out.len, JSON_REJECT_DUPLICATES,
                           &jerr); /* new ref */
    if (a == NULL) {
        /* jansson quotes the text near the error: for an after hook that
         * may be the output it was to redact. */
        *rc = h->stage == TG__HOOKS_BEFORE
                  ? tg__buf_printf(why,
                                   "answered what is not JSON (line %d, "
                                   "column %d: %s)",
                                   jerr.line, jerr.column, jerr.text)
                  : tg__buf_printf(why,
                                   "answered what is not JSON (line %d, "
                                   "column %d)",
                                   jerr.line, jerr.column);
        return false;
    }
    if (!json_is_object(a)) {
        json_decref(a);
        *rc = tg__buf_printf(why, "answered JSON that is not an object");
        return false;
    }
    json_t *reason = json_object_get(a, "reason"); /* borrowed */
    if (reason != NULL && !json_is_string(reason) && !json_is_null(reason)) {
        json_decref(a);
        *rc = tg__buf_printf(why, "answered a \"reason\" that is not a string");
        return false;
    }
    *answer = a;
    return true;
}

/* The answer's reason (borrowed), or NULL. */
static const char *answer_reason(const json_t *answer)
{
    return json_string_value(json_object_get(answer, "reason"));
}

/* Text made valid UTF-8 for a record (stderr may be anything): a JSON
 * string, new ref. */
static json_t *clean_text(tg__buf *b)
{
    return tg__json_text(b->data ? b->data : "", b->len);
}

static void hooks_next(tg_runtime *rt, tg__job *job, int stage, size_t index,
                       tg_result *held);

/* The job's result is final (hooks done). */
static void finish(tg__job *job, tg_result *r)
{
    job->hook = NULL;
    job->hook_stage = TG__HOOKS_DONE;
    job->hook_end(job, false, r);
}

/* ------------------------------------------------------------ before */

/* Whether rewritten arguments may replace the call's: within the size
 * limit and valid against the tool's schema. Returns 0, 1 when refused
 * (the reason in why), or TG_ENOMEM. */
static int vet_args(tg_runtime *rt, const tg__job *job, const json_t *args,
                    tg__buf *why)
{
    const tg__tool *tool = job->tool;
    char *text = json_dumps(args, JSON_COMPACT);
    if (text == NULL)
        return TG_ENOMEM;
    size_t len = strlen(text);
    free(text);
    int64_t max = rt->cfg->max_args_bytes;
    int rc = 0;
    if (max > 0 && len > (uint64_t)max) {
        rc = tg__buf_printf(why,
                            "rewrote the arguments to %zu bytes, more than the "
                            "limit of %lld bytes (limits.max_args_bytes)",
                            len, (long long)max);
        return rc ? rc : 1;
    }
    if (tool->schema == NULL)
        return 0;
    tg__schema_report rep = {0};
    tg_error e = {0};
    /* On the loop thread, under the whole budget: a hook is the operator's
     * program, and the budget bounds what its answer can cost. */
    tg__schema_budget b;
    tg__schema_budget_init(&b, (uint64_t)rt->cfg->max_validation_steps, NULL);
    int v = tg__schema_validate_json_in(tool->schema, args, &rep, &b, &e);
    if (v != 1) {
        char *msg = v == 0 ? tg__schema_report_message(&rep) : NULL;
        if (v == TG_ENOMEM || (v == 0 && msg == NULL))
            rc = TG_ENOMEM;
        else
            rc = tg__buf_printf(why,
                                "rewrote the arguments into ones the schema "
                                "of tool '%s' refuses: %s",
                                job->call->tool, v == 0 ? msg : e.message);
        rc = rc ? rc : 1;
        free(msg);
    }
    tg__schema_report_cleanup(&rep);
    return rc;
}

/* A command tool's argv and stdin from the call's (new) arguments. Returns
 * 0, 1 when the templates refuse them (the reason in why), or TG_ENOMEM. */
static int reprepare(tg_runtime *rt, tg__job *job, tg__buf *why)
{
    bool oom = false;
    tg__argv_free(job->argv);
    job->argv = NULL;
    free(job->stdin_data);
    job->stdin_data = NULL;
    job->has_stdin = false;
    tg_result *r = tg__check_prepare_command(rt, job, &oom);
    int rc = 0;
    if (oom) {
        rc = TG_ENOMEM;
    } else if (r != NULL) {
        const char *m = tg_result_error_message(r);
        rc = tg__buf_printf(why,
                            "rewrote the arguments into ones the command of "
                            "tool '%s' cannot take: %s",
                            job->call->tool, m ? m : "refused");
        rc = rc ? rc : 1;
    }
    tg__result_free(r);
    return rc;
}

/* The policy on the rewritten arguments. Returns 0, 1 when it refuses them
 * (the reason in why), or TG_ENOMEM. */
static int repolicy(tg_runtime *rt, tg__job *job, tg__buf *why)
{
    bool oom = false;
    tg_result *r = tg__check_policy_again(rt, job, &oom);
    int rc = 0;
    if (oom) {
        rc = TG_ENOMEM;
    } else if (r != NULL) {
        const json_t *d = json_object_get(
            json_object_get(tg__result_payload(r), "denied"), "reason");
        rc = tg__buf_printf(why,
                            "rewrote the arguments into ones the policy does "
                            "not allow: %s",
                            json_string_value(d) ? json_string_value(d)
                                                 : "denied");
        rc = rc ? rc : 1;
    }
    tg__result_free(r);
    return rc;
}

/* Applies a rewrite of the arguments: size, schema, policy, checksum, command
 * templates. Returns 0 when the call now has them (prev: the checksum it
 * had), 1 when they are refused (the reason in why; the call keeps what the
 * model sent, and is denied, so its command needs no preparation), or
 * TG_ENOMEM. */
static int rewrite(tg_runtime *rt, tg__job *job, json_t *args, tg__buf *why,
                   char prev[TG_CHECKSUM_MAX])
{
    tg_call *call = job->call;
    int rc = vet_args(rt, job, args, why);
    if (rc != 0)
        return rc;
    const char *sum = tg_call_checksum(call);
    snprintf(prev, TG_CHECKSUM_MAX, "%s", sum ? sum : "");
    json_t *orig = json_incref(tg__call_args(call)); /* new ref */
    if (orig == NULL)
        return TG_ENOMEM;
    if ((rc = tg__call_set_args(call, args)) != 0)
        goto fail;
    if (call->args_text == NULL) {
        /* jansson holds what JSON text cannot carry (a "\u0000" key) */
        tg__call_clear_pre_error(call);
        rc = tg__buf_printf(why, "rewrote the arguments into ones that "
                                 "cannot be represented");
        rc = rc ? rc : 1;
        goto fail;
    }
    if (tg_call_checksum(call) == NULL) {
        rc = TG_ENOMEM;
        goto fail;
    }
    if ((rc = repolicy(rt, job, why)) != 0)
        goto fail;
    if (job->tool->kind == TG_TOOL_KIND_COMMAND &&
        (rc = reprepare(rt, job, why)) != 0)
        goto fail;
    json_decref(orig);
    return 0;
fail:
    if (tg__call_set_args(call, orig) != 0)
        rc = TG_ENOMEM;
    else
        (void)tg_call_checksum(call);
    json_decref(orig);
    return rc;
}

enum { V_ALLOW, V_DENY, V_CANCEL };

static void before_done(tg_runtime *rt, tg__job *job, tg__hook *h)
{
    tg__buf why;
    tg__buf_init(&why, 0);
    json_t *answer = NULL;      /* new ref */
    json_t *entry = NULL;       /* new ref */
    json_t *reason_json = NULL; /* new ref */
    int verdict = V_DENY, rc = 0;
    bool failed = true, rewrote = false;
    char prev[TG_CHECKSUM_MAX] = "";
    const char *reason = NULL;
    if (!run_failure(h, &why, &rc) && rc == 0 &&
        parse_answer(h, false, &answer, &why, &rc)) {
        const char *d = json_string_value(json_object_get(answer, "decision"));
        json_t *args = json_object_get(answer, "args"); /* borrowed */
        reason = answer_reason(answer);
        if (d != NULL && strcmp(d, "deny") == 0) {
            failed = false;
        } else if (d != NULL && strcmp(d, "cancel") == 0) {
            failed = false;
            verdict = V_CANCEL;
        } else if (d != NULL && strcmp(d, "allow") == 0) {
            if (args != NULL && !json_is_object(args)) {
                rc = tg__buf_printf(&why, "answered \"args\" that are not an "
                                          "object");
            } else if (args != NULL) {
                int w = rewrite(rt, job, args, &why, prev);
                if (w == 0) {
                    failed = false;
                    rewrote = true;
                    verdict = V_ALLOW;
                } else if (w < 0) {
                    rc = w;
                }
            } else {
                failed = false;
                verdict = V_ALLOW;
            }
        } else if (d != NULL) {
            rc = tg__buf_printf(&why,
                                "answered the unknown decision '%s' (allow, "
                                "deny or cancel)",
                                d);
        } else {
            rc = tg__buf_printf(&why, "answered no \"decision\" (allow, deny "
                                      "or cancel)");
        }
    }
    if (rc != 0)
        goto oom;
    if (failed) {
        /* The hook's words come after its name: "before hook 'x' ..." */
        reason_json = clean_text(&why);
        tg__buf full;
        tg__buf_init(&full, 0);
        if (reason_json == NULL ||
            tg__buf_printf(&full, "before hook '%s' %s", hook_name(h),
                           json_string_value(reason_json)) != 0) {
            tg__buf_cleanup(&full);
            goto oom;
        }
        json_decref(reason_json);
        reason_json = json_string(tg__buf_cstr(&full));
        tg__buf_cleanup(&full);
        if (reason_json == NULL)
            goto oom;
        reason = json_string_value(reason_json);
    } else if (reason == NULL) {
        tg__buf_cleanup(&why);
        tg__buf_init(&why, 0);
        if (tg__buf_printf(&why, "%s by before hook '%s'",
                           verdict == V_ALLOW  ? "allowed"
                           : verdict == V_DENY ? "denied"
                                               : "canceled",
                           hook_name(h)) != 0)
            goto oom;
        reason = tg__buf_cstr(&why);
    }
    static const char *const names[] = {"allow", "deny", "cancel"};
    entry = entry_new(h, names[verdict], reason, failed);
    if (entry != NULL && rewrote &&
        (json_object_set_new(entry, "rewrote", json_true()) != 0 ||
         json_object_set_new(entry, "previous_checksum", json_string(prev)) !=
             0 ||
         json_object_set_new(entry, "args",
                             json_deep_copy(tg__call_args(job->call))) != 0))
        goto oom;
    rc = log_decision(job, entry);
    entry = NULL;
    if (rc != 0)
        goto oom;
    tg_result *r = NULL;
    if (verdict == V_ALLOW) {
        json_decref(answer);
        json_decref(reason_json);
        tg__buf_cleanup(&why);
        hooks_next(rt, job, TG__HOOKS_BEFORE, h->index + 1, NULL);
        return;
    }
    r = verdict == V_DENY
            ? tg__result_denied(job->call, reason)
            : tg__result_canceled(job->call, TG_EXECUTION_NOT_STARTED, "policy",
                                  reason);
    json_decref(answer);
    json_decref(reason_json);
    tg__buf_cleanup(&why);
    finish(job, r);
    return;
oom:
    json_decref(entry);
    json_decref(answer);
    json_decref(reason_json);
    tg__buf_cleanup(&why);
    finish(job, NULL);
}

/* ------------------------------------------------------------ after */

/* A copy of held with another payload (reference taken): the content
 * blocks and the artifact are the same output in other forms and go. */
static tg_result *with_payload(const tg_call *call, const tg_result *held,
                               json_t *payload)
{
    tg_result *r =
        tg__result_new(call, held->outcome, held->execution, payload);
    if (r == NULL)
        return NULL;
    r->duration_ms = held->duration_ms;
    r->exit_status = held->exit_status;
    r->decisions = json_incref(held->decisions);
    return r;
}

/* An error payload keeps its convention: {"error":{"message","code"}}. */
static bool error_payload(const json_t *p)
{
    const json_t *e = json_object_get(p, "error"); /* borrowed */
    return json_is_string(json_object_get(e, "message")) &&
           json_is_string(json_object_get(e, "code"));
}

/* So does a timeout's: {"timeout":{"durationMs":N}}. */
static bool timeout_payload(const json_t *p)
{
    const json_t *t = json_object_get(p, "timeout"); /* borrowed */
    return json_is_integer(json_object_get(t, "durationMs"));
}

static void after_done(tg_runtime *rt, tg__job *job, tg__hook *h)
{
    tg__buf why;
    tg__buf_init(&why, 0);
    json_t *answer = NULL; /* new ref */
    json_t *entry = NULL;  /* new ref */
    tg_result *held = h->held, *next = NULL;
    h->held = NULL;
    int rc = 0;
    bool failed = true;
    const char *decision = "keep";
    if (!run_failure(h, &why, &rc) && rc == 0 &&
        parse_answer(h, true, &answer, &why, &rc)) {
        json_t *payload = json_object_get(answer, "payload"); /* borrowed */
        if (payload == NULL) {
            failed = false;
        } else if (held->outcome == TG_OUTCOME_ERROR &&
                   !error_payload(payload)) {
            rc = tg__buf_printf(&why, "replaced the payload of an error "
                                      "result with one that is not "
                                      "{\"error\":{\"message\",\"code\"}}");
        } else if (held->outcome == TG_OUTCOME_TIMEOUT &&
                   !timeout_payload(payload)) {
            rc = tg__buf_printf(&why, "replaced the payload of a timeout "
                                      "result with one that is not "
                                      "{\"timeout\":{\"durationMs\"}}");
        } else {
            next = with_payload(job->call, held, json_incref(payload));
            if (next == NULL)
                goto oom;
            failed = false;
            decision = "replace";
        }
    }
    if (rc != 0)
        goto oom;
    if (failed) {
        json_t *what = clean_text(&why); /* new ref */
        if (what == NULL)
            goto oom;
        next = tg__fail(job->call, held->execution, "HOOK_FAILED", NULL,
                        "after hook '%s' %s; the tool's result is withheld",
                        hook_name(h), json_string_value(what));
        if (next != NULL) {
            next->duration_ms = held->duration_ms;
            next->exit_status = held->exit_status;
            next->decisions = json_incref(held->decisions);
            entry = entry_new(h, "fail", tg_result_error_message(next), true);
        }
        json_decref(what);
        if (next == NULL || entry == NULL)
            goto oom;
    } else {
        entry = entry_new(h, decision, answer ? answer_reason(answer) : NULL,
                          false);
    }
    rc = log_decision(job, entry);
    entry = NULL;
    if (rc != 0)
        goto oom;
    if (next != NULL) {
        tg__result_free(held);
        held = next;
        next = NULL;
    }
    json_decref(answer);
    tg__buf_cleanup(&why);
    if (failed) {
        finish(job, held); /* the later hooks have nothing to review */
        return;
    }
    hooks_next(rt, job, TG__HOOKS_AFTER, h->index + 1, held);
    return;
oom:
    json_decref(entry);
    json_decref(answer);
    tg__buf_cleanup(&why);
    tg__result_free(next);
    tg__result_free(held);
    finish(job, NULL);
}

/* ------------------------------------------------------------ driving */

static void on_hook_done(uv_work_t *w, int status)
{
    tg__hook *h = w->data;
    tg_runtime *rt = h->rt;
    tg__job *job = h->job;
    if (job == NULL) {
        hook_free(h); /* its call ended without it */
        return;
    }
    if (status == UV_ECANCELED && h->run == RUN_OK)
        h->run = RUN_CANCELED;
    job->hook = NULL;
    h->job = NULL;
    if (h->stage == TG__HOOKS_BEFORE)
        before_done(rt, job, h);
    else
        after_done(rt, job, h);
    hook_free(h);
}

/* The input of a hook: the call record, or {"call","result"}. NULL when
 * memory runs out (or the result has no JSON form). */
static char *hook_input(const tg__job *job, const tg_result *held, size_t *len)
{
    json_t *call = tg__call_to_json(job->call); /* new ref */
    tg__buf b;
    tg__buf_init(&b, 0);
    int rc = call != NULL ? 0 : TG_ENOMEM;
    if (rc == 0 && held == NULL)
        rc = tg__json_dump(call, &b);
    else if (rc == 0 && (rc = tg__buf_puts(&b, "{\"call\":")) == 0 &&
             (rc = tg__json_dump(call, &b)) == 0 &&
             (rc = tg__buf_puts(&b, ",\"result\":")) == 0 &&
             (rc = tg__result_write(held, TG__RECORD_DECISIONS, NULL, &b)) == 0)
        rc = tg__buf_append(&b, "}", 1);
    json_decref(call);
    *len = rc == 0 ? b.len : 0;
    char *text = rc == 0 ? tg__buf_take(&b) : NULL;
    tg__buf_cleanup(&b);
    return text;
}

/* argv of the configuration (borrowed) as one allocation. */
static char **argv_copy(const json_t *argv)
{
    size_t n = json_array_size(argv), bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += json_string_length(json_array_get(argv, i)) + 1;
    char **out = malloc((n + 1) * sizeof *out + bytes);
    if (out == NULL)
        return NULL;
    char *s = (char *)(out + n + 1);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(argv, i); /* borrowed */
        size_t l = json_string_length(a);
        memcpy(s, json_string_value(a), l + 1);
        out[i] = s;
        s += l + 1;
    }
    out[n] = NULL;
    return out;
}

/* Starts hook `index` of the stage, or ends the stage when there is none:
 * before -> the tool starts; after -> the job completes with held. */
static void hooks_next(tg_runtime *rt, tg__job *job, int stage, size_t index,
                       tg_result *held)
{
    const json_t *list = stage_list(rt, stage); /* borrowed */
    if (index >= json_array_size(list)) {
        if (stage == TG__HOOKS_AFTER) {
            finish(job, held);
            return;
        }
        /* Every before hook allowed: the tool starts. */
        job->hook = NULL;
        job->hook_stage = TG__HOOKS_TOOL;
        job->hook_end(job, true, NULL);
        return;
    }
    int64_t timeout_ms;
    const json_t *argv =
        hook_spec(rt, stage, index, &timeout_ms); /* borrowed */
    tg__hook *h = calloc(1, sizeof *h);
    if (h == NULL)
        goto oom;
    h->rt = rt;
    h->stage = stage;
    h->index = index;
    h->held = held;
    held = NULL;
    h->wake_fd = -1;
    h->timeout_ms = timeout_ms;
    h->cwd = rt->cfg->workspace;
    atomic_init(&h->canceled, 0);
    h->argv = argv_copy(argv);
    h->input = hook_input(job, h->held, &h->input_len);
    json_t *stage_env = json_pack("{s:s}", "TOOLGATE_HOOK_STAGE",
                                  stage_name(stage)); /* new ref */
    int erc = stage_env ? tg__proc_env(rt->base_env, stage_env, NULL, &h->envp,
                                       &h->env_owned)
                        : ENOMEM;
    json_decref(stage_env);
    if (h->argv == NULL || h->input == NULL || erc != 0)
        goto oom;
    /* A before hook's answer is an object with the arguments at most; an
     * after hook's the result's payload at most: a few times the input. */
    size_t cap = h->input_len > (SIZE_MAX - HOOK_OUT_SLACK) / 4
                     ? SIZE_MAX
                     : h->input_len * 4 + HOOK_OUT_SLACK;
    tg__buf_init(&h->out, cap);
    h->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (h->wake_fd < 0) {
        h->run = RUN_SETUP; /* the worker returns at once; the reason says */
        h->errnum = errno;
    }
    h->work.data = h;
    if (uv_queue_work(&rt->loop, &h->work, on_hook_work, on_hook_done) != 0)
        goto oom;
    h->job = job;
    job->hook = h;
    return;
oom:
    if (h != NULL)
        hook_free(h);
    else
        tg__result_free(held);
    finish(job, NULL);
}

void tg__hooks_before(tg_runtime *rt, tg__job *job, tg__hooks_end_fn end)
{
    job->hook_stage = TG__HOOKS_BEFORE;
    job->hook_end = end;
    hooks_next(rt, job, TG__HOOKS_BEFORE, 0, NULL);
}

bool tg__hooks_after_wanted(const tg_runtime *rt, const tg__job *job,
                            const tg_result *result)
{
    /* Results without tool output (canceled, a timeout of a command that
     * printed nothing) have nothing to redact, and a failing turn drops its
     * results anyway. */
    return job->hook_stage == TG__HOOKS_TOOL && result != NULL &&
           !job->run->failed &&
           (result->outcome == TG_OUTCOME_SUCCESS ||
            result->outcome == TG_OUTCOME_ERROR ||
            tg__result_output_part(result) != NULL) &&
           tg__hooks_have(rt, TG__HOOKS_AFTER);
}

void tg__hooks_after(tg_runtime *rt, tg__job *job, tg_result *result,
                     tg__hooks_end_fn end)
{
    job->hook_stage = TG__HOOKS_AFTER;
    job->hook_end = end;
    hooks_next(rt, job, TG__HOOKS_AFTER, 0, result);
}

void tg__hooks_cancel(tg__job *job, const char *by, const char *reason)
{
    tg__hook *h = job->hook;
    if (h == NULL)
        return;
    job->hook = NULL;
    h->job = NULL;
    /* The worker kills the hook's group and returns; its done callback
     * then only frees it. */
    atomic_store(&h->canceled, 1);
    if (h->wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(h->wake_fd, &one, sizeof one);
        (void)n;
    }
    (void)uv_cancel((uv_req_t *)&h->work);
    tg_result *held = h->held;
    h->held = NULL;
    tg_result *r = tg__result_canceled(
        job->call, held ? held->execution : TG_EXECUTION_NOT_STARTED, by,
        reason);
    if (r != NULL && held != NULL) {
        r->duration_ms = held->duration_ms;
        r->decisions = json_incref(held->decisions);
    }
    tg__result_free(held);
    finish(job, r);
}
