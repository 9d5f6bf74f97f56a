/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - nothing a tool started outlives its runtime, even when the
 * runtime is killed with SIGKILL. Each tool leads its own process group and
 * dies with toolgate (PR_SET_PDEATHSIG), but what it started does not: a
 * daemonized grandchild keeps the group alive after the leader is gone.
 *
 * So each runtime forks one small watchdog at start. The runtime keeps the
 * tool groups it has running in a table of shared memory (an atomic
 * compare-and-swap per start and per end, no system call, so spawning is
 * not slowed), and holds one end of a socket pair whose other end the
 * watchdog waits on. When the runtime ends, however it ends, the kernel
 * closes its end, the watchdog reads end-of-file, kills every group still
 * in the table and exits. A group id cannot be reused while any process is
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
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "watchdog.h"

#define WATCH_SLOTS 4096 /* groups running at once; limits.parallel <= 1024 */

static void __attribute__((noreturn))
watchdog_main(int fd, const int32_t *slots)
{
    /* Only the socket stays open: no journal, no terminal, no tool pipes. */
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
    char byte;
    while (read(fd, &byte, 1) < 0 && errno == EINTR)
        ; /* nothing is ever sent: this returns at end of file */
    for (size_t i = 0; i < WATCH_SLOTS; i++) {
        int32_t pgid = __atomic_load_n(&slots[i], __ATOMIC_SEQ_CST);
        if (pgid > 1)
            (void)kill(-pgid, SIGKILL);
    }
    _exit(0);
}

int tg__watchdog_start(tg__watchdog *w, tg_error *err)
{
    w->fd = -1;
    w->pid = -1;
    w->slots = mmap(NULL, WATCH_SLOTS * sizeof(int32_t), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w->slots == MAP_FAILED) {
        w->slots = NULL;
        return tg__error_set(err, TG_ENOMEM, "cannot start the watchdog: %s",
                             strerror(errno));
    }
    int p[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) {
        int e = errno;
        tg__watchdog_stop(w);
        return tg__error_set(err, TG_EIO, "cannot start the watchdog: %s",
                             strerror(e));
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        watchdog_main(p[0], w->slots);
    }
    int e = errno;
    close(p[0]);
    w->fd = p[1];
    if (pid < 0) {
        tg__watchdog_stop(w);
        return tg__error_set(err, TG_ESPAWN, "cannot start the watchdog: %s",
                             strerror(e));
    }
    w->pid = pid;
    return 0;
}

void tg__watchdog_add(const tg__watchdog *w, pid_t pgid)
{
    if (w->slots == NULL || pgid <= 1)
        return;
    for (size_t i = 0; i < WATCH_SLOTS; i++) {
        int32_t free_slot = 0;
        if (__atomic_compare_exchange_n(&w->slots[i], &free_slot, (int32_t)pgid,
                                        false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return;
    }
}

void tg__watchdog_remove(const tg__watchdog *w, pid_t pgid)
{
    if (w->slots == NULL || pgid <= 1)
        return;
    for (size_t i = 0; i < WATCH_SLOTS; i++) {
        int32_t held = (int32_t)pgid;
        if (__atomic_compare_exchange_n(&w->slots[i], &held, 0, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return;
    }
}

void tg__watchdog_stop(tg__watchdog *w)
{
    /* Every group of a runtime that is freed has ended and left the table;
     * closing the socket lets the watchdog exit. */
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->pid > 0)
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    w->pid = -1;
    if (w->slots != NULL)
        munmap(w->slots, WATCH_SLOTS * sizeof(int32_t));
    w->slots = NULL;
}
