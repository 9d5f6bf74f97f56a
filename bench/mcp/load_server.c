/* SPDX-License-Identifier: MIT */
/*
 * load_server.c - the server process of the MCP load client (mcp_load.c):
 * the CPUs of --pin, starting the server command in a process group of
 * its own (its stdin and stdout the stdio channel, or left to HTTP),
 * noticing that it exited, stopping it and its group, and its peak RSS:
 * VmHWM summed over it and its descendants.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "load.h"
#include "tg_test.h"

/* --pin: the first one or two CPUs this process may use. */
void choose_cpus(struct opts *o)
{
    int found = bench_two_cpus(o->cpu);
    if (found == 0)
        die("sched_getaffinity: %s", strerror(errno));
    if (o->pin == 2 && found < 2)
        die("--pin two: this process may run on one CPU only");
    if (o->pin == 1)
        o->cpu[1] = o->cpu[0];
    if (bench_pin_cpu(o->cpu[0]) != 0)
        die("sched_setaffinity: %s", strerror(errno));
}

void start_server(struct run *r, int *to_server, int *from_server)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2];
    int stdio = r->o.http == NULL;
    if ((stdio && (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))) ||
        pipe2(err, O_CLOEXEC))
        die("pipe: %s", strerror(errno));
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        if (r->o.pin && bench_pin_cpu(r->o.cpu[1]) != 0)
            _exit(126);
        if (stdio) {
            dup2(in[0], 0);
            dup2(out[1], 1);
        } else {
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0)
                dup2(null, 0);
            dup2(2, 1); /* our stdout is for the figures */
        }
        execvp(r->o.cmd[0], r->o.cmd);
        int e = errno;
        ssize_t w = write(err[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid);
    close(err[1]);
    int e;
    ssize_t got;
    while ((got = read(err[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(err[0]);
    if (got == (ssize_t)sizeof e) {
        waitpid(pid, NULL, 0);
        die("cannot run %s: %s", r->o.cmd[0], strerror(e));
    }
    r->server = pid;
    if (stdio) {
        close(in[0]);
        close(out[1]);
        *to_server = in[1];
        *from_server = out[0];
    }
}

/* Dies when the server this program started has exited, or exits within
 * wait_ms (a server that closed its end is given that long to finish). */
void check_server(struct run *r, long wait_ms)
{
    int st;
    double until = bench_now() + (double)wait_ms / 1000;
    pid_t w;
    while (r->server > 0 &&
           (w = waitpid(r->server, &st, WNOHANG)) != r->server) {
        if (w < 0 || bench_now() >= until)
            return;
        tg_test_sleep_ms(5);
    }
    if (r->server <= 0)
        return;
    r->server = 0;
    if (WIFEXITED(st))
        die("the server exited with status %d", WEXITSTATUS(st));
    die("the server was killed by signal %d", WTERMSIG(st));
}

/* Waits up to ms for pid; 1 when it is gone. */
static int reap_within(pid_t pid, long ms)
{
    double until = bench_now() + (double)ms / 1000;
    do {
        pid_t w = waitpid(pid, NULL, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD))
            return 1;
        tg_test_sleep_ms(5);
    } while (bench_now() < until);
    return 0;
}

/* Ends the server started here: EOF on its stdin (stdio's clean shutdown)
 * or SIGTERM, then SIGKILL to its process group; quick skips the waiting
 * for a clean exit. */
void stop_server(struct run *r, int quick)
{
    if (r->server <= 0)
        return;
    pid_t pid = r->server;
    r->server = 0;
    if (r->chans && r->o.http == NULL && r->chans[0].wfd >= 0) {
        close(r->chans[0].wfd);
        r->chans[0].wfd = -1;
        if (!quick && reap_within(pid, 2000))
            goto group;
    }
    kill(-pid, SIGTERM);
    if (quick || !reap_within(pid, 2000))
        kill(-pid, SIGKILL);
    reap_within(pid, 5000);
group:
    kill(-pid, SIGKILL); /* whatever it left in its group */
}

/* The sum of VmHWM (KiB) over pid and its descendants, or -1. */
long tree_hwm_kib(long pid)
{
    long total = tg_test_pid_status_kib(pid, "VmHWM");
    if (total < 0)
        return -1;
    size_t n;
    char **names = tg_test_list_dir("/proc", NULL, &n);
    if (names == NULL)
        return total;
    long *pids = calloc(n + 1, sizeof *pids),
         *ppids = calloc(n + 1, sizeof *ppids);
    char *in = calloc(n + 1, 1);
    size_t m = 0;
    for (size_t i = 0; pids && ppids && in && i < n; i++) {
        char *e;
        long p = strtol(names[i], &e, 10);
        if (*e != '\0' || p <= 0)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", p);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        const char *rp =
            fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        fclose(f);
        long pp;
        char state;
        if (rp && sscanf(rp + 1, " %c %ld", &state, &pp) == 2) {
            pids[m] = p;
            ppids[m++] = pp;
        }
    }
    /* descendants: repeat until no new process joins the tree */
    for (int changed = 1; changed && in;) {
        changed = 0;
        for (size_t i = 0; i < m; i++) {
            if (in[i])
                continue;
            int parent_in = ppids[i] == pid;
            for (size_t j = 0; !parent_in && j < m; j++)
                parent_in = in[j] && pids[j] == ppids[i];
            if (parent_in) {
                in[i] = 1;
                changed = 1;
                long k = tg_test_pid_status_kib(pids[i], "VmHWM");
                if (k > 0)
                    total += k;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(pids);
    free(ppids);
    free(in);
    return total;
}
