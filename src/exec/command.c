/* SPDX-License-Identifier: MIT */
/*
 * command.c - the command source (source.h): a command tool's call on the
 * loop: spawn (process.c), watch the leader's exit through a pidfd, read
 * stdout and stderr (each capped and spooled past the inline limit,
 * output.c), enforce the deadline budget with TERM-then-KILL of the whole
 * process group, and turn what happened into exactly one result, reported
 * through the scheduler's sink. A command that exits with a status its
 * tool counts as success ("ok_exit", else 0) succeeds with its stdout; any
 * other end of a command that ran (exit status, signal, output limit,
 * deadline) carries what it printed on both streams in its payload.
 *
 * The fork/exec itself runs on libuv's thread pool: vfork suspends the
 * thread that calls it until the child has exec'd, and on the loop thread
 * that would serialise every spawn of the runtime behind one another (and
 * stall every other call's I/O). Workers spawn in parallel; the loop only
 * prepares the call before and wires up its pipes, pidfd and timers after.
 * PR_SET_PDEATHSIG follows the spawning thread, and the pool's threads live
 * as long as the process, so a tool still dies with its runtime.
 *
 * A call ends when its leader process has been reaped and both pipes reached
 * EOF. When the leader exits, its process group is SIGKILLed (nothing a tool
 * started outlives its call); a process that escaped the group and still
 * holds a pipe is waited for only a short drain period.
 *
 * The runtime keeps its own copy of the pipes' write ends until the leader
 * is reaped, so a command that ends wakes the loop once (its pidfd), not
 * once per pipe as each reaches EOF in the exit and then again for the exit
 * itself: the write ends are closed then and the pipes read at once, which
 * usually finds both at EOF and ends the call in that same wake-up. A pipe
 * is closed at its EOF (its epoll registration goes with it).
 *
 * In the sandbox (sandbox.c) the leader is bubblewrap, whose PID namespace
 * dies with it: TERM goes to the sandbox's own process group (the command
 * and what it started), KILL to the namespace's first process, which takes
 * every process in the namespace along, daemons included.
 *
 * In a warm sandbox (warm.c) there is no process of the call here: the
 * call's control socket stands for it. Its EXITED message is the leader's
 * exit (sent once everything the command started is gone), TERM and KILL
 * are messages to the call's reaper, and EOF before EXITED means the
 * sandbox died under the call (INTERRUPTED).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "quote.h"
#include "output.h"
#include "process.h"
#include "sandbox.h"
#include "source.h"
#include "text.h"
#include "timeutil.h"
#include "warm.h"
#include "watchdog.h"

/* bubblewrap's own failure is a short "bwrap: ..." on stderr */
#define BWRAP_MSG_MAX 2048
#define ERR_HEAD 512 /* first bytes of stderr kept to recognise it */

enum { STOP_NONE = 0, STOP_TIMEOUT, STOP_CANCEL, STOP_OUTPUT };
enum { PHASE_NONE = 0, PHASE_DEADLINE, PHASE_GRACE, PHASE_DRAIN };

typedef struct tg__proc {
    const tg__source_env *env;
    /* the call, borrowed from the scheduler until done */
    bool live; /* false once the call has its result (done was called) */
    const tg_call *call;
    const tg__tool *tool;
    char *const *argv;
    uint64_t start_ns;
    tg__source_sink sink;
    pid_t pid;
    int pidfd;
    uv_poll_t exitw;
    uv_pipe_t out, err, in;
    uv_timer_t timer;
    uv_write_t wreq;
    int open_handles;
    bool have_in, exitw_on;
    bool exited, out_done, err_done, finished;
    bool status_known;
    int status;
    int stop;
    int phase;
    int64_t budget_ms;
    char *stop_by, *stop_reason;
    char *stdin_data;
    size_t stdin_len;
    tg__output output; /* stdout: in memory or to the spool (output.c) */
    bool output_on;    /* output was started */
    tg__output errout; /* stderr, the same way, from its first byte */
    bool err_on;       /* errout was started */
    /* spawning happens on the thread pool (see command_start) */
    uv_work_t spawn_req;
    bool spawning, stop_hard;
    tg__spawn sp;
    tg__spawn_extra spx;
    char path[PATH_MAX];
    char *cwd_owned;
    void *env_owned;
    int outp[2], errp[2], inp[2];
    int spawn_rc, spawn_stage, spawn_errnum;
    char err_head[ERR_HEAD]; /* the first bytes of stderr */
    uint64_t err_bytes;      /* bytes of stderr read */
    /* the sandbox */
    tg__sbx_level level;
    char **bargv;        /* bubblewrap's argv (strings borrowed) */
    int info[2], blk[2]; /* --info-fd pipe, --block-fd socket pair */
    pid_t inner;         /* the sandbox's PID 1, 0: none */
    int inner_pidfd;
    int hs_rc; /* the hand-shake failed: the sandbox was killed */
    char hs_why[256];
    tg__rlimit limits[TG__SBX_MAX_LIMITS + 1];
    /* a warm sandbox (warm.h) */
    int ctl;             /* the call's control socket, -1: none */
    tg__warm_helper *wh; /* the sandbox it runs in (a reference) */
    int warm_rc;         /* tg__warm_spawn's */
    bool interrupted;    /* the sandbox ended before the command did */
    bool warm_failed;    /* it could not start (spawn_stage, spawn_errnum) */
} tg__proc;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void free_proc(tg__proc *p)
{
    if (p->ctl >= 0)
        close(p->ctl); /* the reaper kills what is left, if anything */
    tg__warm_release(p->env->sandbox, p->wh);
    close_fd(&p->outp[1]);
    close_fd(&p->errp[1]);
    if (p->pidfd >= 0)
        close(p->pidfd);
    if (p->inner_pidfd >= 0)
        close(p->inner_pidfd);
    if (p->output_on)
        tg__output_abort(&p->output);
    if (p->err_on)
        tg__output_abort(&p->errout);
    free(p->stop_by);
    free(p->stop_reason);
    free(p->stdin_data);
    free(p->cwd_owned);
    free(p);
}

static void on_close(uv_handle_t *h)
{
    tg__proc *p = h->data;
    if (--p->open_handles == 0)
        free_proc(p);
}

static void close_handle(uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_close);
}

static void close_all(tg__proc *p)
{
    close_handle((uv_handle_t *)&p->timer);
    close_handle((uv_handle_t *)&p->out);
    close_handle((uv_handle_t *)&p->err);
    if (p->have_in)
        close_handle((uv_handle_t *)&p->in);
    if (p->exitw_on)
        close_handle((uv_handle_t *)&p->exitw);
}

/* bubblewrap's own failure (it exits 1 after "bwrap: ..." on stderr, before
 * the command ran): the message, or NULL. */
static const char *bwrap_failure(const tg__proc *p, char *buf, size_t cap)
{
    size_t kept = p->err_bytes < ERR_HEAD ? (size_t)p->err_bytes : ERR_HEAD;
    if (p->level != TG__SBX_BWRAP || !WIFEXITED(p->status) ||
        WEXITSTATUS(p->status) != 1 || p->err_bytes >= BWRAP_MSG_MAX ||
        kept < 7 || strncmp(p->err_head, "bwrap: ", 7) != 0)
        return NULL;
    const char *nl = memchr(p->err_head + 7, '\n', kept - 7);
    size_t n = nl ? (size_t)(nl - p->err_head - 7) : kept - 7;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p->err_head + 7, n);
    buf[n] = '\0';
    return buf;
}

static tg_result *spawn_error(const tg_call *call, const char *prog,
                              const char *cwd, int stage, int errnum);

/* The result of a command that ended by itself. NULL with *status the
 * exit status when that status is success for its tool (its output is the
 * result); NULL alone on out of memory. *shown: the result is one that
 * carries what the command printed (it ran and failed). */
static tg_result *exit_result(tg__proc *p, int *status, bool *shown)
{
    const tg_call *call = p->call;
    char sig[32], why[BWRAP_MSG_MAX];
    *status = -1;
    *shown = false;
    if (p->hs_rc != 0)
        return tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                        "the sandbox could not be set up: %s", p->hs_why);
    if (p->interrupted)
        return tg__fail(call, TG_EXECUTION_STARTED, "INTERRUPTED", NULL,
                        "the warm sandbox ended while the command ran");
    if (p->warm_failed)
        return spawn_error(call, p->argv[0], p->sp.cwd, p->spawn_stage,
                           p->spawn_errnum);
    if (!p->status_known)
        return tg__fail(call, TG_EXECUTION_STARTED, "TOOL_FAILED", NULL,
                        "cannot read the exit status of the command");
    int signum = WIFSIGNALED(p->status) ? WTERMSIG(p->status) : 0;
    /* bubblewrap reports a command killed by signal N as status 128 + N */
    if (p->level == TG__SBX_BWRAP && WIFEXITED(p->status) &&
        WEXITSTATUS(p->status) > 128 && WEXITSTATUS(p->status) <= 128 + 64)
        signum = WEXITSTATUS(p->status) - 128;
    json_t *details; /* new ref */
    if (signum != 0) {
        *shown = true;
        if ((details = json_pack("{s:i}", "signal", signum)) == NULL)
            return NULL;
        return tg__fail(call, TG_EXECUTION_STARTED, "KILLED_BY_SIGNAL", details,
                        "command was killed by signal %d (%s)", signum,
                        tg__signal_name(signum, sig));
    }
    if (bwrap_failure(p, why, sizeof why) != NULL)
        return tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                        "the sandbox could not start the command: %s", why);
    int code = WEXITSTATUS(p->status);
    if (tg__tool_exit_ok(p->tool, code)) {
        *status = code; /* the output is the result (maybe_finish) */
        return NULL;
    }
    *shown = true;
    if ((details = json_pack("{s:i}", "exit_status", code)) == NULL)
        return NULL;
    tg_result *r = tg__fail(call, TG_EXECUTION_FINISHED, "EXIT_STATUS", details,
                            "command exited with status %d", code);
    if (r != NULL)
        r->exit_status = code;
    return r;
}

static void maybe_finish(tg__proc *p)
{
    if (p->finished || !p->exited || !p->out_done || !p->err_done)
        return;
    p->finished = true;
    uv_timer_stop(&p->timer);
    const tg_call *call = p->call;
    tg_result *r;
    int status = -1;
    bool shown = false; /* the result carries what the command printed */
    switch (p->stop) {
    case STOP_TIMEOUT:
        /* what it printed before it was stopped says where it hung */
        r = tg__result_timeout(call, p->budget_ms);
        shown = true;
        break;
    case STOP_CANCEL:
        r = tg__result_canceled(call, TG_EXECUTION_STARTED, p->stop_by,
                                p->stop_reason);
        break;
    case STOP_OUTPUT:
        r = tg__fail(call, TG_EXECUTION_STARTED, "OUTPUT_LIMIT", NULL,
                     "the command's output exceeded %lld bytes "
                     "(limits.max_output_bytes); it was stopped, and what "
                     "it wrote is kept",
                     (long long)p->env->cfg->max_output_bytes);
        shown = true;
        break;
    default:
        r = exit_result(p, &status, &shown);
    }
    if (shown) {
        /* stdout and stderr go into the payload (output.c) */
        r = tg__output_attach(&p->output, p->err_on ? &p->errout : NULL, call,
                              r);
        p->output_on = p->err_on = false;
    } else if (r != NULL || status >= 0) {
        /* The result itself on success; a cancel keeps the artifact when
         * the output was spooled. stderr goes with neither. */
        r = tg__output_finish(&p->output, call, r);
        p->output_on = false;
        if (r != NULL && status >= 0)
            r->exit_status = status;
    }
    if (r != NULL)
        r->duration_ms = (double)(tg__mono_ns() - p->start_ns) / 1e6;
    p->live = false;
    p->sink.done(p->sink.ctx, r);
    close_all(p);
}

static void on_timer(uv_timer_t *t);

static void arm(tg__proc *p, int phase, uint64_t ms)
{
    p->phase = phase;
    /* The loop's clock is cached from the start of its iteration; a budget
     * counted from there would end early by however long the iteration has
     * run (spawns included). */
    uv_update_time(p->timer.loop);
    uv_timer_start(&p->timer, on_timer, ms, 0);
}

/* True while the sandbox's PID 1 has not exited: its process group (the
 * sandbox's session) cannot have been reused. */
static bool inner_alive(const tg__proc *p)
{
    if (p->inner <= 0 || p->inner_pidfd < 0)
        return false;
    struct pollfd pf = {p->inner_pidfd, POLLIN, 0};
    return poll(&pf, 1, 0) == 0;
}

/* KILL: the tool's group, and in the sandbox its PID 1 (which ends the
 * namespace at once; the pidfd cannot name another process). */
static void kill_group(tg__proc *p)
{
    if (p->level == TG__SBX_WARM) {
        tg__warm_signal(p->ctl, SIGKILL);
        return;
    }
    kill(-p->pid, SIGKILL);
    if (p->inner_pidfd >= 0)
        (void)syscall(SYS_pidfd_send_signal, p->inner_pidfd, SIGKILL, NULL, 0);
}

/* TERM: in the sandbox, to the group of the command inside (bubblewrap
 * would die of it at once and take the command without a grace period). */
static void term_group(tg__proc *p)
{
    if (p->level == TG__SBX_WARM)
        tg__warm_signal(p->ctl, SIGTERM);
    else if (p->level == TG__SBX_BWRAP && inner_alive(p))
        kill(-p->inner, SIGTERM);
    else
        kill(-p->pid, SIGTERM);
}

/* Starts stopping the process group: TERM now and KILL after the grace
 * period, or KILL at once. The first reason to stop is the one reported. */
static void stop_group(tg__proc *p, int why, const char *by, const char *reason,
                       bool hard)
{
    if (p->exited || p->finished)
        return; /* it ended on its own; that is its result */
    if (p->stop == STOP_NONE) {
        p->stop = why;
        /* On out of memory the canceled payload uses its defaults. */
        (void)tg__strset(&p->stop_by, by);
        (void)tg__strset(&p->stop_reason, reason);
    }
    if (p->spawning) {
        /* No process yet. A spawn still waiting for a pool thread is called
         * off (spawn_done then sees UV_ECANCELED); one under way is stopped
         * by spawn_done once the process exists. */
        p->stop_hard = p->stop_hard || hard;
        (void)uv_cancel((uv_req_t *)&p->spawn_req);
        return;
    }
    if (hard || p->env->kill_grace_ms <= 0) {
        kill_group(p);
        uv_timer_stop(&p->timer);
        p->phase = PHASE_NONE;
        return;
    }
    if (p->phase == PHASE_GRACE)
        return;
    term_group(p);
    arm(p, PHASE_GRACE, (uint64_t)p->env->kill_grace_ms);
}

/* The source's cancel (source.h). */
static void command_cancel(void *state, const char *by, const char *reason,
                           bool hard)
{
    stop_group(state, STOP_CANCEL, by, reason, hard);
}

static void on_timer(uv_timer_t *t)
{
    tg__proc *p = t->data;
    switch (p->phase) {
    case PHASE_DEADLINE:
        stop_group(p, STOP_TIMEOUT, NULL, NULL, false);
        break;
    case PHASE_GRACE:
        p->phase = PHASE_NONE;
        if (!p->exited)
            kill_group(p);
        break;
    case PHASE_DRAIN:
        /* Something outside the group still holds a pipe: stop waiting. */
        p->phase = PHASE_NONE;
        close_handle((uv_handle_t *)&p->out);
        close_handle((uv_handle_t *)&p->err);
        p->out_done = p->err_done = true;
        maybe_finish(p);
        break;
    default:
        break;
    }
}

static void on_out(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_err(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

/* Reads what a pipe holds now, without waiting, through its read callback
 * (as libuv would on readiness), until it would block or ends. */
static void read_now(tg__proc *p, uv_pipe_t *pipe, uv_read_cb cb,
                     const bool *done)
{
    int fd;
    while (!*done && !uv_is_closing((uv_handle_t *)pipe) &&
           uv_fileno((uv_handle_t *)pipe, &fd) == 0) {
        ssize_t n = read(fd, p->env->scratch, p->env->scratch_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return; /* someone else still holds it: libuv goes on */
        uv_buf_t b = uv_buf_init(p->env->scratch, n > 0 ? (unsigned)n : 0);
        cb((uv_stream_t *)pipe,
           n > 0    ? n
           : n == 0 ? UV_EOF
                    : uv_translate_sys_error(errno),
           &b);
    }
}

static void leader_gone(tg__proc *p);

/* The warm call's control socket is readable: its end, or EOF. */
static void on_warm_ready(uv_poll_t *h, int status, int events)
{
    tg__proc *p = h->data;
    if (p->exited) {
        uv_poll_stop(h);
        return;
    }
    int st = 0;
    int r = tg__warm_read_exit(p->ctl, &st, &p->spawn_stage, &p->spawn_errnum);
    if (r < 0)
        return; /* not yet */
    uv_poll_stop(h);
    if (r == 2) {
        p->warm_failed = true;
    } else if (r == 1) {
        p->status_known = true;
        p->status = st;
    } else {
        p->interrupted = true;
        /* its sandbox may be going: the next call gets a new one */
        tg__warm_forget(p->env->sandbox, p->wh);
    }
    leader_gone(p);
}

static void on_exit_ready(uv_poll_t *h, int status, int events)
{
    tg__proc *p = h->data;
    /* Watched once: closing the handle is its only epoll_ctl. */
    close_handle((uv_handle_t *)h);
    if (p->exited)
        return;
    /* Kill what the leader left behind before reaping it: while it is a
     * zombie its pid cannot be reused, so -pid still names its group. */
    kill(-p->pid, SIGKILL);
    int st = 0;
    pid_t r;
    do {
        r = waitpid(p->pid, &st, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
        /* A readable pidfd means the process has exited; be safe anyway. */
        do {
            r = waitpid(p->pid, &st, 0);
        } while (r < 0 && errno == EINTR);
    }
    if (r == p->pid) {
        p->status_known = true;
        p->status = st;
    }
    /* The group is gone (its leader reaped, the rest killed above). */
    tg__watchdog_remove(p->env->watch, p->pid);
    leader_gone(p);
}

/* The call's leader has ended (status read): drain its pipes and finish. */
static void leader_gone(tg__proc *p)
{
    p->exited = true;
    uv_timer_stop(&p->timer);
    p->phase = PHASE_NONE;
    /* Our copies of the write ends go: the pipes end when nobody else
     * holds them, which is usually now. */
    close_fd(&p->outp[1]);
    close_fd(&p->errp[1]);
    read_now(p, &p->out, on_out, &p->out_done);
    read_now(p, &p->err, on_err, &p->err_done);
    if (p->finished)
        return;
    if (!(p->out_done && p->err_done)) {
        int64_t drain = p->env->kill_grace_ms;
        arm(p, PHASE_DRAIN, (uint64_t)(drain < 100 ? 100 : drain));
    }
    maybe_finish(p);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    tg__proc *p = h->data;
    b->base = p->env->scratch;
    b->len = p->env->scratch_len;
}

static void on_out(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    tg__proc *p = s->data;
    if (n > 0) {
        if (p->live)
            p->sink.output(p->sink.ctx, 1, b->base, (size_t)n);
        int rc = tg__output_write(&p->output, b->base, (size_t)n);
        if (rc == 0)
            return;
        /* Past the cap (or out of memory, or the spool failed: then the
         * output's finish reports SPOOL_FAILED): the call ends with
         * OUTPUT_LIMIT; nothing more is read. */
        uv_read_stop(s);
        p->out_done = true;
        /* Also when the process has already exited: its output is cut. */
        if (p->stop == STOP_NONE)
            p->stop = STOP_OUTPUT;
        stop_group(p, STOP_OUTPUT, NULL, NULL, false);
        maybe_finish(p);
        return;
    }
    if (n < 0) {
        close_handle((uv_handle_t *)s); /* EOF or a read error */
        p->out_done = true;
        maybe_finish(p);
    }
}

static void on_err(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    tg__proc *p = s->data;
    if (n > 0) {
        if (p->live)
            p->sink.output(p->sink.ctx, 2, b->base, (size_t)n);
        if (p->err_bytes < ERR_HEAD) {
            size_t k = ERR_HEAD - (size_t)p->err_bytes;
            memcpy(p->err_head + p->err_bytes, b->base,
                   k < (size_t)n ? k : (size_t)n);
        }
        p->err_bytes += (uint64_t)n;
        if (!p->live)
            return; /* the call has its result: nothing is kept */
        if (!p->err_on) {
            /* Started at the first byte: most commands write nothing to
             * stderr. A failed start is kept in errout and reported if the
             * output is shown. */
            (void)tg__output_init(&p->errout, p->env->cfg, p->env->spool,
                                  p->call);
            p->err_on = true;
        }
        /* Past limits.max_output_bytes the rest is read and dropped: the
         * tool is not stopped for what it logs. Spool errors are sticky
         * and reported by the finish. */
        (void)tg__output_write(&p->errout, b->base, (size_t)n);
        return;
    }
    if (n < 0) {
        close_handle((uv_handle_t *)s); /* EOF or a read error */
        p->err_done = true;
        maybe_finish(p);
    }
}

static void on_written(uv_write_t *req, int status)
{
    tg__proc *p = req->data;
    /* EOF on the tool's stdin; a tool that exited early gives EPIPE, which
     * is not the call's failure. */
    close_handle((uv_handle_t *)&p->in);
}

/* Opens a pipe end as a libuv stream and starts reading; on failure the
 * stream counts as ended (the fd is closed). */
static void open_reader(uv_pipe_t *pipe, int fd, uv_read_cb cb, bool *done)
{
    if (uv_pipe_open(pipe, fd) != 0) {
        close(fd);
        *done = true;
        return;
    }
    if (uv_read_start((uv_stream_t *)pipe, on_alloc, cb) != 0)
        *done = true;
}

static tg_result *spawn_error(const tg_call *call, const char *prog,
                              const char *cwd, int stage, int errnum)
{
    switch (stage) {
    case TG__SPAWN_STAGE_CHDIR: {
        tg__quote_buf q; /* the call's context.cwd, of any length */
        return tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                        "cannot change to directory '%s': %s",
                        tg__quote(&q, cwd ? cwd : "."), strerror(errnum));
    }
    case TG__SPAWN_STAGE_EXEC:
        return tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                        "cannot run '%s': %s", prog, strerror(errnum));
    default:
        return tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                        "cannot start '%s': %s", prog, strerror(errnum));
    }
}

static void close_pipes(tg__proc *p)
{
    close_fd(&p->outp[0]);
    close_fd(&p->outp[1]);
    close_fd(&p->errp[0]);
    close_fd(&p->errp[1]);
    close_fd(&p->inp[0]);
    close_fd(&p->inp[1]);
    for (int i = 0; i < 2; i++) {
        close_fd(&p->info[i]);
        close_fd(&p->blk[i]);
    }
}

/* Gives up a process record before its process runs: its only handle is
 * the timer, whose close callback frees it. */
static void abandon(tg__proc *p)
{
    close_pipes(p);
    free(p->env_owned);
    free(p->cwd_owned);
    free(p->bargv);
    p->env_owned = p->cwd_owned = NULL;
    p->bargv = NULL;
    close_handle((uv_handle_t *)&p->timer);
}

/* Records how the call's process is confined in its decisions (merged
 * into its result). Returns 0 or TG_ENOMEM. */
static int set_decision(const tg__source_sink *sink, tg__sbx_level level)
{
    return sink->decide(sink->ctx, "sandbox",
                        json_string(tg__sandbox_level_name(level)));
}

/* 0 when path (relative ones from cwd) is an executable regular file, else
 * an errno value. In the sandbox bubblewrap would run it; a missing program
 * is refused here, as execve would refuse it outside. */
static int runnable(const char *path, const char *cwd)
{
    char joined[PATH_MAX];
    if (path[0] != '/' && cwd != NULL) {
        int n = snprintf(joined, sizeof joined, "%s/%s", cwd, path);
        if (n < 0 || (size_t)n >= sizeof joined)
            return ENAMETOOLONG;
        path = joined;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* On a pool thread: the fork and exec, nothing else. */
static void spawn_work(uv_work_t *req)
{
    tg__proc *p = req->data;
    pid_t pid = 0;
    if (p->level == TG__SBX_WARM) {
        tg__warm_call wc = {p->sp.path,
                            p->sp.argv,
                            p->sp.envp,
                            p->sp.cwd ? p->sp.cwd : p->env->cfg->workspace,
                            p->sp.fd_in,
                            p->sp.fd_out,
                            p->sp.fd_err,
                            p->spx.limits,
                            p->spx.nlimits,
                            p->tool->network,
                            tg_call_caller_id(p->call)};
        p->warm_rc = tg__warm_spawn(
            p->env->sandbox, p->env->cfg, p->env->watch, &wc, &p->ctl, &p->wh,
            &p->spawn_stage, &p->spawn_errnum, p->hs_why, sizeof p->hs_why);
        p->spawn_rc = p->warm_rc == 0 ? 0 : -1;
        return;
    }
    tg__watchdog_ready(p->env->watch);
    p->spawn_rc = tg__proc_spawn_pidfd(&p->sp, &p->spx, &pid, &p->pidfd,
                                       &p->spawn_stage, &p->spawn_errnum);
    p->pid = pid;
    if (p->spawn_rc == 0)
        tg__watchdog_add(p->env->watch, pid); /* dies with the runtime */
    if (p->level != TG__SBX_BWRAP)
        return;
    /* The child's ends are the child's; ours see EOF when it is gone. */
    close_fd(&p->info[1]);
    close_fd(&p->blk[0]);
    if (p->spawn_rc == 0) {
        p->hs_rc = tg__sandbox_handshake(p->env->sandbox, p->info[0], p->blk[1],
                                         &p->inner, &p->inner_pidfd, p->hs_why,
                                         sizeof p->hs_why);
        /* Killed while it still waits: closing block_fd lets it run. */
        if (p->hs_rc != 0)
            kill_group(p);
    }
    close_fd(&p->info[0]);
    close_fd(&p->blk[1]);
    free(p->bargv);
    p->bargv = NULL;
}

static void spawn_done(uv_work_t *req, int status);
static void watch_streams(tg__proc *p, uv_poll_cb ready);

/* The source's start (source.h). */
static void command_start(const tg__source_call *c, void **state)
{
    const tg__source_env *env = c->env;
    const tg_call *call = c->call;
    const tg__tool *tool = c->tool;
    char **envp = NULL;
    tg_result *refusal = NULL;
    const char *prog = c->argv[0];
    tg__proc *p = calloc(1, sizeof *p);
    if (p == NULL) {
        c->sink.done(c->sink.ctx, NULL); /* out of memory: no refusal */
        return;
    }
    p->env = env;
    p->call = call;
    p->tool = tool;
    p->argv = c->argv;
    p->start_ns = c->start_ns;
    p->sink = c->sink;
    p->budget_ms = c->budget_ms;
    if (c->has_stdin) {
        /* The stdin text moves to the process: the write may still be
         * pending when the turn ends. */
        p->stdin_data = *c->stdin_text;
        p->stdin_len = c->stdin_len;
        *c->stdin_text = NULL;
    }
    p->pidfd = -1;
    p->outp[0] = p->outp[1] = p->errp[0] = p->errp[1] = -1;
    p->inp[0] = p->inp[1] = -1;
    p->info[0] = p->info[1] = p->blk[0] = p->blk[1] = -1;
    p->inner_pidfd = -1;
    p->ctl = -1;
    p->level = tg__sandbox_level(env->sandbox, tool);
    /* The deadline runs from here, spawn included. */
    uv_timer_init(env->loop, &p->timer);
    p->timer.data = p;
    p->open_handles = 1;

    if (tg__output_init(&p->output, env->cfg, env->spool, call) != 0) {
        refusal = tg__fail(call, TG_EXECUTION_NOT_STARTED, "SPOOL_FAILED", NULL,
                           "cannot keep the output of '%s': %s", prog,
                           p->output.e.message);
        goto fail;
    }
    p->output_on = true;

    const char *cwd;
    if (tg__call_cwd(env->cfg, call, &cwd, &p->cwd_owned) != 0)
        goto fail; /* out of memory: no refusal */
    const json_t *ctx_env = call->context
                                ? json_object_get(call->context, "env")
                                : NULL; /* borrowed */
    if (tg__proc_env_tool(env->base_env, env->pass_env, tool->env_pass,
                          tool->env, ctx_env, &envp, &p->env_owned) != 0)
        goto fail; /* out of memory: no refusal */
    int e = tg__proc_resolve(prog, tg__proc_getenv(envp, "PATH"), cwd, p->path,
                             sizeof p->path);
    /* A program or cwd a warm sandbox does not show: a bubblewrap of its
     * own, which binds them. */
    if (e == 0 && p->level == TG__SBX_WARM &&
        !tg__sandbox_warm_fits(env->cfg, cwd, p->path))
        p->level = TG__SBX_BWRAP;
    /* How it is confined goes with its result (decisions.sandbox). */
    if (set_decision(&p->sink, p->level) != 0)
        goto fail; /* out of memory: no refusal */
    if (e == 0 && p->level >= TG__SBX_BWRAP)
        e = runnable(p->path, cwd);
    if (e != 0) {
        refusal = spawn_error(call, prog, cwd, TG__SPAWN_STAGE_EXEC, e);
        goto fail;
    }
    if (pipe2(p->outp, O_CLOEXEC) != 0 || pipe2(p->errp, O_CLOEXEC) != 0 ||
        (c->has_stdin && pipe2(p->inp, O_CLOEXEC) != 0) ||
        (p->level == TG__SBX_BWRAP &&
         (pipe2(p->info, O_CLOEXEC) != 0 ||
          socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p->blk) != 0))) {
        refusal = spawn_error(call, prog, cwd, TG__SPAWN_STAGE_SETUP, errno);
        goto fail;
    }
    p->sp = (tg__spawn){p->path,
                        c->argv,
                        envp,
                        cwd,
                        c->has_stdin ? p->inp[0] : env->devnull,
                        p->outp[1],
                        p->errp[1]};
    p->spx.limits = p->limits;
    p->spx.nlimits = tg__sandbox_limits(env->sandbox, p->level, p->limits);
    if (p->level == TG__SBX_BWRAP) {
        p->bargv = tg__sandbox_argv(env->sandbox, env->cfg, tool, cwd, p->path,
                                    c->argv);
        if (p->bargv == NULL)
            goto fail; /* out of memory: no refusal */
        p->sp.path = env->sandbox->bwrap;
        p->sp.argv = p->bargv;
        p->spx.nkeep = 2;
        p->spx.keep[0] = p->info[1];
        p->spx.keep[1] = p->blk[0];
    }
    /* The call is stoppable from now on: a cancel or the deadline arriving
     * while the pool spawns is recorded and applied in spawn_done. */
    p->live = true;
    *state = p;
    p->spawning = true;
    p->spawn_req.data = p;
    if (c->alone) {
        /* Nothing else runs that the spawn could stall, so skip the trip
         * through the pool (two thread wake-ups per call). */
        spawn_work(&p->spawn_req);
        if (p->budget_ms > 0)
            arm(p, PHASE_DEADLINE, (uint64_t)p->budget_ms);
        spawn_done(&p->spawn_req, 0);
        return;
    }
    int qerr = uv_queue_work(env->loop, &p->spawn_req, spawn_work, spawn_done);
    if (qerr != 0) {
        p->live = false;
        refusal = tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                           "cannot start '%s': %s", prog, uv_strerror(qerr));
        goto fail;
    }
    if (p->budget_ms > 0)
        arm(p, PHASE_DEADLINE, (uint64_t)p->budget_ms);
    return;

fail:
    abandon(p);
    c->sink.done(c->sink.ctx, refusal);
}

static void spawn_done(uv_work_t *req, int status)
{
    tg__proc *p = req->data;
    const tg__source_env *env = p->env;
    const tg_call *call = p->call;
    const char *prog = p->argv[0];
    tg_result *refusal = NULL;
    p->spawning = false;
    /* The child's stdin end belongs to the child now (or to nobody); the
     * output write ends stay until the leader is reaped (see the top). */
    close_fd(&p->inp[0]);
    if (status == UV_ECANCELED) {
        /* Stopped before a pool thread took it: it never ran. */
        if (p->stop == STOP_TIMEOUT) {
            refusal = tg__result_timeout(call, p->budget_ms);
            if (refusal != NULL)
                refusal->execution = TG_EXECUTION_NOT_STARTED;
        } else {
            refusal = tg__result_canceled(call, TG_EXECUTION_NOT_STARTED,
                                          p->stop_by, p->stop_reason);
        }
        goto fail;
    }
    if (p->warm_rc == -2) {
        refusal = tg__fail(call, TG_EXECUTION_NOT_STARTED, "TOOL_FAILED", NULL,
                           "the warm sandbox could not run '%s': %s", prog,
                           p->hs_why);
        goto fail;
    }
    if (p->spawn_rc != 0) {
        refusal =
            spawn_error(call, prog, p->sp.cwd, p->spawn_stage, p->spawn_errnum);
        goto fail;
    }
    free(p->env_owned);
    p->env_owned = NULL;
    if (p->level == TG__SBX_WARM) {
        /* the control socket stands for the process */
        int uerr = uv_poll_init(env->loop, &p->exitw, p->ctl);
        if (uerr != 0) {
            refusal = tg__fail(call, TG_EXECUTION_STARTED, "TOOL_FAILED", NULL,
                               "cannot watch the process of '%s': %s", prog,
                               uv_strerror(uerr));
            goto fail; /* free_proc closes ctl: the reaper kills it */
        }
        watch_streams(p, on_warm_ready);
        return;
    }

    if (p->pidfd < 0) /* the spawn made none: a kernel before 5.2 */
        p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    int uerr = p->pidfd < 0 ? uv_translate_sys_error(errno)
                            : uv_poll_init(env->loop, &p->exitw, p->pidfd);
    if (uerr != 0) {
        /* Cannot watch it: do not leave it running. */
        int st;
        kill(-p->pid, SIGKILL);
        while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
            ;
        tg__watchdog_remove(env->watch, p->pid);
        refusal = tg__fail(call, TG_EXECUTION_STARTED, "TOOL_FAILED", NULL,
                           "cannot watch the process of '%s': %s", prog,
                           uv_strerror(uerr));
        goto fail;
    }
    watch_streams(p, on_exit_ready);
    return;

fail:
    uv_timer_stop(&p->timer);
    p->live = false;
    abandon(p);
    p->sink.done(p->sink.ctx, refusal);
}

/* Watches the process through exitw (initialised) with `ready`, reads its
 * pipes, writes its stdin, and applies a stop that came while spawning. */
static void watch_streams(tg__proc *p, uv_poll_cb ready)
{
    const tg__source_env *env = p->env;
    if (p->level != TG__SBX_WARM) {
        /* (a warm call's failure to start names its cwd) */
        free(p->cwd_owned);
        p->cwd_owned = NULL;
    }
    p->exitw_on = true;
    p->exitw.data = p;
    uv_pipe_init(env->loop, &p->out, 0);
    uv_pipe_init(env->loop, &p->err, 0);
    p->out.data = p->err.data = p;
    p->open_handles += 3;
    if (p->inp[1] >= 0) { /* it has a stdin text (pipe made at start) */
        p->have_in = true;
        uv_pipe_init(env->loop, &p->in, 0);
        p->in.data = p;
        p->open_handles++;
    }
    uv_poll_start(&p->exitw, UV_READABLE, ready);
    open_reader(&p->out, p->outp[0], on_out, &p->out_done);
    open_reader(&p->err, p->errp[0], on_err, &p->err_done);
    p->outp[0] = p->errp[0] = -1;
    if (p->have_in) {
        uv_buf_t b = uv_buf_init(p->stdin_data, (unsigned)p->stdin_len);
        p->wreq.data = p;
        if (uv_pipe_open(&p->in, p->inp[1]) != 0) {
            close_fd(&p->inp[1]);
            close_handle((uv_handle_t *)&p->in);
        } else {
            p->inp[1] = -1;
            if (p->stdin_len == 0 || uv_write(&p->wreq, (uv_stream_t *)&p->in,
                                              &b, 1, on_written) != 0)
                close_handle((uv_handle_t *)&p->in);
        }
    }
    if (p->stop != STOP_NONE) {
        /* Stopped while it was being spawned: apply it now. */
        int why = p->stop;
        p->stop = STOP_NONE;
        stop_group(p, why, p->stop_by, p->stop_reason, p->stop_hard);
    }
}

const tg__source_ops tg__command_source = {
    .name = "command",
    .flags = 0,
    .start = command_start,
    .cancel = command_cancel,
};
