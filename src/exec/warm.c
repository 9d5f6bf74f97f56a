/* SPDX-License-Identifier: MIT */
/*
 * warm.c - the warm sandbox's runtime side (warm.h): a pool of bubblewraps
 * each running toolgate-sandboxd (src/sandboxd/) as its PID 1, one per
 * profile, started on the first call that needs it, ended when unused for
 * sandbox.idle_ms (a thread of the pool watches the clock), with the pool,
 * or when found dead (the next call starts a new one; the calls it held
 * read EOF on their control sockets and end INTERRUPTED).
 *
 * The helper's bytes are linked into the library (sandboxd_blob.c.in) and
 * put once per process in a sealed memfd, which bubblewrap runs as
 * /proc/self/fd/6: no installed file to find, so the library, the CLI and
 * the Python binding work alike from a build tree or an install.
 *
 * A call: a control socket pair is made, the helper's end sent with the
 * call's stdin, stdout and stderr and its argv, environment, cwd and
 * limits in one SOCK_SEQPACKET message; the call's reaper answers FAILED
 * or EXITED on the control socket (sandboxd_proto.h). The spawn does not
 * wait for the command to start: a failed exec arrives as FAILED.
 */
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "policy.h"
#include "sandbox.h"
#include "sandboxd_proto.h"
#include "timeutil.h"
#include "watchdog.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* toolgate-sandboxd's bytes (sandboxd_blob.c.in) */
extern const unsigned char tg__sandboxd_bytes[];
extern const unsigned char tg__sandboxd_end[];

struct tg__warm_helper {
    struct tg__warm_helper *next;
    char *key;
    pid_t pid;       /* bubblewrap (a child of this process), its group */
    int inner_pidfd; /* the helper, PID 1 of the sandbox */
    int sock;
    int refs;      /* calls using it */
    bool listed;   /* in the pool (else ended, freed with its last call) */
    uint64_t used; /* when last released (monotonic ns) */
    const tg__watchdog *watch;
};

struct tg__warm {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    bool reaper_on, stop;
    int64_t idle_ms;
    int memfd; /* the helper program */
    tg__warm_helper *list;
};

/* ------------------------------------------------------------ the helper */

/* Ends a helper taken out of the pool: its socket closed (it exits, and
 * its namespace with it), bubblewrap killed and reaped. */
static void helper_end(tg__warm_helper *h)
{
    if (h->sock >= 0)
        close(h->sock);
    h->sock = -1;
    if (h->inner_pidfd >= 0) {
        (void)syscall(SYS_pidfd_send_signal, h->inner_pidfd, SIGKILL, NULL, 0);
        close(h->inner_pidfd);
        h->inner_pidfd = -1;
    }
    if (h->pid > 0) {
        kill(-h->pid, SIGKILL);
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        tg__watchdog_remove(h->watch, h->pid);
        h->pid = 0;
    }
}

static void helper_free(tg__warm_helper *h)
{
    helper_end(h);
    free(h->key);
    free(h);
}

/* True when the helper has gone (its socket hung up, or PID 1 exited). */
static bool helper_dead(const tg__warm_helper *h)
{
    struct pollfd pf[2] = {{h->sock, POLLIN, 0}, {h->inner_pidfd, POLLIN, 0}};
    return poll(pf, 2, 0) != 0;
}

/* Starts a helper for `network` (the pool's lock held). NULL with why[]. */
static tg__warm_helper *helper_start(tg__warm *w, const tg__sandbox *sb,
                                     const tg_config *cfg,
                                     const tg__watchdog *watch, bool network,
                                     const char *key, char *why, size_t whylen)
{
    int sv[2] = {-1, -1}, info[2] = {-1, -1}, blk[2] = {-1, -1};
    int devnull = -1;
    char **argv = NULL;
    tg__warm_helper *h = calloc(1, sizeof *h);
    if (h == NULL || (h->key = strdup(key)) == NULL) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    h->sock = h->inner_pidfd = -1;
    h->watch = watch;
    /* The directories the helper empties between calls: the sandbox's own
     * /tmp and /dev/shm, unless the workspace is one of them or holds
     * them; then what is there is the workspace's, seen through its bind,
     * and stays. */
    char *hargv[6] = {"toolgate-sandboxd", "5", NULL, NULL, NULL, NULL};
    int nh = 2;
    if (network)
        hargv[nh++] = "net";
    if (!tg__path_under("/tmp", cfg->workspace))
        hargv[nh++] = "/tmp";
    if (!tg__path_under("/dev/shm", cfg->workspace))
        hargv[nh++] = "/dev/shm";
    argv = tg__sandbox_warm_argv(sb, cfg, network, "/proc/self/fd/6", hargv);
    devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (argv == NULL || devnull < 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
        pipe2(info, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, blk) != 0) {
        snprintf(why, whylen, "cannot prepare a warm sandbox: %s",
                 strerror(errno));
        goto fail;
    }
    char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    /* stderr too: bubblewrap's own failure is read from the hand-shake */
    tg__spawn sp = {sb->bwrap, argv,    envp,   cfg->workspace,
                    devnull,   devnull, devnull};
    /* no limits: the calls get theirs from the requests */
    tg__spawn_extra spx = {NULL, 0, 4, {info[1], blk[0], sv[1], w->memfd}};
    int stage, errnum;
    pid_t pid;
    tg__watchdog_ready(watch);
    if (tg__proc_spawn_ex(&sp, &spx, &pid, &stage, &errnum) != 0) {
        snprintf(why, whylen, "cannot run %.300s: %s", sb->bwrap,
                 strerror(errnum));
        goto fail;
    }
    h->pid = pid;
    tg__watchdog_add(watch, pid);
    close(info[1]);
    close(blk[0]);
    close(sv[1]);
    info[1] = blk[0] = sv[1] = -1;
    /* The process limit is the sandbox's, shared by its calls: as root the
     * namespace's pid_max, whose numbers wrap to 300 (so 300 more), else
     * RLIMIT_NPROC counted in its user namespace, the reapers besides. */
    rlim_t nproc = sb->nproc;
    if (nproc > 0)
        nproc += sb->root ? 300 + 16 : (rlim_t)cfg->parallel + 2;
    pid_t inner;
    if (tg__sandbox_handshake_n(sb, nproc, info[0], blk[1], &inner,
                                &h->inner_pidfd, why, whylen) != 0 ||
        inner <= 0) {
        if (why[0] == '\0')
            snprintf(why, whylen, "bubblewrap did not start the warm sandbox");
        goto fail;
    }
    h->sock = sv[0];
    sv[0] = -1;
    h->listed = true;
    close(info[0]);
    close(blk[1]);
    close(devnull);
    free(argv);
    return h;
fail:
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (info[i] >= 0)
            close(info[i]);
        if (blk[i] >= 0)
            close(blk[i]);
    }
    if (devnull >= 0)
        close(devnull);
    free(argv);
    if (h != NULL)
        helper_free(h);
    return NULL;
}

/* ------------------------------------------------------------ the pool */

/* The pool's thread: ends helpers unused for idle_ms. */
static void *idle_reaper(void *arg)
{
    tg__warm *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        uint64_t now = tg__mono_ns(), idle = (uint64_t)w->idle_ms * 1000000;
        uint64_t next = now + idle;
        tg__warm_helper **pp = &w->list, *gone = NULL;
        while (*pp != NULL) {
            tg__warm_helper *h = *pp;
            if (h->refs == 0 && now - h->used >= idle) {
                *pp = h->next;
                h->listed = false;
                h->next = gone;
                gone = h;
                continue;
            }
            if (h->refs == 0 && h->used + idle < next)
                next = h->used + idle;
            pp = &h->next;
        }
        pthread_mutex_unlock(&w->mu);
        while (gone != NULL) {
            tg__warm_helper *h = gone;
            gone = h->next;
            helper_free(h);
        }
        pthread_mutex_lock(&w->mu);
        if (w->stop)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t wait = next > now ? next - now : 1000000;
        ts.tv_sec += (time_t)(wait / 1000000000);
        ts.tv_nsec += (long)(wait % 1000000000);
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

tg__warm *tg__warm_new(int64_t idle_ms, char *why, size_t whylen)
{
    size_t len = (size_t)(tg__sandboxd_end - tg__sandboxd_bytes);
    tg__warm *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    w->idle_ms = idle_ms;
    int fd = memfd_create("toolgate-sandboxd",
                          MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("toolgate-sandboxd", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    size_t off = 0;
    while (fd >= 0 && off < len) {
        ssize_t n = write(fd, tg__sandboxd_bytes + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    if (fd < 0 || off != len || len == 0 ||
        fcntl(fd, F_ADD_SEALS,
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        snprintf(why, whylen, "cannot put the sandbox helper in a memfd: %s",
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        free(w);
        return NULL;
    }
    w->memfd = fd;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

void tg__warm_free(tg__warm *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->reaper_on)
        pthread_join(w->reaper, NULL);
    while (w->list != NULL) {
        tg__warm_helper *h = w->list;
        w->list = h->next;
        if (h->refs == 0)
            helper_free(h);
        else {
            h->listed = false; /* its last call frees it */
            helper_end(h);
        }
    }
    close(w->memfd);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

size_t tg__warm_count(tg__warm *w)
{
    size_t n = 0;
    if (w == NULL)
        return 0;
    pthread_mutex_lock(&w->mu);
    for (tg__warm_helper *h = w->list; h != NULL; h = h->next)
        n++;
    pthread_mutex_unlock(&w->mu);
    return n;
}

/* The helper of the profile, started when there is none or it died; with
 * a reference taken. NULL with why[]. */
static tg__warm_helper *helper_get(tg__warm *w, const tg__sandbox *sb,
                                   const tg_config *cfg,
                                   const tg__watchdog *watch, bool network,
                                   const char *key, char *why, size_t whylen)
{
    tg__warm_helper *h, *dead = NULL;
    pthread_mutex_lock(&w->mu);
    for (tg__warm_helper **pp = &w->list; (h = *pp) != NULL; pp = &h->next) {
        if (strcmp(h->key, key) != 0)
            continue;
        if (!helper_dead(h))
            break;
        /* a crashed helper: out of the pool, freed with its last call */
        *pp = h->next;
        h->listed = false;
        if (h->refs == 0)
            dead = h;
        h = NULL;
        break;
    }
    if (h == NULL) {
        h = helper_start(w, sb, cfg, watch, network, key, why, whylen);
        if (h != NULL) {
            h->next = w->list;
            w->list = h;
            if (!w->reaper_on &&
                pthread_create(&w->reaper, NULL, idle_reaper, w) == 0)
                w->reaper_on = true;
        }
    }
    if (h != NULL)
        h->refs++;
    pthread_mutex_unlock(&w->mu);
    if (dead != NULL)
        helper_free(dead);
    return h;
}

void tg__warm_release(const tg__sandbox *sb, tg__warm_helper *h)
{
    tg__warm *w = sb->warm;
    if (h == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    h->refs--;
    h->used = tg__mono_ns();
    bool free_it = h->refs == 0 && !h->listed;
    /* No wake-up of the idle thread: it sleeps at most idle_ms, and this
     * helper cannot expire before that. */
    pthread_mutex_unlock(&w->mu);
    if (free_it)
        helper_free(h);
}

void tg__warm_forget(const tg__sandbox *sb, tg__warm_helper *h)
{
    tg__warm *w = sb->warm;
    if (h == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    if (h->listed) {
        for (tg__warm_helper **pp = &w->list; *pp != NULL; pp = &(*pp)->next)
            if (*pp == h) {
                *pp = h->next;
                break;
            }
        h->listed = false; /* freed with its last call */
    }
    pthread_mutex_unlock(&w->mu);
}

/* ------------------------------------------------------------ a call */

/* The request's strings into b (path, cwd, argv, envp); its length, 0 on
 * out of memory. *b is the caller's to free. */
static size_t pack(const tg__warm_call *wc, uint32_t *nargv, uint32_t *nenv,
                   char **b)
{
    size_t len = strlen(wc->path) + 1 + strlen(wc->cwd) + 1;
    uint32_t na = 0, ne = 0;
    for (; wc->argv[na] != NULL; na++)
        len += strlen(wc->argv[na]) + 1;
    for (; wc->envp != NULL && wc->envp[ne] != NULL; ne++)
        len += strlen(wc->envp[ne]) + 1;
    char *p = *b = malloc(len);
    if (p == NULL)
        return 0;
    size_t n = strlen(wc->path) + 1;
    memcpy(p, wc->path, n);
    p += n;
    n = strlen(wc->cwd) + 1;
    memcpy(p, wc->cwd, n);
    p += n;
    for (uint32_t i = 0; i < na; i++, p += n)
        memcpy(p, wc->argv[i], n = strlen(wc->argv[i]) + 1);
    for (uint32_t i = 0; i < ne; i++, p += n)
        memcpy(p, wc->envp[i], n = strlen(wc->envp[i]) + 1);
    *nargv = na;
    *nenv = ne;
    return len;
}

/* Sends the request; 0 or an errno value (EPIPE: the helper is gone). */
static int send_req(int sock, const tg_sbd_req *q, const char *text, size_t len,
                    const int *fds, int nfds)
{
    int memfd = -1;
    struct iovec iov[2] = {{(void *)q, sizeof *q}, {(void *)text, len}};
    int niov = 2;
    if (q->in_memfd) {
        memfd = memfd_create("toolgate-call", MFD_CLOEXEC);
        size_t off = 0;
        while (memfd >= 0 && off < len) {
            ssize_t n = write(memfd, text + off, len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        if (memfd < 0 || off != len) {
            int e = errno ? errno : EIO;
            if (memfd >= 0)
                close(memfd);
            return e;
        }
        niov = 1;
    }
    int all[TG_SBD_NFDS + 1];
    memcpy(all, fds, (size_t)nfds * sizeof *all);
    if (memfd >= 0)
        all[nfds++] = memfd;
    char cbuf[CMSG_SPACE(sizeof all)];
    memset(cbuf, 0, sizeof cbuf);
    struct msghdr mh = {.msg_iov = iov,
                        .msg_iovlen = (size_t)niov,
                        .msg_control = cbuf,
                        .msg_controllen =
                            CMSG_SPACE((size_t)nfds * sizeof(int))};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), all, (size_t)nfds * sizeof(int));
    ssize_t n;
    do {
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    int e = n < 0 ? errno : 0;
    if (memfd >= 0)
        close(memfd);
    return e;
}

int tg__warm_spawn(const tg__sandbox *sb, const tg_config *cfg,
                   const tg__watchdog *watch, const tg__warm_call *wc, int *ctl,
                   tg__warm_helper **hout, int *stage, int *errnum, char *why,
                   size_t whylen)
{
    tg_sbd_req q = {.magic = TG_SBD_MAGIC};
    char *text = NULL;
    int cv[2] = {-1, -1}, rc = -2;
    tg__warm_helper *h = NULL;
    *ctl = -1;
    *hout = NULL;
    *stage = TG__SPAWN_STAGE_SETUP;
    *errnum = 0;
    why[0] = '\0';
    size_t len = pack(wc, &q.nargv, &q.nenv, &text);
    if (len == 0 || len > UINT32_MAX) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    q.len = (uint32_t)len;
    q.in_memfd = len > TG_SBD_INLINE_MAX;
    for (size_t i = 0; i < wc->nlimits && i < TG_SBD_MAX_LIMITS; i++) {
        q.limits[i].resource = wc->limits[i].resource;
        q.limits[i].value = wc->limits[i].value;
        q.nlimits++;
    }
    /* "n1\x1f" + caller: the profile */
    size_t klen = 4 + (wc->caller ? strlen(wc->caller) : 0);
    char *key = malloc(klen);
    if (key == NULL) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    snprintf(key, klen, "n%d\x1f%s", wc->network ? 1 : 0,
             wc->caller ? wc->caller : "");
    for (int attempt = 0; attempt < 2; attempt++) {
        h = helper_get(sb->warm, sb, cfg, watch, wc->network, key, why, whylen);
        if (h == NULL)
            break;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cv) != 0) {
            snprintf(why, whylen, "cannot reach the warm sandbox: %s",
                     strerror(errno));
            break;
        }
        int fds[TG_SBD_NFDS] = {cv[1], wc->fd_in, wc->fd_out, wc->fd_err};
        int e = send_req(h->sock, &q, text, len, fds, TG_SBD_NFDS);
        close(cv[1]);
        cv[1] = -1;
        if (e == 0)
            break;
        close(cv[0]);
        cv[0] = -1;
        snprintf(why, whylen, "cannot reach the warm sandbox: %s", strerror(e));
        /* gone since it was found alive: once more with a new one */
        tg__warm_release(sb, h);
        h = NULL;
    }
    free(key);
    if (h == NULL || cv[0] < 0)
        goto out;
    *ctl = cv[0];
    cv[0] = -1;
    *hout = h;
    h = NULL;
    *stage = TG__SPAWN_STAGE_NONE;
    rc = 0;
out:
    if (cv[0] >= 0)
        close(cv[0]);
    if (h != NULL)
        tg__warm_release(sb, h);
    free(text);
    return rc;
}

void tg__warm_signal(int ctl, int signo)
{
    tg_sbd_msg m = {TG_SBD_SIGNAL, signo, 0, 0};
    ssize_t n;
    do {
        n = send(ctl, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
}

int tg__warm_read_exit(int ctl, int *status, int *stage, int *errnum)
{
    tg_sbd_msg m;
    for (;;) {
        ssize_t n = recv(ctl, &m, sizeof m, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return -1;
        if (n == (ssize_t)sizeof m && m.type == TG_SBD_EXITED) {
            *status = m.a;
            return 1;
        }
        if (n == (ssize_t)sizeof m && m.type == TG_SBD_FAILED) {
            *stage = m.a;
            *errnum = m.b;
            return 2;
        }
        if (n > 0)
            continue; /* nothing else is expected; skip it */
        return 0;
    }
}
