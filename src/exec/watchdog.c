/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - nothing a tool started outlives its runtime, even when the
 * runtime is killed with SIGKILL. Each tool leads its own process group and
 * dies with toolgate (PR_SET_PDEATHSIG), but what it started does not: a
 * daemonized grandchild keeps the group alive after the leader is gone.
 *
 * So each runtime forks one small watchdog, just before it spawns its first
 * tool group (a runtime that only runs in-process tools, such as a `toolgate
 * serve` of built-ins, never forks one: no process, no copied pages, about
 * 2.5 MiB less resident in all). The runtime keeps the
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
#include <pthread.h>
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

struct tg__watchdog_proc {
    pthread_mutex_t lock; /* held while forking */
    int fd;               /* the watchdog's socket, -1: none */
    pid_t pid;            /* the watchdog, -1: none */
    bool tried;           /* forked once (or failed to): never again */
};

int tg__watchdog_start(tg__watchdog *w, tg_error *err)
{
    w->proc = calloc(1, sizeof *w->proc);
    if (w->proc == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    pthread_mutex_init(&w->proc->lock, NULL);
    w->proc->fd = -1;
    w->proc->pid = -1;
    w->slots = mmap(NULL, WATCH_SLOTS * sizeof(int32_t), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (w->slots == MAP_FAILED) {
        w->slots = NULL;
        int e = errno;
        tg__watchdog_stop(w);
        return tg__error_set(err, TG_ENOMEM, "cannot start the watchdog: %s",
                             strerror(e));
    }
    return 0;
}

/* Forks the watchdog, once (any thread, under the lock). Returns whether
 * it runs. The child only makes async-signal-safe calls: other threads may
 * hold locks. Its copies of the runtime's other descriptors (a spawn's
 * pipes) are closed at once in watchdog_main. */
static bool watchdog_fork(tg__watchdog_proc *pr, const int32_t *slots)
{
    pthread_mutex_lock(&pr->lock);
    if (!pr->tried) {
        pr->tried = true;
        int p[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0) {
            pid_t pid = fork();
            if (pid == 0)
                watchdog_main(p[0], slots);
            close(p[0]);
            if (pid > 0) {
                pr->fd = p[1];
                __atomic_store_n(&pr->pid, pid, __ATOMIC_RELEASE);
            } else {
                close(p[1]);
            }
        }
    }
    bool up = pr->pid > 0;
    pthread_mutex_unlock(&pr->lock);
    return up;
}

void tg__watchdog_ready(const tg__watchdog *w)
{
    if (w->slots != NULL &&
        __atomic_load_n(&w->proc->pid, __ATOMIC_ACQUIRE) <= 0)
        (void)watchdog_fork(w->proc, w->slots);
}

void tg__watchdog_add(const tg__watchdog *w, pid_t pgid)
{
    if (w->slots == NULL || pgid <= 1)
        return;
    if (__atomic_load_n(&w->proc->pid, __ATOMIC_ACQUIRE) <= 0 &&
        !watchdog_fork(w->proc, w->slots))
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
    tg__watchdog_proc *pr = w->proc;
    if (pr != NULL) {
        if (pr->fd >= 0)
            close(pr->fd);
        if (pr->pid > 0)
            while (waitpid(pr->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        pthread_mutex_destroy(&pr->lock);
        free(pr);
    }
    w->proc = NULL;
    if (w->slots != NULL)
        munmap(w->slots, WATCH_SLOTS * sizeof(int32_t));
    w->slots = NULL;
}
