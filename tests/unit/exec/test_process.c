/* SPDX-License-Identifier: MIT */
/*
 * test_process.c - the spawn layer under the runtime (process.h) with real
 * processes: own process group, clean signal state, no leaked descriptors,
 * exec and chdir failures reported, PATH lookup in the child's PATH, and the
 * environment merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process.h"

/* Runs argv with stdout captured into out[cap]; returns the wait status. */
static int run_capture(char *const *argv, char *const *envp, const char *cwd,
                       char *out, size_t cap)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    assert_true(devnull >= 0);
    char path[PATH_MAX];
    assert_int_equal(tg__proc_resolve(argv[0], tg__proc_getenv(envp, "PATH"),
                                      cwd, path, sizeof path),
                     0);
    tg__spawn sp = {path, argv, envp, cwd, devnull, p[1], devnull};
    pid_t pid = 0;
    int stage = -1, errnum = -1;
    assert_int_equal(tg__proc_spawn(&sp, &pid, &stage, &errnum), 0);
    assert_int_equal(stage, TG__SPAWN_STAGE_NONE);
    close(p[1]);
    close(devnull);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap) {
        n = read(p[0], out + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    out[len] = '\0';
    close(p[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static char *base_env[] = {"PATH=/usr/bin:/bin", "HOME=/nowhere", NULL};

static void test_own_group_and_clean_signals(void **state)
{
    (void)state;
    /* Whatever the parent ignores or blocks, the tool starts clean. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    struct sigaction ign = {0}, prev;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGUSR1, &ign, &prev);
    /* glibc's reserved signals 32 and 33 ignored, as a parent can inherit
     * them (seen in CI); glibc's sigaction cannot set them, hence raw. */
    struct {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        unsigned long mask;
    } kign = {SIG_IGN, 0, NULL, 0}, kprev[2];
    for (int i = 0; i < 2; i++)
        syscall(SYS_rt_sigaction, 32 + i, &kign, &kprev[i], sizeof kign.mask);

    char out[8192];
    char *cat[] = {"cat", "/proc/self/status", NULL};
    int st = run_capture(cat, base_env, NULL, out, sizeof out);
    sigaction(SIGUSR1, &prev, NULL);
    for (int i = 0; i < 2; i++)
        syscall(SYS_rt_sigaction, 32 + i, &kprev[i], NULL, sizeof kign.mask);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (strstr(out, "SigBlk:\t0000000000000000") == NULL ||
        strstr(out, "SigIgn:\t0000000000000000") == NULL)
        fail_msg("the tool did not start with clean signals:\n%s", out);
    /* cat is the leader of its own group: NSpgid equals its pid. */
    const char *pidl = strstr(out, "\nPid:\t");
    const char *pgl = strstr(out, "\nNSpgid:\t");
    assert_non_null(pidl);
    assert_non_null(pgl);
    assert_int_equal(strtol(pidl + 6, NULL, 10), strtol(pgl + 9, NULL, 10));
}

static void test_no_leaked_descriptors(void **state)
{
    (void)state;
    /* A descriptor the host opened without O_CLOEXEC. */
    int leak = open("/dev/null", O_RDONLY);
    assert_true(leak > 2);
    char out[4096];
    char *argv[] = {"ls", "/proc/self/fd", NULL};
    int st = run_capture(argv, base_env, NULL, out, sizeof out);
    close(leak);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* 0, 1, 2 and ls's own directory handle. */
    assert_string_equal(out, "0\n1\n2\n3\n");
}

static void test_env_and_cwd(void **state)
{
    (void)state;
    char out[4096];
    char *envp[] = {"PATH=/usr/bin:/bin", "TG_A=1", NULL};
    char *argv[] = {"sh", "-c", "echo $TG_A $HOME; pwd", NULL};
    int st = run_capture(argv, envp, "/tmp", out, sizeof out);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_string_equal(out, "1\n/tmp\n");
}

static void test_exec_and_chdir_failures(void **state)
{
    (void)state;
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    char *argv[] = {"/nonexistent/prog", NULL};
    tg__spawn sp = {argv[0], argv, base_env, NULL, devnull, devnull, devnull};
    pid_t pid = 0;
    int stage = 0, errnum = 0;
    assert_int_equal(tg__proc_spawn(&sp, &pid, &stage, &errnum), -1);
    assert_int_equal(stage, TG__SPAWN_STAGE_EXEC);
    assert_int_equal(errnum, ENOENT);

    char *argv2[] = {"/bin/true", NULL};
    tg__spawn sp2 = {argv2[0], argv2,   base_env, "/no/such/dir",
                     devnull,  devnull, devnull};
    assert_int_equal(tg__proc_spawn(&sp2, &pid, &stage, &errnum), -1);
    assert_int_equal(stage, TG__SPAWN_STAGE_CHDIR);
    assert_int_equal(errnum, ENOENT);
    /* Failed children are reaped: nothing left to wait for. */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    close(devnull);
}

static void test_stdio_on_low_descriptors(void **state)
{
    (void)state;
    /* With the host's 0 closed, pipe2 hands out fd 0; the child must still
     * get each end where it belongs. */
    int saved = dup(0);
    close(0);
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    assert_int_equal(p[0], 0);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    char *argv[] = {"/bin/echo", "low", NULL};
    tg__spawn sp = {argv[0], argv, base_env, NULL, devnull, p[1], devnull};
    pid_t pid;
    int stage, errnum;
    assert_int_equal(tg__proc_spawn(&sp, &pid, &stage, &errnum), 0);
    close(p[1]);
    char buf[16] = {0};
    assert_int_equal(read(p[0], buf, sizeof buf - 1), 4);
    assert_string_equal(buf, "low\n");
    waitpid(pid, NULL, 0);
    close(p[0]);
    close(devnull);
    dup2(saved, 0);
    close(saved);
}

static void test_resolve(void **state)
{
    (void)state;
    char out[PATH_MAX];
    assert_int_equal(
        tg__proc_resolve("sh", "/nonexistent:/bin", NULL, out, sizeof out), 0);
    assert_string_equal(out, "/bin/sh");
    assert_int_equal(tg__proc_resolve("no-such-prog-tg", "/bin:/usr/bin", NULL,
                                      out, sizeof out),
                     ENOENT);
    /* Not executable: EACCES, like execvp. */
    assert_int_equal(tg__proc_resolve("passwd", "/etc", NULL, out, sizeof out),
                     EACCES);
    /* Names with a slash are taken as they are (relative to the cwd). */
    assert_int_equal(tg__proc_resolve("./x", "/bin", NULL, out, sizeof out), 0);
    assert_string_equal(out, "./x");
    /* Relative PATH entries are under the child's cwd. */
    assert_int_equal(tg__proc_resolve("sh", "bin", "/", out, sizeof out), 0);
    assert_string_equal(out, "//bin/sh");
    assert_int_equal(tg__proc_resolve("", "/bin", NULL, out, sizeof out),
                     ENOENT);
}

static void test_env_merge(void **state)
{
    (void)state;
    char *base[] = {"PATH=/bin", "HOME=/h", NULL};
    char **out;
    void *owned;
    assert_int_equal(tg__proc_env(base, NULL, NULL, &out, &owned), 0);
    assert_ptr_equal(out, base);
    assert_null(owned);
    json_t *tool =
        json_pack("{s:s, s:s, s:i}", "HOME", "/tool", "A", "1", "NUM", 3);
    json_t *ctx = json_pack("{s:s, s:s, s:s}", "A", "2", "B", "3", "X=Y", "z");
    assert_int_equal(tg__proc_env(base, tool, ctx, &out, &owned), 0);
    assert_string_equal(tg__proc_getenv(out, "PATH"), "/bin");
    assert_string_equal(tg__proc_getenv(out, "HOME"), "/tool");
    assert_string_equal(tg__proc_getenv(out, "A"), "2");
    assert_string_equal(tg__proc_getenv(out, "B"), "3");
    assert_null(tg__proc_getenv(out, "NUM"));
    size_t n = 0;
    while (out[n])
        n++;
    assert_int_equal(n, 4);
    free(owned);
    json_decref(tool);
    json_decref(ctx);
}

static void test_signal_names(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(tg__signal_name(9, b), "SIGKILL");
    assert_string_equal(tg__signal_name(15, b), "SIGTERM");
    assert_string_equal(tg__signal_name(SIGRTMIN + 2, b), "SIGRTMIN+2");
    assert_string_equal(tg__signal_name(200, b), "signal 200");
}

/* The spawn's own pidfd names the child: it can signal it, and it turns
 * readable when the child exits; a failed spawn hands back none. */
static void test_spawn_pidfd(void **state)
{
    (void)state;
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    assert_true(devnull >= 0);
    char *argv[] = {"/bin/sleep", "30", NULL};
    char *envp[] = {NULL};
    tg__spawn sp = {"/bin/sleep", argv, envp, NULL, devnull, devnull, devnull};
    pid_t pid = 0;
    int pidfd = -2, stage = -1, errnum = -1;
    assert_int_equal(
        tg__proc_spawn_pidfd(&sp, NULL, &pid, &pidfd, &stage, &errnum), 0);
    if (pidfd < 0) {
        /* a kernel without CLONE_PIDFD: vfork made the child */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(devnull);
        skip();
    }
    assert_true(fcntl(pidfd, F_GETFD) & FD_CLOEXEC);
    struct pollfd pf = {pidfd, POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 0), 0); /* still running */
    assert_int_equal(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0),
                     0);
    assert_int_equal(poll(&pf, 1, 10000), 1);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(pidfd);

    char *bad[] = {"/nonexistent/x", NULL};
    tg__spawn sb = {bad[0], bad, envp, NULL, devnull, devnull, devnull};
    pidfd = -2;
    assert_int_equal(
        tg__proc_spawn_pidfd(&sb, NULL, &pid, &pidfd, &stage, &errnum), -1);
    assert_int_equal(stage, TG__SPAWN_STAGE_EXEC);
    assert_int_equal(errnum, ENOENT);
    assert_int_equal(pidfd, -1);
    close(devnull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_group_and_clean_signals),
        cmocka_unit_test(test_no_leaked_descriptors),
        cmocka_unit_test(test_env_and_cwd),
        cmocka_unit_test(test_exec_and_chdir_failures),
        cmocka_unit_test(test_stdio_on_low_descriptors),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_env_merge),
        cmocka_unit_test(test_signal_names),
        cmocka_unit_test(test_spawn_pidfd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
