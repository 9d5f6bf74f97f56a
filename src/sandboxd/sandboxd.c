/* SPDX-License-Identifier: MIT */
/*
 * sandboxd.c - toolgate-sandboxd, the helper that keeps a warm sandbox
 * (README, "Sandbox"; the runtime's side is src/exec/warm.c, the wire format
 * sandboxd_proto.h). libc only: it is embedded in libtoolgate and run from a
 * memfd as the command of a bubblewrap made once per sandbox profile, as
 * the PID namespace's first process (bwrap --as-pid-1).
 *
 * Being PID 1 is what protects it: the kernel delivers no signal from
 * inside the namespace to its init unless init handles it, and it handles
 * none (SIGKILL and SIGSTOP included), so no call can stop or kill it. It is
 * not dumpable, so a call (which has no capabilities) can neither ptrace it
 * nor open its /proc/1/fd, and it keeps no descriptor but its socket to the
 * runtime and the read-only baseline directories below. When the runtime's end
 * closes it exits, and with it the namespace and every process in it.
 *
 * The calls are run by reapers, processes forked by the helper ahead of
 * need and kept for the sandbox's life: each blocks reading the socket to
 * the runtime, so a request goes straight to an idle reaper (the kernel
 * hands each SEQPACKET message to one reader) and the helper takes no part
 * in a call. A reaper is a child subreaper, not dumpable, and between
 * calls holds only the socket, a pipe to the helper and the baseline
 * directories. Per call it makes
 * a fresh 0700 TMPDIR under /tmp, vforks the command in a session of its
 * own with PR_SET_NO_NEW_PRIVS, the call's rlimits and PR_SET_PDEATHSIG
 * (signals are at their defaults in every process of the sandbox: the
 * helper resets them once), and waits for it. Whatever the command starts,
 * setsid and double forks included, stays below the reaper (orphans
 * reparent to the nearest subreaper); when the command exits, or the
 * runtime asks for KILL or goes away, the reaper SIGKILLs all of it until
 * none is left, removes the TMPDIR, and only then reports EXITED and reads
 * the next request. A reaper that takes a call when no other is idle asks
 * the helper (a byte on the pipe) to fork one more, so a call never waits
 * for a fork unless more run at once than ever before. A reaper that dies
 * during a call (a call of the same profile may kill it) leaves that
 * call's processes to the helper, which kills them and forks a new one.
 * Before a call starts while no other call runs, its reaper empties the
 * sandbox's private /tmp and /dev/shm (those the runtime names: not when
 * the workspace is or holds one, as then it is the workspace seen through
 * its bind; never crossing into a mount: the workspace may live under
 * /tmp), so a call never finds what an earlier one left there. It does so
 * only when an earlier call left something: the helper holds open, from
 * its start, the directories of those file systems that emptying leaves,
 * and a few fstat calls on them tell (base_clean).
 *
 * Why persistent reapers: a fork per call (page-table copies, copy-on-
 * write faults and the TLB shootdowns they cause, the exit's unmapping)
 * cost more CPU than the exec of a dynamic /bin/true on the virtual
 * machine this was measured on (bench/RESULTS.md, issue 19).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandboxd_proto.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define MAX_CALLS 1024
#define MAX_SIGNAL 64
#define MAX_PRIVATE 4 /* directories emptied between calls */
#define MAX_BASE 32   /* their directories that stay (see `base`) */

/* The kernel's struct sigaction, as in src/exec/process.c. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/* A directory of the private file systems (/tmp, /dev/shm) that emptying
 * leaves: the top, and those bubblewrap made on the way to a mount point
 * (the workspace under /tmp, say), which hold a mount and cannot go. */
typedef struct base_dir {
    off_t size;            /* as it started: on a tmpfs, 20 per entry + 40 */
    mode_t mode;           /* as it started */
    bool top;              /* /tmp or /dev/shm itself (TMPDIRs come and go
                            * there: its ctime is not watched) */
    struct timespec ctime; /* when last seen clean (not for a top) */
} base_dir;

/* What the helper and its reapers share (an anonymous shared mapping):
 * `mu` (robust: a reaper killed while holding it does not block the rest)
 * guards `running`, `base`, `unsure` and the emptying of /tmp that the
 * first call to start does. */
typedef struct shared {
    pthread_mutex_t mu;
    int running;
    base_dir base[MAX_BASE];
    int nbase;   /* -1: too many to watch, /tmp is emptied before each */
    bool unsure; /* a call ran in the clock tick of a `ctime`: its
                  * changes may not show in the ctimes */
    volatile int busy[MAX_CALLS];  /* reaper i runs a call */
    volatile int alive[MAX_CALLS]; /* reaper i is there (the helper's) */
} shared;

static shared *sh;
static const char *priv[MAX_PRIVATE]; /* what is emptied between calls */
static int npriv;
static int base_fd[MAX_BASE];    /* the `base` directories, held open */
static pid_t reaper_pid;         /* a reaper's (in the namespace) */
static uint64_t call_scope;      /* Landlock scopes of each call, 0: none */
static pid_t reapers[MAX_CALLS]; /* the helper's: its reapers, by slot */
static int sigfd = -1;           /* SIGCHLD, the helper's */
static int wake[2] = {-1, -1};   /* reapers -> helper: "fork one more" */

/* ------------------------------------------------------------ helpers */

static ssize_t send_msg(int fd, int type, int a, int b)
{
    tg_sbd_msg m = {type, a, b, 0};
    ssize_t n;
    do {
        n = send(fd, &m, sizeof m, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
}

/* The parent of process `pid` from /proc/PID/stat, -1 when gone. */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold anything */
    if (p == NULL || p[1] == '\0' || p[2] == '\0')
        return -1;
    return (pid_t)strtol(p + 3, NULL, 10); /* ") S PPID" */
}

static bool is_reaper(pid_t pid);

/* SIGKILLs every child of this process (a /proc scan: the sandbox's /proc
 * shows its own PID namespace only) except reapers when `spare_reapers`.
 * Returns how many it signalled. */
static int kill_children(int spare_reapers)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    pid_t me = getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (parent_of(e->d_name) != me)
            continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (spare_reapers && is_reaper(pid))
            continue;
        kill(pid, SIGKILL);
        n++;
    }
    closedir(d);
    return n;
}

/* The next entry of d other than "." and "..", lstat'ed into *st, that
 * lies on device `dev` (a mount point, such as the workspace's bind or a
 * masked file, is on another one); NULL at the end of d. The name is d's,
 * valid until the next readdir of d. */
static const char *next_on_device(DIR *d, dev_t dev, struct stat *st)
{
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st->st_dev == dev)
            return e->d_name;
    }
    return NULL;
}

/* Opens directory `name` of d without following a symbolic link, and only
 * when it is still on device `dev` once open (it may have been replaced by
 * a mount point since it was lstat'ed); *st is its fstat. The descriptor
 * is the caller's, -1 when it could not be opened or is elsewhere. */
static int open_subdir_on(DIR *d, const char *name, dev_t dev, struct stat *st)
{
    int sub =
        openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -1;
    if (fstat(sub, st) != 0 || st->st_dev != dev) {
        close(sub);
        return -1;
    }
    return sub;
}

/* Removes what lies in directory fd (not fd itself), staying on device
 * `dev`: a mount point (the workspace's bind, a masked file) is left. */
static void empty_dir(int fd, dev_t dev)
{
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return;
    }
    const char *name;
    struct stat st;
    while ((name = next_on_device(d, dev, &st)) != NULL) {
        if (S_ISDIR(st.st_mode)) {
            struct stat s2;
            int sub = open_subdir_on(d, name, dev, &s2);
            if (sub < 0)
                continue;
            /* a call may have made it read-only to keep what it holds
             * (a baseline directory gets its mode back: empty_private) */
            if ((s2.st_mode & S_IRWXU) != S_IRWXU)
                (void)fchmod(sub, s2.st_mode | S_IRWXU);
            empty_dir(sub, dev);
            (void)unlinkat(dirfd(d), name, AT_REMOVEDIR);
        } else {
            (void)unlinkat(dirfd(d), name, 0);
        }
    }
    closedir(d);
}

static void empty_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return;
    }
    empty_dir(fd, st.st_dev);
}

/* --------------------------------------------------- the clean baseline */

/* Records directory fd (taken) and, on its device, the directories below
 * it, as they are before any call ran: the baseline of the private file
 * systems (the helper's, at its start). */
static void base_add(int fd, bool top)
{
    struct stat st;
    if (sh->nbase < 0 || fstat(fd, &st) != 0) {
        close(fd);
        return;
    }
    if (sh->nbase == MAX_BASE) {
        close(fd);
        sh->nbase = -1;
        return;
    }
    base_fd[sh->nbase] = fd;
    sh->base[sh->nbase].size = st.st_size;
    sh->base[sh->nbase].mode = st.st_mode & 07777;
    sh->base[sh->nbase].top = top;
    sh->base[sh->nbase].ctime = st.st_ctim;
    sh->nbase++;
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
    if (d == NULL) {
        if (dup >= 0)
            close(dup);
        sh->nbase = -1;
        return;
    }
    const char *name;
    struct stat s2;
    while ((name = next_on_device(d, st.st_dev, &s2)) != NULL) {
        if (!S_ISDIR(s2.st_mode))
            continue;
        int sub = open_subdir_on(d, name, st.st_dev, &s2);
        if (sub >= 0)
            base_add(sub, false);
    }
    closedir(d);
}

/* Whether the coarse clock (a tmpfs's time stamps, before Linux 6.13) may
 * still be in the tick of a recorded ctime: a change made now could leave
 * that ctime as it is. */
static bool in_base_tick(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0)
        return true;
    for (int i = 0; i < sh->nbase; i++) {
        const struct timespec *c = &sh->base[i].ctime;
        if (sh->base[i].top)
            continue;
        if (now.tv_sec < c->tv_sec ||
            (now.tv_sec == c->tv_sec && now.tv_nsec <= c->tv_nsec))
            return true;
    }
    return false;
}

/* True when no call left anything in the private directories since they
 * were last clean (nothing runs, the shared lock held), from a few fstat
 * calls instead of a walk of /tmp and /dev/shm. Each baseline directory
 * holds as many entries as it started with and has its mode: what a call
 * leaves anywhere below adds an entry to one of them unless the call took
 * one out, and the only entries a call cannot remove are mount points
 * (which cannot be moved either) and the baseline directories below a top,
 * whose ctime (which no call can set) any move, and any change in them,
 * renews. A call's TMPDIR is gone by now (removed before its end). */
static bool base_clean(void)
{
    if (sh->nbase < 0 || sh->unsure)
        return false;
    for (int i = 0; i < sh->nbase; i++) {
        const base_dir *b = &sh->base[i];
        struct stat st;
        if (fstat(base_fd[i], &st) != 0 || st.st_size != b->size ||
            (st.st_mode & 07777) != b->mode ||
            (!b->top && (st.st_ctim.tv_sec != b->ctime.tv_sec ||
                         st.st_ctim.tv_nsec != b->ctime.tv_nsec)))
            return false;
    }
    return true;
}

/* Empties the private directories (nothing runs; the shared lock held),
 * the baseline's modes restored first so that nothing a call made
 * read-only stays, and records their ctimes as clean. */
static void empty_private(void)
{
    struct stat st;
    for (int i = 0; i < sh->nbase; i++)
        if (fstat(base_fd[i], &st) == 0 &&
            (st.st_mode & 07777) != sh->base[i].mode)
            (void)fchmod(base_fd[i], sh->base[i].mode);
    for (int i = 0; i < npriv; i++)
        empty_path(priv[i]);
    for (int i = 0; i < sh->nbase; i++) {
        if (fstat(base_fd[i], &st) != 0)
            continue;
        if ((st.st_mode & 07777) != sh->base[i].mode) {
            /* emptying opened it up (empty_dir) */
            (void)fchmod(base_fd[i], sh->base[i].mode);
            if (fstat(base_fd[i], &st) != 0)
                continue;
        }
        sh->base[i].ctime = st.st_ctim;
    }
    sh->unsure = false;
}

static void remove_tree(const char *path)
{
    if (rmdir(path) == 0 || (errno != ENOTEMPTY && errno != EEXIST))
        return; /* the common case: the call left nothing in it */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0)
        empty_dir(fd, st.st_dev);
    else if (fd >= 0)
        close(fd);
    (void)rmdir(path);
}

/* ------------------------------------------------------------ the call */

typedef struct call {
    int ctl, in, out, err;
    char *text; /* the request's strings */
    const tg_sbd_req *req;
} call;

/* Makes the calling process (the command's child, before its exec) and
 * all it will start a Landlock domain of its own, scoped by call_scope;
 * nothing to do where Landlock cannot scope (call_scope 0). Returns 0, or
 * -1 with errno: the call does not run unscoped on a kernel that can. */
static int scope_call(void)
{
#ifdef SYS_landlock_create_ruleset
    if (call_scope == 0)
        return 0;
    tg_sbd_landlock_attr attr = {0, 0, call_scope};
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0)
        return -1;
    long r = syscall(SYS_landlock_restrict_self, fd, 0);
    close(fd);
    return r == 0 ? 0 : -1;
#else
    return 0;
#endif
}

/* In the command's child (of vfork: it shares the reaper's memory until
 * it execs or exits): never returns. A failure before the exec, or of the
 * exec, is put in res (stage, errno) for the reaper, resumed when this
 * process exits, to read. */
static void __attribute__((noreturn))
run_command(const call *c, const char *path, const char *cwd, char **argv,
            char **envp, volatile int *res, pid_t parent)
{
    int stage = 3, e = 0; /* TG__SPAWN_STAGE_SETUP */
    if (setsid() < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || scope_call() != 0)
        goto fail;
    if (getppid() != parent)
        _exit(127);
    /* signals are at their defaults already (main) */
    if (dup2(c->in, 0) < 0 || dup2(c->out, 1) < 0 || dup2(c->err, 2) < 0)
        goto fail;
    (void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    for (uint32_t i = 0; i < c->req->nlimits; i++) {
        struct rlimit rl = {c->req->limits[i].value, c->req->limits[i].value};
        if (setrlimit((__rlimit_resource_t)c->req->limits[i].resource, &rl) !=
            0)
            goto fail;
    }
    /* the mask is empty already: the reaper's (reaper), inherited */
    if (chdir(cwd) != 0) {
        stage = 1; /* TG__SPAWN_STAGE_CHDIR */
        goto fail;
    }
    execve(path, argv, envp);
    stage = 2; /* TG__SPAWN_STAGE_EXEC */
fail:
    e = errno;
    res[1] = e;
    res[0] = stage;
    _exit(127);
}

/* Kills every process of the call (all are below this subreaper) until
 * none is left; records the command's status when it is reaped here. */
static void kill_all(pid_t cmd, int *status, int *have)
{
    int st;
    pid_t r;
    /* the common case: the command exited, reaped, and left nothing */
    while ((r = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
        if (r == cmd) {
            *status = st;
            *have = 1;
        }
    if (r < 0 && errno == ECHILD)
        return;
    for (;;) {
        if (!*have)
            kill(-cmd, SIGKILL); /* its group, before its pid can go */
        kill_children(0);
        bool any = false;
        while ((r = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
            any = true;
            if (r == cmd) {
                *status = st;
                *have = 1;
            }
        }
        if (r < 0 && errno == ECHILD)
            return;
        if (!any) {
            /* some are still dying: wait for one */
            r = waitpid(-1, &st, __WALL);
            if (r == cmd) {
                *status = st;
                *have = 1;
            }
            if (r < 0 && errno == ECHILD)
                return;
        }
    }
}

static bool call_end(int slot);

/* Runs one call (a reaper's): reports FAILED or EXITED on its control
 * socket, after call_end(slot), unless the runtime went away. Frees what
 * it allocates; the call's descriptors stay the caller's. */
static void run_call(call *c, int slot)
{
    static unsigned seq; /* of this reaper's calls: names TMPDIR */
    const tg_sbd_req *q = c->req;
    char tmpdir[48];
    /* strings: path, cwd, argv..., envp... */
    char *s = c->text, *end = c->text + q->len;
    char *path = s, *cwd;
    size_t nv = q->nargv, ne = q->nenv;
    char **argv = calloc(nv + 1, sizeof *argv);
    char **envp = calloc(ne + 2, sizeof *envp);
    char *tmpenv = malloc(sizeof tmpdir + 8);
    if (argv == NULL || envp == NULL || tmpenv == NULL) {
        call_end(slot);
        send_msg(c->ctl, TG_SBD_FAILED, 3, ENOMEM);
        goto out;
    }
    s += strnlen(s, (size_t)(end - s)) + 1;
    cwd = s;
    for (size_t i = 0; i < nv + ne + 1 && s < end; i++) {
        s += strnlen(s, (size_t)(end - s)) + 1;
        if (s >= end)
            break;
        if (i < nv)
            argv[i] = s;
        else if (i < nv + ne)
            envp[i - nv] = s;
    }
    /* A fresh 0700 directory: mkdir fails on anything already there (a
     * call of the same profile may make the next name first; then one
     * more), so no random name (mkdtemp's getrandom) is needed. */
    int made = -1;
    for (int i = 0; made != 0 && i < 64; i++) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/tg-call-%d-%u", slot, seq++);
        made = mkdir(tmpdir, 0700);
        if (made != 0 && errno != EEXIST)
            break;
    }
    if (made != 0) {
        int e = errno;
        call_end(slot);
        send_msg(c->ctl, TG_SBD_FAILED, 3, e);
        goto out;
    }
    snprintf(tmpenv, sizeof tmpdir + 8, "TMPDIR=%s", tmpdir);
    size_t k = 0;
    for (size_t i = 0; i < ne && envp[i] != NULL; i++)
        if (strncmp(envp[i], "TMPDIR=", 7) != 0)
            envp[k++] = envp[i];
    envp[k++] = tmpenv;
    envp[k] = NULL;

    /* vfork: no copy of this process's page tables (a fork's cost is
     * mostly that, and on a virtual machine page-table updates are
     * dear). The child only makes system calls until it execs or exits;
     * this process has no signal handlers. This process resumes once the
     * exec succeeded or the child exited: what failed is in res by then,
     * and no pipe (nor a wake-up for its end) is needed to learn it. */
    volatile int res[2] = {0, 0};
    pid_t cmd = vfork();
    if (cmd == 0)
        run_command(c, path, cwd, argv, envp, res, reaper_pid);
    int verr = errno;
    /* the command's only now: its output ends when it and its own end */
    close(c->in);
    close(c->out);
    close(c->err);
    c->in = c->out = c->err = -1;
    int status = 0, have = 0;
    if (cmd < 0) {
        rmdir(tmpdir);
        call_end(slot);
        send_msg(c->ctl, TG_SBD_FAILED, 3, verr);
        goto out;
    }
    int failed = res[0] != 0;
    ssize_t n;
    int pfd = failed ? -1 : (int)syscall(SYS_pidfd_open, cmd, 0);
    while (!failed) {
        struct pollfd pf[2] = {{c->ctl, POLLIN, 0}, {pfd, POLLIN, 0}};
        int pr = poll(pf, 2, pfd >= 0 ? -1 : 50);
        if (pr < 0 && errno != EINTR)
            break;
        if (pfd < 0 || (pr > 0 && pf[1].revents)) {
            pid_t w = waitpid(cmd, &status, WNOHANG);
            if (w == cmd) {
                have = 1;
                break;
            }
        }
        if (pr > 0 && pf[0].revents) {
            tg_sbd_msg m;
            n = recv(c->ctl, &m, sizeof m, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                /* the runtime went away: nothing to report to */
                kill_all(cmd, &status, &have);
                remove_tree(tmpdir);
                if (pfd >= 0)
                    close(pfd);
                call_end(slot);
                goto out;
            }
            if (n == (ssize_t)sizeof m && m.type == TG_SBD_SIGNAL) {
                if (m.a == SIGKILL)
                    break; /* kill_all below */
                kill(-cmd, m.a);
            }
        }
    }
    kill_all(cmd, &status, &have);
    remove_tree(tmpdir);
    if (pfd >= 0)
        close(pfd);
    /* not running any more before the runtime can send the next call */
    call_end(slot);
    if (failed)
        send_msg(c->ctl, TG_SBD_FAILED, res[0], res[1]);
    else
        send_msg(c->ctl, TG_SBD_EXITED, have ? status : (128 + SIGKILL) << 8,
                 0);
out:
    free(argv);
    free(envp);
    free(tmpenv);
}

/* ------------------------------------------------------------ a reaper */

/* Takes the shared lock, repairing it when its holder died. */
static void lock(void)
{
    if (pthread_mutex_lock(&sh->mu) == EOWNERDEAD)
        pthread_mutex_consistent(&sh->mu); /* its owner died: `running`
                                            * was fixed by the helper */
}

/* A call starts on reaper `slot`: the first of none empties /tmp and
 * /dev/shm; the helper is asked for one more reaper when none is idle. */
static void call_start(int slot)
{
    lock();
    if (sh->running == 0 && !base_clean())
        empty_private(); /* nothing runs: what earlier calls left goes */
    if (!sh->unsure)
        sh->unsure = in_base_tick();
    sh->running++;
    sh->busy[slot] = 1;
    pthread_mutex_unlock(&sh->mu);
    bool idle = false;
    for (int i = 0; i < MAX_CALLS && !idle; i++)
        idle = sh->alive[i] && !sh->busy[i];
    if (!idle) {
        ssize_t n;
        do {
            n = write(wake[1], "+", 1);
        } while (n < 0 && errno == EINTR);
    }
}

/* The call of reaper `slot` no longer runs (idempotent): true when one
 * was running. */
static bool call_end(int slot)
{
    lock();
    bool was = sh->busy[slot];
    if (was) {
        sh->running--;
        sh->busy[slot] = 0;
    }
    pthread_mutex_unlock(&sh->mu);
    return was;
}

static void close_fds(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* One request from the runtime, run: 1 to go on, 0 when the runtime is
 * gone. */
static int serve(int sock, int slot)
{
    static union {
        tg_sbd_req req;
        char bytes[sizeof(tg_sbd_req) + TG_SBD_INLINE_MAX];
    } space;
    __typeof__(space) *buf = &space;
    int fds[TG_SBD_NFDS + 1];
    char cbuf[CMSG_SPACE(sizeof fds)];
    struct iovec iov = {buf->bytes, sizeof space};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf};
    ssize_t n;
    do {
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        return n < 0 && errno == EAGAIN ? 1 : 0;
    int nfds = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL;
         cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < got; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                if (nfds < TG_SBD_NFDS + 1)
                    fds[nfds++] = fd;
                else
                    close(fd);
            }
        }
    const tg_sbd_req *q = &buf->req;
    if ((size_t)n < sizeof *q || q->magic != TG_SBD_MAGIC ||
        nfds != TG_SBD_NFDS + (q->in_memfd ? 1 : 0) ||
        q->nlimits > TG_SBD_MAX_LIMITS ||
        (!q->in_memfd && (size_t)n != sizeof *q + q->len)) {
        if (nfds > 0)
            send_msg(fds[0], TG_SBD_FAILED, 3, EPROTO);
        close_fds(fds, nfds);
        return 1;
    }
    call c = {fds[0], fds[1], fds[2], fds[3], NULL, q};
    char *heap = NULL;
    if (q->in_memfd) {
        c.text = heap = malloc((size_t)q->len + 1);
        if (heap == NULL || pread(fds[4], heap, q->len, 0) != (ssize_t)q->len)
            c.text = NULL;
    } else {
        c.text = buf->bytes + sizeof *q;
    }
    if (c.text == NULL || q->len == 0 || c.text[q->len - 1] != '\0') {
        send_msg(c.ctl, TG_SBD_FAILED, 3, EPROTO);
    } else {
        call_start(slot);
        run_call(&c, slot);
    }
    free(heap);
    /* run_call closed and set to -1 those it gave the command */
    fds[1] = c.in;
    fds[2] = c.out;
    fds[3] = c.err;
    close_fds(fds, nfds);
    return 1;
}

/* A reaper's life (in a child of the helper): calls one after the other
 * until the runtime's end of the socket closes. */
static void __attribute__((noreturn)) reaper(int sock, int slot)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "tg-reaper");
    if (getppid() != 1)
        _exit(1); /* the helper died before PDEATHSIG was set */
    reaper_pid = getpid();
    close(sigfd);
    close(wake[0]);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    while (serve(sock, slot))
        ;
    _exit(0);
}

/* ------------------------------------------------------------ the helper */

static bool is_reaper(pid_t pid)
{
    for (int i = 0; i < MAX_CALLS; i++)
        if (reapers[i] == pid)
            return true;
    return false;
}

/* Reaps what exited; a reaper that died during a call (killed) leaves its
 * call's processes to this process: they are killed, and the call no
 * longer counts as running. */
static void reap(void)
{
    int st;
    pid_t r;
    bool orphans = false;
    while ((r = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
        int i;
        for (i = 0; i < MAX_CALLS && reapers[i] != r; i++)
            ;
        if (i == MAX_CALLS) {
            orphans = true; /* a process of a dead reaper's call */
            continue;
        }
        reapers[i] = 0;
        sh->alive[i] = 0;
        if (call_end(i))
            orphans = true; /* it died during a call */
    }
    if (orphans)
        kill_children(1);
}

/* Forks reapers until one is idle (or MAX_CALLS are there). */
static void keep_one_idle(int sock)
{
    for (;;) {
        int slot = -1;
        for (int i = 0; i < MAX_CALLS; i++) {
            if (reapers[i] != 0 && !sh->busy[i])
                return;
            if (reapers[i] == 0 && slot < 0)
                slot = i;
        }
        if (slot < 0)
            return;
        sh->busy[slot] = 0;
        pid_t pid = fork();
        if (pid == 0)
            reaper(sock, slot);
        if (pid < 0)
            return; /* the next call or exit tries again */
        reapers[slot] = pid;
        sh->alive[slot] = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 + MAX_PRIVATE)
        return 2;
    /* "net": the profile has the host's network, so its abstract UNIX
     * sockets are the host's too and a call may use them as in cold mode;
     * otherwise only calls of this sandbox have any, and each call keeps
     * to its own. */
    bool net = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "net") == 0)
            net = true;
        else if (npriv < MAX_PRIVATE)
            priv[npriv++] = argv[i];
    }
    if (tg_sbd_landlock_abi() >= TG_SBD_LANDLOCK_SCOPED_ABI)
        call_scope =
            TG_SBD_SCOPE_SIGNAL | (net ? 0 : TG_SBD_SCOPE_ABSTRACT_UNIX_SOCKET);
    int sock = (int)strtol(argv[1], NULL, 10);
    struct stat st;
    if (sock < 3 || fstat(sock, &st) != 0 || !S_ISSOCK(st.st_mode))
        return 2;
    /* No ptrace, no /proc/PID/fd for anything running as the same user
     * without capabilities (and it has none, nor have the calls). */
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "tg-sandboxd");
    /* Keep only the socket (the memfd this program runs from included). */
    if (dup2(sock, 3) < 0)
        return 2;
    if (sock != 3)
        close(sock);
    sock = 3;
    (void)close_range(4, ~0U, 0);
    int fl = fcntl(sock, F_GETFD);
    fcntl(sock, F_SETFD, fl | FD_CLOEXEC);
    /* Every signal at its default, once, for every process of the sandbox
     * (bubblewrap's or the runtime's ignored ones are not inherited): no
     * command resets them per call. As PID 1 of its namespace this process
     * still gets no signal from inside it. */
    for (int s = 1; s <= MAX_SIGNAL; s++) {
        struct kernel_sigaction dfl = {SIG_DFL, 0, NULL, 0};
        if (s != SIGKILL && s != SIGSTOP)
            (void)syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 2;
    pthread_mutexattr_t ma;
    if (pthread_mutexattr_init(&ma) != 0 ||
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) != 0 ||
        pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST) != 0 ||
        pthread_mutex_init(&sh->mu, &ma) != 0)
        return 2;
    pthread_mutexattr_destroy(&ma);
    /* the private directories as bubblewrap made them: clean */
    for (int i = 0; i < npriv; i++) {
        int fd = open(priv[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
            base_add(fd, true);
    }
    sh->unsure = in_base_tick();
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return 2;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        return 2;
    keep_one_idle(sock);
    for (;;) {
        /* the socket is the reapers' to read: only its hang-up is this
         * process's concern */
        struct pollfd pf[3] = {
            {sock, 0, 0}, {sfd, POLLIN, 0}, {wake[0], POLLIN, 0}};
        if (poll(pf, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            return 1;
        }
        if (pf[0].revents & (POLLHUP | POLLERR))
            return 0;
        if (pf[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) > 0)
                ;
            reap();
        }
        if (pf[2].revents) {
            char b[64];
            while (read(wake[0], b, sizeof b) > 0)
                ;
        }
        keep_one_idle(sock);
    }
}
