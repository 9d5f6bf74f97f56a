/* SPDX-License-Identifier: MIT */
/*
 * sandboxd_proto.h - the wire format between the runtime (src/exec/warm.c)
 * and toolgate-sandboxd (sandboxd.c), the helper that keeps a warm sandbox:
 * libc types only, both ends are the same build.
 *
 * The runtime holds one SOCK_SEQPACKET socket per helper. A request is one
 * message: a tg_sbd_req, then (inline, or in a memfd passed as the last
 * descriptor when it is too big for one message) the strings path, cwd,
 * argv[0..nargv) and envp[0..nenv), each NUL-terminated. It carries as
 * SCM_RIGHTS descriptors: the call's control socket (the helper's end of a
 * SOCK_SEQPACKET pair), the call's stdin, stdout and stderr, and maybe the
 * memfd.
 *
 * Everything about the call then goes over its control socket, between the
 * runtime and the call's own reaper process: tg_sbd_msg messages. From the
 * reaper, one message: FAILED (stage, errno, as tg__proc_spawn reports
 * them) when the command could not start, else EXITED (wait status) once
 * the command and everything it started are gone and its TMPDIR is removed.
 * Nothing is said when the command starts: no wake-up of the runtime is
 * spent on it. From the
 * runtime: SIGNAL (TERM goes to the command's process group; KILL ends the
 * call's whole tree). The runtime closing its end kills the tree too; the
 * runtime reading EOF before EXITED means the sandbox died under the call.
 */
#ifndef TG_SANDBOXD_PROTO_H
#define TG_SANDBOXD_PROTO_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TG_SBD_MAGIC 0x74677364u /* "tgsd" */
#define TG_SBD_MAX_LIMITS 8
#define TG_SBD_INLINE_MAX 32768 /* bigger request text goes in a memfd */
#define TG_SBD_NFDS 4           /* control, stdin, stdout, stderr */

typedef struct tg_sbd_req {
    uint32_t magic;
    uint32_t len;      /* bytes of strings that follow, or are in the memfd */
    uint32_t in_memfd; /* 1: the strings are in the last descriptor */
    uint32_t nargv, nenv;
    uint32_t nlimits;
    struct {
        int32_t resource;
        uint32_t pad;
        uint64_t value;
    } limits[TG_SBD_MAX_LIMITS];
} tg_sbd_req;

enum { TG_SBD_FAILED = 2, TG_SBD_EXITED = 3, TG_SBD_SIGNAL = 4 };

typedef struct tg_sbd_msg {
    int32_t type;
    int32_t a; /* FAILED: stage; EXITED: status; SIGNAL: signo */
    int32_t b; /* FAILED: errno */
    int32_t pad;
} tg_sbd_msg;

/* Landlock scoping (Linux 6.12+, Landlock ABI 6): the helper makes each
 * call a Landlock domain of its own, so a call's processes cannot ptrace
 * (nor read or write /proc/PID/mem or environ of), signal, or reach the
 * abstract UNIX sockets of processes outside it: another call running in
 * the same warm sandbox, or its reaper. Within a call all stays allowed.
 * The names are Linux's own (linux/landlock.h), which Debian 12's kernel
 * headers predate. */
#define TG_SBD_LANDLOCK_SCOPED_ABI 6
#define TG_SBD_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define TG_SBD_SCOPE_SIGNAL (1ULL << 1)

typedef struct tg_sbd_landlock_attr { /* struct landlock_ruleset_attr */
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
} tg_sbd_landlock_attr;

/* The Landlock ABI version this kernel offers, 0 when none (not built in,
 * not enabled, or a libc without the system call's number). Both ends
 * ask: the helper to scope its calls, the runtime to report it. */
static inline int tg_sbd_landlock_abi(void)
{
#ifdef SYS_landlock_create_ruleset
    long v = syscall(SYS_landlock_create_ruleset, (void *)0, 0, 1U << 0);
    return v > 0 ? (int)v : 0;
#else
    return 0;
#endif
}

#endif
