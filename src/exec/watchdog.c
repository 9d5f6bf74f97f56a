/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - nothing a tool started outlives its runtime, even when the
 * runtime is killed with SIGKILL. Each tool leads its own process group and
 * dies with toolgate (PR_SET_PDEATHSIG), but what it started does not: a
 * daemonized grandchild keeps the group alive after the leader is gone.
 *
 * So each runtime forks one small watchdog at start. The runtime tells it,
 * through a socket pair (one message per packet; a dead watchdog cannot
 * raise SIGPIPE in the runtime), each tool group that starts (+pgid) and
 * each that is done (-pgid); when the runtime ends, however it ends, the
 * kernel closes its end, the watchdog reads end-of-file, kills every group
 * it still holds and exits. A group id cannot be reused while any process is
 * still in that group, so killing a group the watchdog holds never hits a
 * stranger. The watchdog runs in a session of its own (Ctrl-C and the
 * terminal's hang-up do not reach it) and uses only async-signal-safe calls
 * after fork, as the runtime may have threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "runtime.h"

#define WATCH_MAX 65536 /* groups held at once; far above limits.parallel */

typedef struct watch_msg {
    int32_t op; /* +1 a group started, -1 it is done */
    int32_t pgid;
} watch_msg;

static void __attribute__((noreturn)) watchdog_main(int fd, int32_t *held)
{
    size_t n = 0;
    /* Only the pipe stays open: no journal, no terminal, no tool pipes. */
    if (fd != 3) {
        if (dup2(fd, 3) < 0)
            _exit(1);
        fd = 3;
    }
    (void)syscall(SYS_close_range, 4u, ~0u, 0u);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        (void)dup2(null, 0);
        (void)dup2(null, 1);
        (void)dup2(null, 2);
        if (null > 3)
            (void)close(null);
    }
    (void)setsid();
    struct sigaction ign = {.sa_handler = SIG_IGN};
    static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,
                               SIGQUIT, SIGTSTP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        (void)sigaction(sigs[i], &ign, NULL);
    for (;;) {
        watch_msg m;
        ssize_t r = read(fd, &m, sizeof m);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof m)
            break; /* end of file: the runtime is gone */
        if (m.op > 0 && n < WATCH_MAX && m.pgid > 1) {
            held[n++] = m.pgid;
        } else if (m.op < 0) {
            for (size_t i = 0; i < n; i++)
                if (held[i] == m.pgid) {
                    held[i] = held[--n];
                    break;
                }
        }
    }
    for (size_t i = 0; i < n; i++)
        (void)kill(-held[i], SIGKILL);
    _exit(0);
}

int tg__watchdog_start(tg_runtime *rt, tg_error *err)
{
    rt->watch_fd = -1;
    rt->watch_pid = -1;
    /* The table is made before fork: the child must not call malloc. */
    int32_t *held = malloc(WATCH_MAX * sizeof *held);
    int p[2];
    if (held == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) != 0) {
        free(held);
        return tg__error_set(err, TG_EIO, "cannot start the watchdog: %s",
                             strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        watchdog_main(p[0], held);
    }
    int e = errno;
    free(held);
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return tg__error_set(err, TG_ESPAWN, "cannot start the watchdog: %s",
                             strerror(e));
    }
    rt->watch_fd = p[1];
    rt->watch_pid = pid;
    return 0;
}

static void watch_send(const tg_runtime *rt, int32_t op, pid_t pgid)
{
    if (rt->watch_fd < 0 || pgid <= 1)
        return;
    watch_msg m = {op, (int32_t)pgid};
    /* One packet, from any thread. */
    while (send(rt->watch_fd, &m, sizeof m, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

void tg__watchdog_add(const tg_runtime *rt, pid_t pgid)
{
    watch_send(rt, 1, pgid);
}

void tg__watchdog_remove(const tg_runtime *rt, pid_t pgid)
{
    watch_send(rt, -1, pgid);
}

void tg__watchdog_stop(tg_runtime *rt)
{
    if (rt->watch_fd >= 0)
        close(rt->watch_fd);
    rt->watch_fd = -1;
    if (rt->watch_pid > 0)
        while (waitpid(rt->watch_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    rt->watch_pid = -1;
}
