/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - running command tools in bubblewrap (sandbox.h): finding and
 * probing bwrap once per runtime, the resource limits, the bwrap argv of a
 * call, and the hand-shake that limits a call's processes before its
 * command runs.
 *
 * The process limit needs care. RLIMIT_NPROC counts the processes of a real
 * uid, but since Linux 5.14 it counts them per user namespace: set on the
 * sandbox's first process (prlimit from outside, once bubblewrap made the
 * namespace and before the command starts, through --info-fd/--block-fd) it
 * limits that call alone, while set before bubblewrap it would count every
 * process of the user on the machine. Root is exempt from RLIMIT_NPROC
 * altogether, in any namespace; for root the limit is the sandbox PID
 * namespace's own pid_max (Linux 6.14 made it per namespace): a helper joins
 * the namespace and its child, the namespace's second process, writes the
 * sysctl, which the kernel resolves against the writer's namespace. On an
 * older kernel the same write would change the host's pid_max, so it is
 * never tried there, and the probe checks that the host's value did not
 * move.
 *
 * Signals: bubblewrap's outer process stays in the tool's process group and
 * forwards nothing; --new-session puts the sandbox in a session of its own
 * whose group leader is the sandbox's PID 1 (the "inner" process). command.c
 * sends TERM to that group (the command and its children; PID 1 ignores it)
 * and KILL to PID 1 through a pidfd, which ends the whole PID namespace.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "error.h"
#include "policy.h"
#include "warm.h"

#define PROBE_TIMEOUT_MS 10000
#define INFO_TIMEOUT_MS 10000
#define PIDMAX_MIN 301     /* the kernel's floor: RESERVED_PIDS + 1 */
#define PIDMAX_MAX 4194304 /* PID_MAX_LIMIT */
#define HELPER_STACK 65536

/* Credentials a tool has no business reading, masked unless sandbox.hide
 * says otherwise ("~/" is the HOME tools get). */
static const char *const default_hide[] = {
    "~/.ssh",       "~/.gnupg",  "~/.aws",    "~/.azure", "~/.config/gcloud",
    "~/.config/gh", "~/.kube",   "~/.docker", "~/.netrc", "~/.git-credentials",
    "~/.npmrc",     "~/.pypirc", NULL};

const char *tg__sandbox_level_name(tg__sbx_level level)
{
    switch (level) {
    case TG__SBX_BWRAP:
        return "bubblewrap";
    case TG__SBX_WARM:
        return "bubblewrap-warm";
    case TG__SBX_RLIMITS:
        return "rlimits";
    default:
        return "none";
    }
}

tg__sbx_level tg__sandbox_level(const tg__sandbox *sb, const tg__tool *tool)
{
    if (tool != NULL && tool->unsandboxed)
        return TG__SBX_NONE;
    if (sb->mode != TG__SANDBOX_OFF && sb->bwrap_ok)
        return tg__sandbox_warm_wanted(sb, tool, NULL) ? TG__SBX_WARM
                                                       : TG__SBX_BWRAP;
    return sb->nlimits > 0 || sb->nproc > 0 ? TG__SBX_RLIMITS : TG__SBX_NONE;
}

bool tg__sandbox_warm_wanted(const tg__sandbox *sb, const tg__tool *tool,
                             const char **why)
{
    const char *w;
    bool warm;
    if (tool != NULL && tool->sandbox_mode == TG__SANDBOX_COLD) {
        w = "the tool's sandbox.mode is \"cold\"";
        warm = false;
    } else if (sb->mode == TG__SANDBOX_COLD &&
               (tool == NULL || tool->sandbox_mode != TG__SANDBOX_WARM)) {
        w = "sandbox.mode is \"cold\"";
        warm = false;
    } else if (sb->warm == NULL) {
        w = sb->warm_error[0] ? sb->warm_error : "no warm sandbox here";
        warm = false;
    } else if (tool != NULL && tool->sandbox_mode == TG__SANDBOX_WARM) {
        w = "the tool's sandbox.mode is \"warm\"";
        warm = true;
    } else if (sb->mode == TG__SANDBOX_WARM) {
        w = "sandbox.mode is \"warm\"";
        warm = true;
    } else {
        w = TG__SANDBOX_WARM_DEFAULT
                ? "the default where bubblewrap works"
                : "sandbox.mode is not \"warm\" (cold is the default)";
        warm = TG__SANDBOX_WARM_DEFAULT;
    }
    if (why != NULL)
        *why = w;
    return warm;
}

bool tg__sandbox_warm_fits(const tg_config *cfg, const char *cwd,
                           const char *prog)
{
    if (cwd != NULL && !tg__path_under(cwd, cfg->workspace))
        return false;
    return tg__path_under(prog, cfg->workspace) ||
           (!tg__path_under(prog, "/tmp") && !tg__path_under(prog, "/run"));
}

/* ------------------------------------------------------------ paths */

static int post_add(tg__sandbox *sb, size_t *cap, const char *s)
{
    if (sb->npost + 2 > *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        char **a = realloc(sb->post, n * sizeof *a);
        if (a == NULL)
            return TG_ENOMEM;
        sb->post = a;
        *cap = n;
    }
    char *c = strdup(s);
    if (c == NULL)
        return TG_ENOMEM;
    sb->post[sb->npost++] = c;
    sb->post[sb->npost] = NULL;
    return 0;
}

static int post_add3(tg__sandbox *sb, size_t *cap, const char *a, const char *b,
                     const char *c)
{
    int rc;
    if ((rc = post_add(sb, cap, a)) || (rc = post_add(sb, cap, b)) ||
        (c != NULL && (rc = post_add(sb, cap, c))))
        return rc;
    return 0;
}

/* Masks a path of sandbox.hide: a directory under an empty tmpfs, a file
 * under /dev/null. Paths that do not exist, and the workspace or what holds
 * it, are left alone. */
static int hide_path(tg__sandbox *sb, size_t *cap, const char *ws,
                     const char *home, const char *spec)
{
    char joined[PATH_MAX];
    if (strncmp(spec, "~/", 2) == 0) {
        if (home == NULL || home[0] != '/')
            return 0;
        int n = snprintf(joined, sizeof joined, "%s/%s", home, spec + 2);
        if (n < 0 || (size_t)n >= sizeof joined)
            return 0;
    } else {
        snprintf(joined, sizeof joined, "%s", spec);
    }
    char *real = realpath(joined, NULL);
    if (real == NULL)
        return 0;
    struct stat st;
    int rc = 0;
    if (stat(real, &st) == 0 && !tg__path_under(ws, real)) {
        if (S_ISDIR(st.st_mode))
            rc = post_add3(sb, cap, "--tmpfs", real, NULL);
        else if (S_ISREG(st.st_mode))
            rc = post_add3(sb, cap, "--ro-bind", "/dev/null", real);
    }
    free(real);
    return rc;
}

/* toolgate's own files (state.h): the directories between the workspace
 * and them bound onto themselves (a mount point cannot be renamed or
 * removed, and it stays writable), each hidden directory under an empty
 * read-only tmpfs, each masked file under /dev/null. Only what exists:
 * bubblewrap would have to create the rest, in the host's file system. */
static int protect_state(tg__sandbox *sb, size_t *cap, const tg__state *st)
{
    struct stat s;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->npin; i++)
        if (!tg__state_hidden(st, st->pin[i], 1) &&
            lstat(st->pin[i], &s) == 0 && S_ISDIR(s.st_mode))
            rc = post_add3(sb, cap, "--bind", st->pin[i], st->pin[i]);
    for (size_t i = 0; rc == 0 && i < st->nhide; i++)
        if (!tg__state_hidden(st, st->hide[i], 0) &&
            lstat(st->hide[i], &s) == 0 && S_ISDIR(s.st_mode) &&
            (rc = post_add3(sb, cap, "--tmpfs", st->hide[i], NULL)) == 0)
            rc = post_add3(sb, cap, "--remount-ro", st->hide[i], NULL);
    for (size_t i = 0; rc == 0 && i < st->nmask; i++)
        if (!tg__state_hidden(st, st->mask[i], 0) &&
            lstat(st->mask[i], &s) == 0 && S_ISREG(s.st_mode))
            rc = post_add3(sb, cap, "--ro-bind", "/dev/null", st->mask[i]);
    return rc;
}

/* ------------------------------------------------------------ limits */

/* Linux >= major.minor (from uname). */
static bool kernel_at_least(int major, int minor)
{
    struct utsname u;
    if (uname(&u) != 0)
        return false;
    char *end;
    long ma = strtol(u.release, &end, 10);
    long mi = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return ma > major || (ma == major && mi >= minor);
}

static void limit_add(tg__sandbox *sb, int resource, int64_t value,
                      int64_t unit)
{
    if (value <= 0 && resource != RLIMIT_CORE)
        return;
    rlim_t v = (rlim_t)value * (rlim_t)unit;
    struct rlimit cur;
    /* Only lowered: a hard limit already below stays, as an unprivileged
     * child could not raise it. */
    if (getrlimit((__rlimit_resource_t)resource, &cur) == 0 &&
        cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max)
        v = cur.rlim_max;
    sb->limits[sb->nlimits].resource = resource;
    sb->limits[sb->nlimits].value = v;
    sb->nlimits++;
}

size_t tg__sandbox_limits(const tg__sandbox *sb, tg__sbx_level level,
                          tg__rlimit *out)
{
    if (level == TG__SBX_NONE)
        return 0;
    size_t n = sb->nlimits;
    memcpy(out, sb->limits, n * sizeof *out);
    if (level == TG__SBX_RLIMITS && sb->nproc > 0 && !sb->root) {
        /* Outside a user namespace the kernel counts every process of the
         * user: allow nproc more than there are now (sysinfo counts every
         * task of the machine, an upper bound of the user's). */
        struct sysinfo si;
        rlim_t now = sysinfo(&si) == 0 ? (rlim_t)si.procs : 0;
        out[n].resource = RLIMIT_NPROC;
        out[n].value = now + sb->nproc;
        struct rlimit cur;
        if (getrlimit(RLIMIT_NPROC, &cur) == 0 &&
            cur.rlim_max != RLIM_INFINITY && out[n].value > cur.rlim_max)
            out[n].value = cur.rlim_max;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------ argv */

static const char *const pre_opts[] = {
    "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try", "--die-with-parent", "--new-session",
    /* Root of a user namespace keeps every capability in it unless told:
     * enough to remount the read-only binds writable. */
    "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
    "/proc", "--tmpfs", "/tmp", NULL};

/* The argv of tg__sandbox_argv; `warm`: the sandbox of a warm profile,
 * whose command is its PID 1 (tg__sandbox_warm_argv). */
static char **build_argv(const tg__sandbox *sb, const tg_config *cfg,
                         bool network, const char *cwd, const char *prog,
                         char *const *argv, bool warm)
{
    size_t npre = sizeof pre_opts / sizeof pre_opts[0] - 1, nargs = 0;
    while (argv && argv[nargs])
        nargs++;
    size_t cap = 1 + npre + 1 + 2 + 1 + 3 + 3 + 3 + 3 + sb->npost + 2 + 4 + 1 +
                 1 + (nargs ? nargs - 1 : 0) + 1;
    bool hidden = (tg__path_under(prog, "/tmp") ||
                   (sb->hide_run && tg__path_under(prog, "/run"))) &&
                  !tg__path_under(prog, cfg->workspace);
    /* A program installed by npm where the sandbox mounts an empty file
     * system needs its package tree beside it: the outermost node_modules
     * above its real file (dependencies are hoisted there), kept in the
     * array's own allocation. */
    char real[PATH_MAX];
    const char *nm = NULL;
    size_t nml = 0;
    if (hidden && realpath(prog, real) != NULL &&
        (nm = strstr(real, "/node_modules/")) != NULL)
        nml = (size_t)(nm - real) + strlen("/node_modules");
    char **a = malloc(cap * sizeof *a + (nml ? nml + 1 : 0));
    if (a == NULL)
        return NULL;
    char *pkg = NULL;
    if (nml > 0) {
        pkg = (char *)(a + cap);
        memcpy(pkg, real, nml);
        pkg[nml] = '\0';
    }
    size_t n = 0;
    const char *ws = cfg->workspace;
    a[n++] = (char *)sb->bwrap;
    for (size_t i = 0; i < npre; i++)
        a[n++] = (char *)pre_opts[i];
    if (warm)
        a[n++] = "--as-pid-1"; /* the helper is the namespace's init */
    if (sb->hide_run) {
        /* host daemons' sockets (docker, D-Bus) live there */
        a[n++] = "--tmpfs";
        a[n++] = "/run";
    }
    if (!network)
        a[n++] = "--unshare-net";
    if (cwd != NULL && !tg__path_under(cwd, ws)) {
        /* A cwd outside the workspace is seen read-only, even under /tmp;
         * bound before the workspace in case it holds the workspace. */
        a[n++] = "--ro-bind-try";
        a[n++] = (char *)cwd;
        a[n++] = (char *)cwd;
    }
    if (hidden) {
        /* The program itself lives where the sandbox mounts an empty file
         * system (a build tree under /tmp, say): it is seen, read-only,
         * and nothing else beside it but its npm package tree. */
        a[n++] = "--ro-bind-try";
        a[n++] = (char *)prog;
        a[n++] = (char *)prog;
        if (pkg != NULL) {
            a[n++] = "--ro-bind-try";
            a[n++] = pkg;
            a[n++] = pkg;
        }
    }
    a[n++] = "--bind";
    a[n++] = (char *)ws;
    a[n++] = (char *)ws;
    for (size_t i = 0; i < sb->npost; i++)
        a[n++] = sb->post[i];
    a[n++] = "--chdir";
    a[n++] = (char *)(cwd ? cwd : ws);
    a[n++] = "--info-fd";
    a[n++] = "3";
    a[n++] = "--block-fd";
    a[n++] = "4";
    a[n++] = "--";
    a[n++] = (char *)prog;
    for (size_t i = 1; i < nargs; i++)
        a[n++] = argv[i];
    a[n] = NULL;
    return a;
}

char **tg__sandbox_argv(const tg__sandbox *sb, const tg_config *cfg,
                        const tg__tool *tool, const char *cwd, const char *prog,
                        char *const *argv)
{
    return build_argv(sb, cfg, tool != NULL && tool->network, cwd, prog, argv,
                      false);
}

char **tg__sandbox_warm_argv(const tg__sandbox *sb, const tg_config *cfg,
                             bool network, const char *prog, char *const *argv)
{
    return build_argv(sb, cfg, network, cfg->workspace, prog, argv, true);
}

/* ------------------------------------------------------------ hand-shake */

typedef struct pidmax_job {
    int pidfd;
    char text[24];
    size_t len;
    char *stack2; /* top of the grandchild's stack */
} pidmax_job;

/* The namespace's second process: the sysctl resolves against the writer's
 * PID namespace. Runs on its own stack in the caller's memory (CLONE_VM),
 * so nothing here may touch sanitizer state. */
__attribute__((no_sanitize("address", "undefined"))) static int
pm_write(void *arg)
{
    const pidmax_job *j = arg;
    int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        _exit(10);
    ssize_t n = write(fd, j->text, j->len);
    _exit(n == (ssize_t)j->len ? 0 : 11);
}

/* Joins the PID namespace (setns applies to its children, so the writer is
 * a child of this helper). */
__attribute__((no_sanitize("address", "undefined"))) static int
pm_helper(void *arg)
{
    pidmax_job *j = arg;
    if (setns(j->pidfd, CLONE_NEWPID) != 0)
        _exit(12);
    pid_t g = clone(pm_write, j->stack2, CLONE_VM | CLONE_VFORK | SIGCHLD, j);
    if (g < 0)
        _exit(13);
    int st;
    while (waitpid(g, &st, 0) < 0)
        if (errno != EINTR)
            _exit(14);
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 15);
}

/* Sets pid_max of the PID namespace whose first process is pidfd to
 * limit + 1 (at least the kernel's floor, 301): pids 1..limit, so at most
 * `limit` processes at once. Once the numbers wrap the kernel hands out only
 * those from 300 up, so a call that has started many short-lived processes
 * may be held to somewhat fewer; a fork bomb never gets more. Two
 * CLONE_VM|CLONE_VFORK children on heap stacks: no copy of this process's
 * memory, and the caller waits (signals blocked) as for a vfork. Returns 0
 * or -1 with why[] filled. */
static int set_pid_max(int pidfd, rlim_t limit, char *why, size_t whylen)
{
    rlim_t v = limit + 1;
    if (v < PIDMAX_MIN)
        v = PIDMAX_MIN;
    if (v > PIDMAX_MAX)
        v = PIDMAX_MAX;
    pidmax_job j = {.pidfd = pidfd};
    j.len = (size_t)snprintf(j.text, sizeof j.text, "%llu\n",
                             (unsigned long long)v);
    char *stacks = malloc(2 * HELPER_STACK);
    if (stacks == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    j.stack2 = stacks + 2 * HELPER_STACK;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t h = clone(pm_helper, stacks + HELPER_STACK,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &j);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    int st = 0;
    if (h > 0)
        while (waitpid(h, &st, 0) < 0 && errno == EINTR)
            ;
    free(stacks);
    if (h < 0) {
        snprintf(why, whylen, "cannot start the pid_max helper: %s",
                 strerror(e));
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(why, whylen,
                 "cannot set pid_max in the sandbox's PID namespace "
                 "(helper status %d)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

/* Waits until fd is readable, at most until timeout_ms after t0 (the
 * monotonic clock): true when it is, false when time ran out or poll
 * failed. */
static bool wait_readable(int fd, const struct timespec *t0, long timeout_ms)
{
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0->tv_sec) * 1000 +
                     (t.tv_nsec - t0->tv_nsec) / 1000000;
        if (spent >= timeout_ms)
            return false;
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)(timeout_ms - spent));
        if (r < 0 && errno == EINTR)
            continue;
        return r > 0;
    }
}

/* Reads bubblewrap's {"child-pid": N} from fd; 0 when it closed first. */
static pid_t read_child_pid(int fd)
{
    char buf[256];
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (len + 1 < sizeof buf) {
        if (!wait_readable(fd, &t0, INFO_TIMEOUT_MS))
            break;
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (strchr(buf, '}') != NULL)
            break;
    }
    buf[len] = '\0';
    const char *p = strstr(buf, "\"child-pid\"");
    if (p == NULL)
        return 0;
    p = strchr(p, ':');
    if (p == NULL)
        return 0;
    long v = strtol(p + 1, NULL, 10);
    return v > 0 && v <= INT32_MAX ? (pid_t)v : 0;
}

int tg__sandbox_handshake(const tg__sandbox *sb, int info_fd, int block_fd,
                          pid_t *inner, int *inner_pidfd, char *why,
                          size_t whylen)
{
    return tg__sandbox_handshake_n(sb, sb->nproc, info_fd, block_fd, inner,
                                   inner_pidfd, why, whylen);
}

int tg__sandbox_handshake_n(const tg__sandbox *sb, rlim_t nproc, int info_fd,
                            int block_fd, pid_t *inner, int *inner_pidfd,
                            char *why, size_t whylen)
{
    *inner = 0;
    *inner_pidfd = -1;
    why[0] = '\0';
    pid_t pid = read_child_pid(info_fd);
    int rc = 0;
    if (pid > 0) {
        *inner = pid;
        /* It waits on block_fd, so it is alive and the pid its own. */
        *inner_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*inner_pidfd < 0) {
            snprintf(why, whylen, "cannot watch the sandbox: %s",
                     strerror(errno));
            rc = -1;
        } else if (nproc > 0 && sb->root && sb->pidmax) {
            rc = set_pid_max(*inner_pidfd, nproc, why, whylen);
        } else if (nproc > 0 && !sb->root) {
            struct rlimit rl = {nproc, nproc};
            if (prlimit(pid, RLIMIT_NPROC, &rl, NULL) != 0) {
                snprintf(why, whylen,
                         "cannot limit the sandbox's processes: %s",
                         strerror(errno));
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        /* MSG_NOSIGNAL: a bubblewrap that died is no SIGPIPE here. */
        ssize_t n;
        do {
            n = send(block_fd, "x", 1, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
    }
    return rc;
}

/* ------------------------------------------------------------ probe */

/* Reads fd to EOF into out[cap] (NUL-terminated), within the deadline. */
static void drain(int fd, char *out, size_t cap, const struct timespec *t0)
{
    size_t len = 0;
    char sink[512];
    for (;;) {
        if (!wait_readable(fd, t0, PROBE_TIMEOUT_MS))
            break;
        char *dst = len + 1 < cap ? out + len : sink;
        size_t room = len + 1 < cap ? cap - 1 - len : sizeof sink;
        ssize_t n = read(fd, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (dst != sink)
            len += (size_t)n;
    }
    out[len] = '\0';
}

static void first_line(char *s)
{
    s[strcspn(s, "\n")] = '\0';
}

static int read_pid_max(void)
{
    int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char b[32];
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0)
        return -1;
    b[n] = '\0';
    return (int)strtol(b, NULL, 10);
}

static void write_pid_max(int v)
{
    int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char b[32];
    int n = snprintf(b, sizeof b, "%d\n", v);
    if (write(fd, b, (size_t)n) < 0) {
        /* nothing more to try */
    }
    close(fd);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Runs `bwrap OPTIONS -- bwrap --version` exactly as calls will run (the
 * workspace bound, the limits set, the hand-shake), and reads the version
 * it prints. Fills sb->bwrap_ok, version and error; clears sb->pidmax
 * when the namespace's pid_max could not be set. */
static void probe(tg__sandbox *sb, const tg_config *cfg, char *const *envp)
{
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, infop[2] = {-1, -1};
    int blk[2] = {-1, -1}, devnull = -1, inner_pidfd = -1;
    char **argv = NULL;
    pid_t pid = 0, inner = 0;
    sb->probed = true;
    sb->bwrap_ok = false;
    if (sb->bwrap[0] == '\0') {
        if (sb->error[0] == '\0')
            snprintf(sb->error, sizeof sb->error,
                     "bubblewrap (bwrap) is not installed or not in PATH");
        return;
    }
    char *const vargv[] = {"bwrap", "--version", NULL};
    argv = tg__sandbox_argv(sb, cfg, NULL, cfg->workspace, sb->bwrap, vargv);
    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (argv == NULL || devnull < 0 || pipe2(outp, O_CLOEXEC) != 0 ||
        pipe2(errp, O_CLOEXEC) != 0 || pipe2(infop, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, blk) != 0) {
        snprintf(sb->error, sizeof sb->error,
                 "cannot prepare the bubblewrap probe: %s", strerror(errno));
        goto out;
    }
    int before = sb->pidmax ? read_pid_max() : -1;
    tg__spawn sp = {sb->bwrap, argv,    envp,   cfg->workspace,
                    devnull,   outp[1], errp[1]};
    tg__spawn_extra spx = {sb->limits, sb->nlimits, 2, {infop[1], blk[0]}};
    int stage, errnum;
    if (tg__proc_spawn_ex(&sp, &spx, &pid, &stage, &errnum) != 0) {
        snprintf(sb->error, sizeof sb->error, "cannot run %.300s: %s",
                 sb->bwrap, strerror(errnum));
        pid = 0;
        goto out;
    }
    close_fd(&outp[1]);
    close_fd(&errp[1]);
    close_fd(&infop[1]);
    close_fd(&blk[0]);
    char why[256];
    int hs = tg__sandbox_handshake(sb, infop[0], blk[1], &inner, &inner_pidfd,
                                   why, sizeof why);
    if (hs != 0 && sb->pidmax) {
        /* The kernel did not take the namespace's pid_max: run without it
         * (and say so) rather than not at all. */
        sb->pidmax = false;
        snprintf(sb->pidmax_why, sizeof sb->pidmax_why, "%.150s", why);
        hs = 0;
        ssize_t n;
        do {
            n = send(blk[1], "x", 1, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
    }
    if (before > 0 && read_pid_max() != before) {
        /* Never leave the host's pid_max changed. */
        write_pid_max(before);
        sb->pidmax = false;
        snprintf(sb->pidmax_why, sizeof sb->pidmax_why,
                 "this kernel has no per-namespace pid_max");
    }
    if (hs != 0) {
        /* Killed before its block fd closes: EOF there would let it run. */
        kill(-pid, SIGKILL);
        if (inner_pidfd >= 0)
            (void)syscall(SYS_pidfd_send_signal, inner_pidfd, SIGKILL, NULL, 0);
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char out[256], errtext[512];
    drain(outp[0], out, sizeof out, &t0);
    drain(errp[0], errtext, sizeof errtext, &t0);
    kill(-pid, SIGKILL); /* whatever is left of it */
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    pid = 0;
    first_line(out);
    first_line(errtext);
    if (hs != 0) {
        snprintf(sb->error, sizeof sb->error, "%s", why);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
               strncmp(out, "bubblewrap", 10) == 0) {
        sb->bwrap_ok = true;
        snprintf(sb->version, sizeof sb->version, "%.60s", out);
        sb->error[0] = '\0';
    } else if (errtext[0] != '\0') {
        snprintf(sb->error, sizeof sb->error, "%.500s", errtext);
    } else {
        snprintf(sb->error, sizeof sb->error,
                 "%.300s did not run a command in a sandbox (status %d)",
                 sb->bwrap, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
out:
    if (pid > 0) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close_fd(&inner_pidfd);
    close_fd(&devnull);
    for (int i = 0; i < 2; i++) {
        close_fd(&outp[i]);
        close_fd(&errp[i]);
        close_fd(&infop[i]);
        close_fd(&blk[i]);
    }
    free(argv);
}

/* ------------------------------------------------------------ init */

static void nproc_note(tg__sandbox *sb)
{
    const char *why = sb->pidmax_why[0] ? sb->pidmax_why : "Linux < 6.14";
    unsigned long long n = (unsigned long long)sb->nproc;
    unsigned long long floor = n < PIDMAX_MIN - 1 ? PIDMAX_MIN - 1 : n;
    if (sb->nproc == 0)
        snprintf(sb->nproc_note, sizeof sb->nproc_note,
                 "not limited (sandbox.rlimits.nproc is 0)");
    else if (sb->bwrap_ok && sb->root && sb->pidmax)
        snprintf(sb->nproc_note, sizeof sb->nproc_note,
                 "at most %llu per call (the sandbox PID namespace's "
                 "pid_max: root is exempt from RLIMIT_NPROC)",
                 floor);
    else if (sb->bwrap_ok && !sb->root)
        snprintf(sb->nproc_note, sizeof sb->nproc_note,
                 "at most %llu per call (RLIMIT_NPROC in the call's own user "
                 "namespace)",
                 n);
    else if (sb->root)
        snprintf(sb->nproc_note, sizeof sb->nproc_note,
                 "NOT LIMITED: root is exempt from RLIMIT_NPROC%s%.120s%s; a "
                 "fork bomb runs until the deadline",
                 sb->bwrap_ok ? " and pid_max cannot be set per namespace ("
                              : "",
                 sb->bwrap_ok ? why : "", sb->bwrap_ok ? ")" : "");
    else
        snprintf(sb->nproc_note, sizeof sb->nproc_note,
                 "%llu more than the user runs at spawn (RLIMIT_NPROC without "
                 "a user namespace counts every process of the user)",
                 n);
}

/* The warm sandbox's process limit, after the note of a cold call's. */
static void nproc_warm_note(tg__sandbox *sb)
{
    size_t n = strlen(sb->nproc_note);
    if (sb->nproc == 0 || !sb->bwrap_ok ||
        !tg__sandbox_warm_wanted(sb, NULL, NULL))
        return;
    snprintf(sb->nproc_note + n, sizeof sb->nproc_note - n,
             "; in a warm sandbox %llu for the calls running in it at once",
             (unsigned long long)(sb->nproc + (sb->root ? 316 : 0)));
}

static void make_warning(tg__sandbox *sb)
{
    free(sb->warning);
    sb->warning = NULL;
    tg__buf b;
    tg__buf_init(&b, 4096);
    if (sb->needed && sb->mode == TG__SANDBOX_AUTO && !sb->bwrap_ok)
        (void)tg__buf_printf(
            &b,
            "WARNING: the sandbox is NOT in force: bubblewrap cannot run "
            "here (%s). Command tools and shell run with rlimits and an "
            "allowlisted environment only: they can write wherever this user "
            "can (toolgate's journal and spool included), and reach the "
            "network. Install bubblewrap (Debian: "
            "apt-get install bubblewrap) with user namespaces allowed, or set "
            "sandbox.mode to \"off\" to accept this. 'toolgate doctor' "
            "tells more.",
            sb->error);
    if (sb->needed && sb->mode != TG__SANDBOX_OFF && sb->nproc > 0 &&
        sb->root && !(sb->bwrap_ok && sb->pidmax))
        (void)tg__buf_printf(&b,
                             "%sWARNING: the number of processes a tool may "
                             "start is %s.",
                             b.len ? "\n" : "", sb->nproc_note);
    if (b.len > 0)
        sb->warning = tg__buf_take(&b);
    tg__buf_cleanup(&b);
}

void tg__sandbox_probe(tg__sandbox *sb, const tg_config *cfg, char *const *envp)
{
    if (sb->probed)
        return;
    probe(sb, cfg, envp);
    nproc_note(sb);
    make_warning(sb);
}

int tg__sandbox_init(tg__sandbox *sb, const tg_config *cfg,
                     const tg__registry *reg, const tg__state *state,
                     char *const *envp, tg_error *err)
{
    memset(sb, 0, sizeof *sb);
    sb->mode = cfg->sandbox_mode;
    sb->root = geteuid() == 0;
    sb->pidmax = sb->root && kernel_at_least(6, 14);
    sb->nproc = cfg->rlimit_nproc > 0 ? (rlim_t)cfg->rlimit_nproc : 0;
    limit_add(sb, RLIMIT_CPU, cfg->rlimit_cpu_s, 1);
    limit_add(sb, RLIMIT_AS, cfg->rlimit_as_mb, INT64_C(1) << 20);
    limit_add(sb, RLIMIT_NOFILE, cfg->rlimit_nofile, 1);
    limit_add(sb, RLIMIT_FSIZE, cfg->rlimit_fsize_mb, INT64_C(1) << 20);
    /* a core dump of a tool lands in the workspace, secrets and all */
    limit_add(sb, RLIMIT_CORE, 0, 1);
    struct stat st;
    sb->hide_run = stat("/run", &st) == 0 && S_ISDIR(st.st_mode) &&
                   !tg__path_under(cfg->workspace, "/run");

    size_t cap = 0;
    const char *home = tg__proc_getenv(envp, "HOME");
    int rc = 0;
    if (cfg->sandbox_hide != NULL) {
        size_t i;
        json_t *p; /* borrowed */
        json_array_foreach(cfg->sandbox_hide, i, p)
        {
            if (rc == 0)
                rc = hide_path(sb, &cap, cfg->workspace, home,
                               json_string_value(p));
        }
    } else {
        for (size_t i = 0; default_hide[i] && rc == 0; i++)
            rc = hide_path(sb, &cap, cfg->workspace, home, default_hide[i]);
    }
    sb->state_from = sb->npost;
    if (rc == 0 && state != NULL)
        rc = protect_state(sb, &cap, state);
    if (rc != 0) {
        tg__sandbox_cleanup(sb);
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    }

    const char *want = cfg->sandbox_bwrap ? cfg->sandbox_bwrap : "bwrap";
    int e = tg__proc_resolve(want, tg__proc_getenv(envp, "PATH"), NULL,
                             sb->bwrap, sizeof sb->bwrap);
    if (e == 0 && access(sb->bwrap, X_OK) != 0)
        e = errno;
    if (e != 0) {
        snprintf(sb->error, sizeof sb->error, "%.300s: %s", want,
                 e == ENOENT ? "not installed or not in PATH" : strerror(e));
        sb->bwrap[0] = '\0';
    }

    for (size_t i = 0; reg != NULL && i < tg__registry_count(reg); i++) {
        const tg__tool *t = tg__registry_at(reg, i);
        if (t->kind == TG_TOOL_KIND_COMMAND && !t->unsandboxed)
            sb->needed = true;
    }
    if (sb->needed && sb->mode != TG__SANDBOX_OFF) {
        probe(sb, cfg, envp);
        if (!sb->bwrap_ok && sb->mode != TG__SANDBOX_AUTO) {
            rc = tg__error_set(err, TG_ECONFIG,
                               "sandbox.mode is \"%s\" but bubblewrap "
                               "cannot run here: %s",
                               sb->mode == TG__SANDBOX_WARM   ? "warm"
                               : sb->mode == TG__SANDBOX_COLD ? "cold"
                                                              : "bubblewrap",
                               sb->error);
            tg__error_pointer(err, "/sandbox/mode");
            tg__sandbox_cleanup(sb);
            return rc;
        }
    }
    if (sb->bwrap_ok && sb->mode != TG__SANDBOX_OFF) {
        sb->warm = tg__warm_new(cfg->sandbox_idle_ms, sb->warm_error,
                                sizeof sb->warm_error);
        if (sb->warm == NULL && sb->mode == TG__SANDBOX_WARM) {
            rc = tg__error_set(err, TG_ECONFIG,
                               "sandbox.mode is \"warm\" but the warm sandbox "
                               "cannot run here: %s",
                               sb->warm_error);
            tg__error_pointer(err, "/sandbox/mode");
            tg__sandbox_cleanup(sb);
            return rc;
        }
    }
    nproc_note(sb);
    nproc_warm_note(sb);
    make_warning(sb);
    return 0;
}

void tg__sandbox_cleanup(tg__sandbox *sb)
{
    tg__warm_free(sb->warm);
    sb->warm = NULL;
    for (size_t i = 0; i < sb->npost; i++)
        free(sb->post[i]);
    free(sb->post);
    sb->post = NULL;
    sb->npost = 0;
    free(sb->warning);
    sb->warning = NULL;
}
