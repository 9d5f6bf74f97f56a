/* SPDX-License-Identifier: MIT */
/*
 * workspace.h - internal to builtin/: confining the built-in file tools to
 * the workspace, and the cores of those tools as plain functions.
 *
 * A user path is first made relative to the workspace root (absolute paths
 * only when inside it, compared component by component), then opened
 * beneath a descriptor of the root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS), or by an equivalent component walk where openat2
 * is missing. "..", absolute symlinks and symlinks that lead outside are
 * refused by the kernel's resolution, not by string checks.
 *
 * The cores (tg__read_file_run, ...) take the arguments as JSON and write
 * the tool's output to a buffer; builtin.c wraps them as tg_handler_fn.
 * They use no handler API, so they are unit-tested on their own.
 */
#ifndef TG_REGISTRY_BUILTIN_WORKSPACE_H
#define TG_REGISTRY_BUILTIN_WORKSPACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "buf.h"
#include "toolgate.h"

/* Tool error codes of the built-in file tools (the result's error.code). */
#define TG__FS_OUTSIDE "PATH_OUTSIDE_WORKSPACE"
#define TG__FS_BADARGS "INVALID_ARGUMENTS"
#define TG__FS_NOTFOUND "NOT_FOUND"
#define TG__FS_ISDIR "IS_A_DIRECTORY"
#define TG__FS_NOTDIR "NOT_A_DIRECTORY"
#define TG__FS_NOTFILE "NOT_A_FILE"
#define TG__FS_BINARY "BINARY_FILE"
#define TG__FS_ACCESS "PERMISSION_DENIED"
#define TG__FS_LOOP "SYMLINK_LOOP"
#define TG__FS_IO "IO_ERROR"
#define TG__FS_PATTERN "INVALID_PATTERN"
#define TG__FS_MATCH_LIMIT "MATCH_LIMIT"
#define TG__FS_TOO_MANY "TOO_MANY_ENTRIES"
#define TG__FS_OFFSET "OFFSET_OUT_OF_RANGE"
#define TG__FS_CANCELED "CANCELED"
/* The path resolves into toolgate's own files (the call is denied). */
#define TG__FS_STATE "TOOLGATE_STATE"

/* Most of toolgate's own paths a run compares against (tg__fsrun.state). */
#define TG__FS_MAX_STATE 16

/* One run of a built-in file tool. */
typedef struct tg__fsrun {
    const char *workspace; /* absolute, resolved (realpath) root */
    const char *cwd;       /* the call's directory; NULL: the workspace */
    /* polled between files and chunks; NULL: never canceled */
    int (*canceled)(const void *ud);
    const void *cancel_ud;
    const char *errcode; /* out: one of TG__FS_* when a run fails */
    /* toolgate's own directories and files in the workspace (absolute,
     * NULL-ended; NULL: none, tg_handler_state_paths): a path resolving
     * into one is refused (TG__FS_STATE). Their device and inode numbers
     * are read on first use into ids. */
    const char *const *state;
    struct tg__fsid {
        dev_t dev;
        ino_t ino;
    } ids[TG__FS_MAX_STATE];
    size_t nids;
    bool ids_read; /* ids holds them */
} tg__fsrun;

/* The path `path` (len bytes, from the arguments) relative to the workspace
 * root, appended to rel: an absolute path must lie inside the workspace
 * (component-wise: /srv/ws2 is not inside /srv/ws) and loses that prefix; a
 * relative one is taken from the call's cwd when that lies in the
 * workspace. A NUL byte or a path elsewhere is refused (TG__FS_OUTSIDE);
 * ".." is left for the resolution beneath the root to judge. */
int tg__ws_relpath(tg__fsrun *run, const char *path, size_t len, tg__buf *rel,
                   tg_error *err);

/* Opens `rel` (relative, from tg__ws_relpath) beneath the directory root_fd
 * with open(2) flags (O_CLOEXEC is added). Returns a descriptor, or -errno:
 * -EXDEV when the resolution would leave the root, -ELOOP for too many
 * links (or a final symlink with O_NOFOLLOW), other errno values as open(2).
 * Uses openat2 and falls back to tg__ws_open_walk when the kernel (or a
 * seccomp filter) refuses the system call. */
int tg__ws_openat(int root_fd, const char *rel, int flags);
/* The fallback of tg__ws_openat: a walk one component at a time with
 * O_PATH | O_NOFOLLOW, following relative symlinks itself, refusing
 * absolute ones and ".." above the root, like RESOLVE_BENEATH. */
int tg__ws_open_walk(int root_fd, const char *rel, int flags);

/* toolgate's own files (run->state). tg__ws_is_state: st (of anything
 * opened or listed in the workspace) is one of them. tg__ws_dir_in_state:
 * the directory dirfd is one of them or lies beneath one, walking ".." up to
 * root_fd, the workspace: 1 yes, 0 no, -errno when the walk failed. Neither
 * costs anything when run->state is empty. */
bool tg__ws_is_state(tg__fsrun *run, const struct stat *st);
int tg__ws_dir_in_state(tg__fsrun *run, int root_fd, int dirfd);
/* Refuses the user path p, which resolved (or, with e -errno, failed to
 * be checked) into toolgate's own files: run->errcode TG__FS_STATE and a
 * message naming the path. Returns the TG_E* code. */
int tg__ws_state_error(tg__fsrun *run, int e, const char *p, tg_error *err);

/* Records why opening the user path p failed with errno e (EXDEV: outside
 * the workspace, ELOOP, ENOENT, ...): run->errcode and a message naming the
 * path. Returns the TG_E* code. */
int tg__ws_open_error(tg__fsrun *run, int e, const char *p, tg_error *err);

/* Resolves the user path `path` and opens it with `flags`: descriptor in
 * *fd_out. A file with more than one name, and anything in toolgate's own
 * files (run->state), is refused. On failure sets run->errcode and a
 * message naming the path. */
int tg__ws_open(tg__fsrun *run, const json_t *path, int flags, int *fd_out,
                tg_error *err);

/* Appends s[0..n) with every invalid UTF-8 sequence replaced by U+FFFD, for
 * names that must go into JSON. */
int tg__utf8_append(tg__buf *b, const char *s, size_t n);

/* Argument helpers of the cores. tg__fs_args checks that args is an object
 * whose members are all in `allowed` (NULL-ended); tg__fs_int reads an
 * optional integer member in [lo, hi] (def when absent). Both fail with
 * TG_EINVAL and TG__FS_BADARGS naming the tool and the member. */
int tg__fs_args(tg__fsrun *run, const char *tool, const json_t *args,
                const char *const *allowed, tg_error *err);
int tg__fs_int(tg__fsrun *run, const char *tool, const json_t *args,
               const char *key, int64_t lo, int64_t hi, int64_t def,
               int64_t *out, tg_error *err);
/* Records a failure: run->errcode = code, message formatted; returns rc. */
int tg__fs_fail(tg__fsrun *run, const char *code, int rc, tg_error *err,
                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* 1 when the run was canceled (sets the error too). */
int tg__fs_canceled(tg__fsrun *run, tg_error *err);

/* The tools. Each validates `args` (an object, borrowed), writes its output
 * to `out` and returns 0, or fails with a negative TG_E* code, a message in
 * err and run->errcode set.
 *
 * read_file {path, offset_line?, max_lines?, max_bytes? = 256 KiB}: the
 * text of a file (files holding a NUL byte are refused: BINARY_FILE). */
int tg__read_file_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                      tg_error *err);
/* list_dir {path? = "."}: a JSON array of {"name","type","size"} sorted by
 * name; type is "file", "dir", "symlink" or "other" (links not followed). */
int tg__list_dir_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                     tg_error *err);
/* grep {pattern, path? = ".", glob?, max_matches? = 200, ignore_case?}:
 * lines "path:LINE:text" for each matching line (PCRE2, UTF), recursing
 * below path without following symlinks, skipping binary files and the
 * .git and .toolgate directories. */
int tg__grep_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                 tg_error *err);

/* write_file {path, content}: writes content to the file atomically (a
 * temporary file beside it, fsync, rename over it, fsync of the
 * directory); the parent directory must exist beneath the workspace. A
 * symlink or hard link at path is replaced, never written through. Output:
 * {"path","bytes"}. */
int tg__write_file_run(tg__fsrun *run, const json_t *args, tg__buf *out,
                       tg_error *err);

/* The tools' input schemas (JSON text). */
extern const char tg__write_file_schema[];
extern const char tg__read_file_schema[];
extern const char tg__list_dir_schema[];
extern const char tg__grep_schema[];

#endif
