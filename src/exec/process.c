/* SPDX-License-Identifier: MIT */
/*
 * process.c - spawning a command tool's process (process.h).
 *
 * The child is made the way vfork() makes it (clone with CLONE_VM |
 * CLONE_VFORK): the parent thread is suspended until the child has exec'd
 * (or failed), which makes a spawn cost about what posix_spawn costs, and is
 * safe because the child writes nothing but its own stack frames and the
 * kernel state of the new process. Like posix_spawn the child runs on a
 * stack of its own (a buffer in the parent's frame, idle while the parent
 * waits), and clone's CLONE_PIDFD hands back a pidfd of it in the same
 * system call. Signals are blocked across the clone so no handler of the
 * parent can run in the child; the child resets every disposition to the
 * default before it unblocks them. Define TG_SPAWN_FORK to use fork()
 * instead (the child code is the same).
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TG__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG__ASAN 1
#endif
#endif
#ifdef TG__ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
/* The child's stack until it execs: child_main and the libc calls it
 * makes need a few KiB. */
#define CHILD_STACK (32 * 1024)

/* The kernel's struct sigaction for rt_sigaction (x86-64, arm64 and the
 * other architectures of the generic layout), and the highest signal. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};
#define TG__MAX_SIGNAL 64

typedef struct child_report {
    int stage;
    int err;
} child_report;

/* In the child: tells the parent what failed, then exits. */
static void __attribute__((noreturn)) child_fail(int fd, int stage, int err)
{
    child_report r = {stage, err};
    ssize_t n;
    do {
        n = write(fd, &r, sizeof r);
    } while (n < 0 && errno == EINTR);
    _exit(127);
}

/* In the child, between vfork and exec: async-signal-safe calls only, no
 * allocation, no writes to memory shared with the parent. */
static void __attribute__((noreturn))
child_main(const tg__spawn *sp, const tg__spawn_extra *x, int errfd,
           pid_t parent)
{
    /* Own process group, so the whole tree can be signalled at once. */
    if (setpgid(0, 0) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* Die with the runtime even when it is SIGKILLed... */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* ...including when it died before the line above ran. */
    if (getppid() != parent)
        _exit(127);

    /* Default dispositions: exec resets caught signals by itself, but not
     * ignored ones, and a handler must not run here before exec. This goes
     * through the raw system call because glibc's sigaction refuses the two
     * signals it reserves (32 and 33), and a parent that inherited them
     * ignored would hand that on to every tool. */
    for (int s = 1; s <= TG__MAX_SIGNAL; s++) {
        struct kernel_sigaction cur;
        if (s == SIGKILL || s == SIGSTOP)
            continue;
        if (syscall(SYS_rt_sigaction, s, NULL, &cur, sizeof cur.mask) == 0 &&
            cur.handler != SIG_DFL) {
            struct kernel_sigaction dfl = {SIG_DFL, 0, NULL, 0};
            (void)syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
        }
    }

    if (dup2(sp->fd_in, 0) < 0 || dup2(sp->fd_out, 1) < 0 ||
        dup2(sp->fd_err, 2) < 0)
        child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    /* Descriptors the host opened without O_CLOEXEC stay out of the tool.
     * Failure (old kernel) is not fatal. */
    (void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    /* The descriptors handed on (all above them, see tg__proc_spawn); dup2
     * leaves the copies without FD_CLOEXEC. */
    for (int i = 0; i < x->nkeep; i++)
        if (dup2(x->keep[i], 3 + i) < 0)
            child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    for (size_t i = 0; i < x->nlimits; i++) {
        struct rlimit rl = {x->limits[i].value, x->limits[i].value};
        if (setrlimit((__rlimit_resource_t)x->limits[i].resource, &rl) != 0)
            child_fail(errfd, TG__SPAWN_STAGE_SETUP, errno);
    }

    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (sp->cwd != NULL && chdir(sp->cwd) != 0)
        child_fail(errfd, TG__SPAWN_STAGE_CHDIR, errno);
    execve(sp->path, sp->argv, sp->envp);
    child_fail(errfd, TG__SPAWN_STAGE_EXEC, errno);
}

#ifdef TG_SPAWN_FORK
/* The fork itself; *pidfd stays -1. */
static pid_t start_child(const tg__spawn *s, const tg__spawn_extra *x,
                         int errfd, pid_t parent, int *pidfd)
{
    *pidfd = -1;
    pid_t pid = fork();
    if (pid == 0)
        child_main(s, x, errfd, parent);
    return pid;
}
#else
/* vfork, for where clone with a pidfd is refused: apart so that nothing
 * the parent reads afterwards lives in a frame the child runs on (the
 * child never returns here). */
static pid_t __attribute__((noinline))
vfork_child(const tg__spawn *s, const tg__spawn_extra *x, int errfd,
            pid_t parent)
{
    pid_t pid = vfork();
    if (pid == 0)
        child_main(s, x, errfd, parent);
    return pid;
}

typedef struct child_args {
    const tg__spawn *sp;
    const tg__spawn_extra *x;
    int errfd;
    pid_t parent;
} child_args;

static int child_entry(void *arg)
{
    const child_args *a = arg;
    child_main(a->sp, a->x, a->errfd, a->parent);
}

/* The clone itself, on a stack of its own in this frame: returns once the
 * child has exec'd or exited. *pidfd gets a pidfd of the child, or -1 when
 * the clone was refused (a kernel before 5.2) and vfork made the child. */
static pid_t __attribute__((noinline))
start_child(const tg__spawn *s, const tg__spawn_extra *x, int errfd,
            pid_t parent, int *pidfd)
{
    _Alignas(16) char stack[CHILD_STACK];
    child_args a = {s, x, errfd, parent};
    int flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD;
    *pidfd = -1;
    pid_t pid = clone(child_entry, stack + sizeof stack, flags, &a, pidfd);
#ifdef TG__ASAN
    /* The child's instrumented frames marked parts of stack[] as redzones
     * and never returned to lift them (for vfork, ASan's interceptor does
     * this). */
    ASAN_UNPOISON_MEMORY_REGION(stack, sizeof stack);
#endif
    if (pid < 0) {
        /* EINVAL before Linux 5.2; valgrind refuses such a clone too */
        *pidfd = -1;
        pid = vfork_child(s, x, errfd, parent);
    }
    return pid;
}
#endif

/* Moves fd to `min` or above so the child's dup2 calls cannot clobber one
 * another. Returns the fd to use and sets *tmp when a copy was made. */
static int fd_above(int fd, int min, int *tmp)
{
    *tmp = -1;
    if (fd >= min)
        return fd;
    int c = fcntl(fd, F_DUPFD_CLOEXEC, min);
    if (c >= 0)
        *tmp = c;
    return c;
}

int tg__proc_spawn(const tg__spawn *sp, pid_t *pid_out, int *stage, int *errnum)
{
    return tg__proc_spawn_ex(sp, NULL, pid_out, stage, errnum);
}

int tg__proc_spawn_ex(const tg__spawn *sp, const tg__spawn_extra *xp,
                      pid_t *pid_out, int *stage, int *errnum)
{
    return tg__proc_spawn_pidfd(sp, xp, pid_out, NULL, stage, errnum);
}

int tg__proc_spawn_pidfd(const tg__spawn *sp, const tg__spawn_extra *xp,
                         pid_t *pid_out, int *pidfd_out, int *stage,
                         int *errnum)
{
    tg__spawn s = *sp;
    tg__spawn_extra x = {0};
    if (xp != NULL)
        x = *xp;
    int tin, tout, terr, tkeep[4] = {-1, -1, -1, -1}, ep[2], pidfd = -1;
    if (pidfd_out != NULL)
        *pidfd_out = -1;
    /* With descriptors to hand on as 3 and up, nothing the child still
     * needs after placing them may sit there. */
    int min = x.nkeep > 0 ? 3 + x.nkeep : 3;
    s.fd_in = fd_above(sp->fd_in, min, &tin);
    s.fd_out = fd_above(sp->fd_out, min, &tout);
    s.fd_err = fd_above(sp->fd_err, min, &terr);
    *stage = TG__SPAWN_STAGE_SETUP;
    *errnum = 0;
    int rc = -1;
    if (s.fd_in < 0 || s.fd_out < 0 || s.fd_err < 0) {
        *errnum = errno;
        goto out;
    }
    if (x.nkeep < 0 || x.nkeep > 4) {
        *errnum = EINVAL;
        goto out;
    }
    for (int i = 0; i < x.nkeep; i++) {
        if ((x.keep[i] = fd_above(x.keep[i], 3 + x.nkeep, &tkeep[i])) < 0) {
            *errnum = errno;
            goto out;
        }
    }
    if (pipe2(ep, O_CLOEXEC) != 0) {
        *errnum = errno;
        goto out;
    }
    if (ep[1] < min) {
        int moved = fcntl(ep[1], F_DUPFD_CLOEXEC, min);
        int e = errno;
        close(ep[1]);
        if (moved < 0) {
            *errnum = e;
            close(ep[0]);
            goto out;
        }
        ep[1] = moved;
    }

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = start_child(&s, &x, ep[1], getpid(), &pidfd);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(ep[1]);
    if (pid < 0) {
        close(ep[0]);
        *errnum = saved;
        goto out;
    }
#ifdef TG_SPAWN_FORK
    /* Also from this side, so the group exists before we may signal it
     * (the child may not have run yet). EACCES once it has exec'd. With
     * vfork the child has done it before we get here. */
    (void)setpgid(pid, pid);
#endif

    child_report r;
    ssize_t n;
    do {
        n = read(ep[0], &r, sizeof r);
    } while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t)sizeof r) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        *stage = r.stage;
        *errnum = r.err;
        goto out;
    }
    *pid_out = pid;
    if (pidfd_out != NULL) {
        *pidfd_out = pidfd; /* the caller's now */
        pidfd = -1;
    }
    *stage = TG__SPAWN_STAGE_NONE;
    rc = 0;
out:
    if (pidfd >= 0)
        close(pidfd);
    for (int i = 0; i < 4; i++)
        if (tkeep[i] >= 0)
            close(tkeep[i]);
    if (tin >= 0)
        close(tin);
    if (tout >= 0)
        close(tout);
    if (terr >= 0)
        close(terr);
    return rc;
}

int tg__proc_resolve(const char *argv0, const char *path_env, const char *cwd,
                     char *out, size_t outsz)
{
    if (argv0 == NULL || argv0[0] == '\0')
        return ENOENT;
    if (strchr(argv0, '/') != NULL) {
        if (strlen(argv0) >= outsz)
            return ENAMETOOLONG;
        memcpy(out, argv0, strlen(argv0) + 1);
        return 0;
    }
    if (path_env == NULL)
        path_env = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    const char *p = path_env;
    for (;;) {
        const char *end = strchrnul(p, ':');
        int dlen = (int)(end - p), n;
        /* Empty and relative entries name directories under the child's
         * cwd, as they would for execvp run there. */
        if (dlen == 0)
            n = snprintf(out, outsz, "%s/%s", cwd ? cwd : ".", argv0);
        else if (p[0] != '/' && cwd != NULL)
            n = snprintf(out, outsz, "%s/%.*s/%s", cwd, dlen, p, argv0);
        else
            n = snprintf(out, outsz, "%.*s/%s", dlen, p, argv0);
        if (n > 0 && (size_t)n < outsz) {
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
                if (faccessat(AT_FDCWD, out, X_OK, AT_EACCESS) == 0)
                    return 0;
                err = EACCES;
            }
        } else if (err == ENOENT) {
            err = ENAMETOOLONG;
        }
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return err;
}

const char *tg__proc_getenv(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

static bool valid_name(const char *k)
{
    return k[0] != '\0' && strchr(k, '=') == NULL;
}

/* Bytes needed for the "k=v" entries of obj. */
static size_t env_bytes(const json_t *obj, size_t *count)
{
    const char *k;
    const json_t *v; /* borrowed */
    size_t total = 0;
    *count = 0;
    if (obj == NULL || !json_is_object(obj))
        return 0;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!json_is_string(v) || !valid_name(k))
            continue;
        total += strlen(k) + 1 + strlen(json_string_value(v)) + 1;
        (*count)++;
    }
    return total;
}

static bool same_name(const char *entry, const char *k, size_t klen)
{
    return strncmp(entry, k, klen) == 0 && entry[klen] == '=';
}

/* Writes "k=v" at *store and moves *store past it. */
static char *env_entry(char **store, const char *k, const char *v)
{
    size_t kl = strlen(k), vl = strlen(v);
    char *e = *store;
    memcpy(e, k, kl);
    e[kl] = '=';
    memcpy(e + kl + 1, v, vl + 1);
    *store += kl + vl + 2;
    return e;
}

/* An environment of `slots` entries and `bytes` of "k=v" text after them,
 * its first nb entries base's; *store is where the text goes. NULL when
 * out of memory. */
static char **env_alloc(char **base, size_t nb, size_t slots, size_t bytes,
                        char **store)
{
    char **env = malloc(slots * sizeof *env + bytes);
    if (env == NULL)
        return NULL;
    *store = (char *)(env + slots);
    for (size_t i = 0; i < nb; i++)
        env[i] = base[i];
    return env;
}

/* Sets env[*n] to e, replacing an entry of the same name among the first
 * `upto`. */
static void env_put(char **env, size_t *n, size_t upto, char *e)
{
    size_t kl = strcspn(e, "=");
    for (size_t i = 0; i < upto; i++) {
        if (same_name(env[i], e, kl)) {
            env[i] = e;
            return;
        }
    }
    env[(*n)++] = e;
}

/* Adds obj's entries to env[*n], replacing entries among the first `upto`
 * with the same name. */
static void env_merge(char **env, size_t *n, size_t upto, const json_t *obj,
                      char **store)
{
    const char *k;
    const json_t *v; /* borrowed */
    if (obj == NULL || !json_is_object(obj))
        return;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!json_is_string(v) || !valid_name(k))
            continue;
        env_put(env, n, upto, env_entry(store, k, json_string_value(v)));
    }
}

int tg__proc_env(char **base, const json_t *tool_env, const json_t *ctx_env,
                 char ***out, void **owned)
{
    size_t nt, nc, nb = 0;
    size_t bytes = env_bytes(tool_env, &nt) + env_bytes(ctx_env, &nc);
    *owned = NULL;
    if (nt == 0 && nc == 0) {
        *out = base;
        return 0;
    }
    while (base && base[nb])
        nb++;
    char *store;
    char **env = env_alloc(base, nb, nb + nt + nc + 1, bytes, &store);
    if (env == NULL)
        return ENOMEM;
    size_t n = nb;
    env_merge(env, &n, nb, tool_env, &store);
    /* The context's names are unique among themselves: compare them with
     * the base and the tool's entries only, which keeps this linear. */
    env_merge(env, &n, n, ctx_env, &store);
    env[n] = NULL;
    *out = env;
    *owned = env;
    return 0;
}

bool tg__env_secret_name(const char *name)
{
    static const char *const words[] = {"KEY",      "TOKEN",  "SECRET",
                                        "PASSWORD", "PASSWD", "CREDENTIAL"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (strcasestr(name, words[w]) != NULL)
            return true;
    return false;
}

/* True when obj (an object) has a member `name`, or arr (an array of
 * strings) holds it. Either may be NULL. */
static bool listed(const json_t *obj, const json_t *arr, const char *name,
                   size_t len)
{
    const char *k;
    const json_t *v; /* borrowed */
    if (obj != NULL && json_is_object(obj))
        json_object_foreach((json_t *)obj, k, v)
        {
            if (strlen(k) == len && memcmp(k, name, len) == 0)
                return true;
        }
    size_t i;
    if (arr != NULL && json_is_array(arr))
        json_array_foreach((json_t *)arr, i, v)
        {
            const char *s = json_string_value(v);
            if (s != NULL && strlen(s) == len && memcmp(s, name, len) == 0)
                return true;
        }
    return false;
}

int tg__proc_env_tool(char **base, char **pass, const json_t *pass_names,
                      const json_t *tool_env, const json_t *ctx_env,
                      char ***out, void **owned)
{
    size_t nb = 0, np = 0, nt, nc;
    *owned = NULL;
    while (base && base[nb])
        nb++;
    /* The passed entries are pointers into `pass`; count those named. */
    for (size_t i = 0; pass && pass[i]; i++)
        if (listed(NULL, pass_names, pass[i], strcspn(pass[i], "=")))
            np++;
    size_t bytes = env_bytes(tool_env, &nt) + env_bytes(ctx_env, &nc);
    if (np == 0 && nt == 0 && nc == 0) {
        *out = base;
        return 0;
    }
    char *store;
    char **env = env_alloc(base, nb, nb + np + nt + nc + 1, bytes, &store);
    if (env == NULL)
        return ENOMEM;
    size_t n = nb;
    for (size_t i = 0; pass && pass[i]; i++)
        if (listed(NULL, pass_names, pass[i], strcspn(pass[i], "=")))
            env_put(env, &n, n, pass[i]);
    env_merge(env, &n, n, tool_env, &store);
    const char *k;
    const json_t *v; /* borrowed */
    size_t upto = n;
    if (ctx_env != NULL && json_is_object(ctx_env))
        json_object_foreach((json_t *)ctx_env, k, v)
        {
            if (!json_is_string(v) || !valid_name(k))
                continue;
            size_t kl = strlen(k);
            /* A secret only reaches a tool that asked for it by name. */
            if (tg__env_secret_name(k) && !listed(tool_env, pass_names, k, kl))
                continue;
            env_put(env, &n, upto, env_entry(&store, k, json_string_value(v)));
        }
    env[n] = NULL;
    *out = env;
    *owned = env;
    return 0;
}

const char *tg__signal_name(int signum, char out[32])
{
    const char *abbrev = sigabbrev_np(signum);
    if (abbrev != NULL)
        snprintf(out, 32, "SIG%s", abbrev);
    else if (signum >= SIGRTMIN && signum <= SIGRTMAX)
        snprintf(out, 32, "SIGRTMIN+%d", signum - SIGRTMIN);
    else
        snprintf(out, 32, "signal %d", signum);
    return out;
}
