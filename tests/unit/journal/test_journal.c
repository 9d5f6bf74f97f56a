/* SPDX-License-Identifier: MIT */
/*
 * test_journal.c - the SQLite journal on real files: write-ahead rows and
 * results (decisions included), history and show, recovery of calls whose
 * process died, the ranges of running calls, two processes writing one
 * file, migrations from every older schema, unwritable paths, a full disk
 * (a small tmpfs, where mounting is allowed), I/O errors (a VFS that fails
 * writes), and a failing-allocation loop over open, begin (with
 * re-delivery lookups), finish, history, show, stats and the hash chain's
 * verification.
 *
 * An argument selects tests by name (main, below).
 *
 * The allocation hooks and the faulty VFS below are the only global state:
 * SQLite and jansson take their allocators and VFSes process-wide.
 */
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <jansson.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "jtest.h"
#include "journal.h"
#include "record.h"
#include "tg_test.h"
#include "timeutil.h"

/* ------------------------------------------------------------ allocators */

static long alloc_count; /* allocations since the counter was reset */
static long fail_at;     /* fail the allocation with this number; 0 never */
static int injected;     /* a failure was injected */

static int should_fail(void)
{
    alloc_count++;
    if (fail_at != 0 && alloc_count == fail_at) {
        injected = 1;
        return 1;
    }
    return 0;
}

/* SQLite asks for the size of a block, so each carries it in a header. */
#define HDR 16

static void *sq_malloc(int n)
{
    if (should_fail())
        return NULL;
    char *p = malloc((size_t)n + HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &n, sizeof n);
    return p + HDR;
}

static void sq_free(void *p)
{
    if (p != NULL)
        free((char *)p - HDR);
}

static void *sq_realloc(void *p, int n)
{
    if (should_fail())
        return NULL;
    char *q = realloc((char *)p - HDR, (size_t)n + HDR);
    if (q == NULL)
        return NULL;
    memcpy(q, &n, sizeof n);
    return q + HDR;
}

static int sq_size(void *p)
{
    int n;
    memcpy(&n, (char *)p - HDR, sizeof n);
    return n;
}

static int sq_roundup(int n)
{
    return (n + 7) & ~7;
}

static int sq_init(void *ud)
{
    return SQLITE_OK;
}

static void sq_shutdown(void *ud)
{
}

static void *js_malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n);
}

static void js_free(void *p)
{
    free(p);
}

/* ------------------------------------------------------------ faulty VFS */

/* A VFS over the default one whose writes to a journal's database and WAL
 * fail with SQLITE_IOERR_WRITE once `io_writes_left` reaches 0 (-1: never):
 * an I/O error at a chosen point, which a real file system gives only
 * with device-mapper or kernel fault injection. */
static sqlite3_vfs *io_real;
static long io_writes_left = -1;

struct faulty_file {
    sqlite3_file base;
    sqlite3_file *real; /* follows this struct in the same block */
    int watched;        /* a main database or WAL file */
};

#define REAL(f) (((struct faulty_file *)(f))->real)

static int ff_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}
static int ff_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int ff_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if (((struct faulty_file *)f)->watched && io_writes_left >= 0 &&
        io_writes_left-- == 0) {
        io_writes_left = 0; /* and every write after it */
        return SQLITE_IOERR_WRITE;
    }
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 n)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), n);
}
static int ff_sync(sqlite3_file *f, int flags)
{
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int ff_size(sqlite3_file *f, sqlite3_int64 *n)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), n);
}
static int ff_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int ff_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int ff_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int ff_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int ff_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int ff_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int ff_shm_map(sqlite3_file *f, int pg, int sz, int ext,
                      void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, p);
}
static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void ff_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int ff_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
/* No xFetch: every page goes through xRead/xWrite. */
static const sqlite3_io_methods faulty_io = {
    .iVersion = 2,
    .xClose = ff_close,
    .xRead = ff_read,
    .xWrite = ff_write,
    .xTruncate = ff_truncate,
    .xSync = ff_sync,
    .xFileSize = ff_size,
    .xLock = ff_lock,
    .xUnlock = ff_unlock,
    .xCheckReservedLock = ff_reserved,
    .xFileControl = ff_control,
    .xSectorSize = ff_sector,
    .xDeviceCharacteristics = ff_device,
    .xShmMap = ff_shm_map,
    .xShmLock = ff_shm_lock,
    .xShmBarrier = ff_shm_barrier,
    .xShmUnmap = ff_shm_unmap,
};

static int fv_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
                   int flags, int *out)
{
    (void)vfs;
    struct faulty_file *ff = (struct faulty_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    ff->watched = (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL)) != 0;
    int rc = io_real->xOpen(io_real, name, ff->real, flags, out);
    f->pMethods = rc == SQLITE_OK && ff->real->pMethods ? &faulty_io : NULL;
    return rc;
}
static int fv_delete(sqlite3_vfs *v, const char *n, int d)
{
    return io_real->xDelete(io_real, n, d);
}
static int fv_access(sqlite3_vfs *v, const char *n, int fl, int *out)
{
    return io_real->xAccess(io_real, n, fl, out);
}
static int fv_full(sqlite3_vfs *v, const char *n, int sz, char *out)
{
    return io_real->xFullPathname(io_real, n, sz, out);
}
static void *fv_dlopen(sqlite3_vfs *v, const char *n)
{
    return io_real->xDlOpen(io_real, n);
}
static void fv_dlerror(sqlite3_vfs *v, int n, char *out)
{
    io_real->xDlError(io_real, n, out);
}
static void (*fv_dlsym(sqlite3_vfs *v, void *h, const char *s))(void)
{
    return io_real->xDlSym(io_real, h, s);
}
static void fv_dlclose(sqlite3_vfs *v, void *h)
{
    io_real->xDlClose(io_real, h);
}
static int fv_random(sqlite3_vfs *v, int n, char *out)
{
    return io_real->xRandomness(io_real, n, out);
}
static int fv_sleep(sqlite3_vfs *v, int us)
{
    return io_real->xSleep(io_real, us);
}
static int fv_time(sqlite3_vfs *v, double *out)
{
    return io_real->xCurrentTime(io_real, out);
}
static int fv_error(sqlite3_vfs *v, int n, char *out)
{
    return io_real->xGetLastError(io_real, n, out);
}
static int fv_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    return io_real->xCurrentTimeInt64(io_real, out);
}

static sqlite3_vfs faulty_vfs;

/* Makes the faulty VFS the default one (writes fail from now on when
 * io_writes_left is 0), or puts the real one back. */
static void faulty_vfs_use(int on)
{
    io_writes_left = -1;
    if (!on) {
        if (io_real != NULL) {
            sqlite3_vfs_unregister(&faulty_vfs);
            sqlite3_vfs_register(io_real, 1);
        }
        return;
    }
    io_real = sqlite3_vfs_find(NULL);
    assert_non_null(io_real);
    faulty_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct faulty_file) + io_real->szOsFile,
        .mxPathname = io_real->mxPathname,
        .zName = "tg-faulty",
        .xOpen = fv_open,
        .xDelete = fv_delete,
        .xAccess = fv_access,
        .xFullPathname = fv_full,
        .xDlOpen = fv_dlopen,
        .xDlError = fv_dlerror,
        .xDlSym = fv_dlsym,
        .xDlClose = fv_dlclose,
        .xRandomness = fv_random,
        .xSleep = fv_sleep,
        .xCurrentTime = fv_time,
        .xGetLastError = fv_error,
        .xCurrentTimeInt64 = fv_time64,
    };
    assert_int_equal(sqlite3_vfs_register(&faulty_vfs, 1), SQLITE_OK);
}

/* ------------------------------------------------------------ helpers */

struct fixture {
    char dir[64];
    char path[128];
};

static int rm_entry(const char *p, const struct stat *sb, int type,
                    struct FTW *ftw)
{
    return remove(p);
}

/* A fixture whose directory is made under `base`. */
static int setup_in(void **state, const char *base)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "%s/tg-journal-XXXXXX", base);
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/.toolgate/journal.db", f->dir);
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_in(state, "/tmp");
}

/* For the failing-allocation loops, which create a journal file per
 * allocation: in memory (/dev/shm, where an fsync costs nothing) when the
 * machine has it. What they test is allocation failure, not durability, and
 * on a busy disk the fsyncs of thousands of fresh files took minutes. */
static int setup_mem(void **state)
{
    return setup_in(state,
                    access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp");
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    faulty_vfs_use(0); /* after a failed test_io_error */
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static tg_call *mkcall(const char *id, const char *tool, const char *args,
                       const char *caller)
{
    tg_call *c = tg__call_new(id, tool, "openai-chat");
    assert_non_null(c);
    assert_int_equal(tg__call_set_args_text(c, args, strlen(args)), 0);
    assert_int_equal(tg__strset(&c->caller_id, caller), 0);
    return c;
}

static tg_result *ok_result(const tg_call *c, const char *text)
{
    tg_result *r = tg__result_success(c, json_string(text));
    assert_non_null(r);
    return r;
}

static tg__journal *open_ok(const char *path)
{
    return jt_open(path, NULL);
}

static json_t *history(tg__journal *j, const tg_history_query *q)
{
    char *out = NULL;
    tg_error err = {0};
    int rc = tg__journal_history(j, q, &out, &err);
    if (rc != 0)
        fail_msg("history: %s", err.message);
    json_error_t jerr;
    json_t *v = json_loads(out, 0, &jerr); /* new ref */
    assert_non_null(v);
    assert_true(json_is_array(v));
    free(out);
    return v;
}

static json_t *show(tg__journal *j, const char *id)
{
    char *out = NULL;
    tg_error err = {0};
    int rc = tg__journal_show(j, id, &out, &err);
    if (rc != 0)
        fail_msg("show %s: %s", id, err.message);
    json_t *v = json_loads(out, 0, NULL); /* new ref */
    assert_non_null(v);
    free(out);
    return v;
}

static const char *jstr(const json_t *o, const char *path)
{
    /* path: "a.b.c"; the string there */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *v = o; /* borrowed */
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && v;
         k = strtok_r(NULL, ".", &save))
        v = json_object_get(v, k);
    /* A sentinel, not NULL: assert_string_equal cannot take NULL. */
    return json_is_string(v) ? json_string_value(v) : "<not a string>";
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL),
                     SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

static void free_all(tg_call **calls, tg_result **results, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tg__call_free(calls[i]);
        if (results)
            tg__result_free(results[i]);
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* ------------------------------------------------------------ tests */

static void test_round_trip(void **state)
{
    struct fixture *f = *state;
    tg__journal *j = open_ok(f->path);
    tg_error err = {0};
    struct stat sb;
    char dir[160];
    snprintf(dir, sizeof dir, "%s/.toolgate", f->dir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);

    tg_call *calls[3] = {
        mkcall("call_a", "echo", "{\"text\":\"hi\"}", "alice"),
        mkcall("call_b", "grep", "{\"pattern\":\"x\",\"n\":3}", NULL),
        mkcall("call_c", "echo", "{not json", "alice"),
    };
    calls[0]->context = json_pack("{s:s}", "cwd", "/srv");
    calls[0]->skills = json_pack("[s]", "search");
    calls[1]->index = 1;
    calls[2]->index = 2;
    assert_int_equal(tg__journal_begin(j, calls, 3, &err), 0);

    /* Running: the call is there, the result is null. */
    json_t *s = show(j, "call_a"); /* new ref */
    assert_true(json_is_null(json_object_get(s, "result")));
    assert_string_equal(jstr(s, "call.tool"), "echo");
    assert_string_equal(jstr(s, "call.args.text"), "hi");
    assert_string_equal(jstr(s, "call.caller_id"), "alice");
    assert_string_equal(jstr(s, "call.context.cwd"), "/srv");
    assert_string_equal(jstr(s, "call.format"), "openai-chat");
    assert_string_equal(jstr(s, "call.checksum"), tg_call_checksum(calls[0]));
    assert_string_equal(jstr(s, "call.args_raw"), "{\"text\":\"hi\"}");
    assert_true(json_is_null(
        json_object_get(json_object_get(s, "call"), "completed_at")));
    json_decref(s);
    json_t *h = history(j, NULL); /* new ref */
    assert_int_equal(json_array_size(h), 0);
    json_decref(h);

    tg_result *results[3];
    results[0] = ok_result(calls[0], "hi\n");
    results[0]->duration_ms = 12.5;
    results[0]->exit_status = 0;
    results[0]->completed_at = 1700000000000;
    /* What the policy and hooks decided goes in with the result. */
    results[0]->decisions =
        json_pack("{s:{s:s,s:i}}", "policy", "decision", "allow", "rule", 3);
    results[1] = tg__result_error(calls[1], TG_EXECUTION_FINISHED,
                                  "EXIT_STATUS", NULL, "exited with %d", 2);
    results[1]->exit_status = 2;
    results[1]->duration_ms = 33.560282000000001;
    results[1]->completed_at = 1700000001000;
    results[1]->content = json_pack("[{s:s,s:s}]", "type", "text", "text", "x");
    results[2] = tg__result_error(calls[2], TG_EXECUTION_NOT_STARTED,
                                  calls[2]->pre_error_code, NULL, "%s",
                                  calls[2]->pre_error_message);
    results[2]->completed_at = 1700000002000;
    assert_int_equal(tg__journal_finish(j, calls, results, 3, &err), 0);

    h = history(j, NULL);
    assert_int_equal(json_array_size(h), 3);
    /* Newest first. */
    const json_t *r0 = json_array_get(h, 0); /* borrowed */
    assert_string_equal(jstr(r0, "id"), "call_c");
    assert_string_equal(jstr(r0, "outcome"), "error");
    assert_string_equal(jstr(r0, "execution"), "not_started");
    assert_string_equal(jstr(r0, "payload.error.code"), "MALFORMED_ARGUMENTS");
    assert_true(
        json_is_null(json_object_get(json_object_get(r0, "call"), "args")));
    assert_string_equal(jstr(r0, "call.args_raw"), "{not json");
    const json_t *r1 = json_array_get(h, 1); /* borrowed */
    assert_string_equal(jstr(r1, "id"), "call_b");
    assert_int_equal(json_integer_value(json_object_get(r1, "exit_status")), 2);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(r1, "content"), 0), "type")),
        "text");
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(r1, "call"), "index")),
                     1);
    const json_t *r2 = json_array_get(h, 2); /* borrowed */
    assert_string_equal(jstr(r2, "id"), "call_a");
    assert_string_equal(jstr(r2, "outcome"), "success");
    assert_string_equal(jstr(r2, "payload"), "hi\n");
    assert_string_equal(jstr(r2, "completed_at"), "2023-11-14T22:13:20.000Z");
    assert_true(json_real_value(json_object_get(r2, "duration_ms")) == 12.5);
    assert_string_equal(
        json_string_value(json_array_get(
            json_object_get(json_object_get(r2, "call"), "skills"), 0)),
        "search");
    assert_string_equal(jstr(r2, "call.completed_at"),
                        "2023-11-14T22:13:20.000Z");
    assert_string_equal(jstr(r2, "decisions.policy.decision"), "allow");
    json_decref(h);
    /* Times leave the journal in milliseconds to the microsecond, and the
     * row keeps the clock's exact value. */
    char *text = NULL;
    assert_int_equal(tg__journal_history(j, NULL, &text, &err), 0);
    assert_non_null(strstr(text, "\"duration_ms\":33.56,\"exit_status\":2"));
    assert_non_null(strstr(text, "\"duration_ms\":12.5,"));
    assert_non_null(strstr(text, "\"duration_ms\":0.0,"));
    free(text);
    assert_int_equal(tg__journal_show(j, "call_b", &text, &err), 0);
    assert_non_null(strstr(text, "\"duration_ms\":33.56,"));
    free(text);
    assert_int_equal(jt_count(f->path,
                              "SELECT count(*) FROM results"
                              " WHERE duration_ms = 33.560282000000001"),
                     1);

    s = show(j, "call_a");
    assert_string_equal(jstr(s, "result.outcome"), "success");
    assert_string_equal(jstr(s, "call.id"), "call_a");
    assert_string_equal(jstr(s, "result.decisions.policy.decision"), "allow");
    assert_true(
        json_equal(json_object_get(json_object_get(s, "result"), "decisions"),
                   results[0]->decisions));
    json_decref(s);
    s = show(j, "call_b"); /* no decisions: no member */
    assert_null(json_object_get(json_object_get(s, "result"), "decisions"));
    json_decref(s);

    char *out = NULL;
    assert_int_equal(tg__journal_show(j, "nope", &out, &err), TG_ENOTFOUND);
    assert_null(out);
    assert_non_null(strstr(err.message, "no call with id 'nope' in journal"));
    assert_non_null(strstr(err.message, f->path));
    tg__journal_close(j);
    free_all(calls, results, 3);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'done'"),
                     3);
}

/* The same wire id comes back in a later turn: both are kept, show answers
 * with the newest. A call finished without being begun is recorded too. */
static void test_same_id_and_unbegun(void **state)
{
    struct fixture *f = *state;
    tg__journal *j = open_ok(f->path);
    tg_error err = {0};
    tg_call *c1 = mkcall("call_1", "echo", "{\"text\":\"first\"}", NULL);
    tg_result *r1 = ok_result(c1, "first");
    assert_int_equal(tg__journal_begin(j, &c1, 1, &err), 0);
    /* begin twice keeps one row */
    assert_int_equal(tg__journal_begin(j, &c1, 1, &err), 0);
    assert_int_equal(tg__journal_finish(j, &c1, &r1, 1, &err), 0);

    tg_call *c2 = mkcall("call_1", "echo", "{\"text\":\"second\"}", NULL);
    tg_result *r2 = ok_result(c2, "second");
    assert_int_equal(tg__journal_finish(j, &c2, &r2, 1, &err), 0);

    json_t *s = show(j, "call_1"); /* new ref */
    assert_string_equal(jstr(s, "result.payload"), "second");
    assert_string_equal(jstr(s, "call.args.text"), "second");
    json_decref(s);
    json_t *h = history(j, NULL); /* new ref */
    assert_int_equal(json_array_size(h), 2);
    json_decref(h);
    /* Zero-sized batches are no-ops. */
    assert_int_equal(tg__journal_begin(j, NULL, 0, &err), 0);
    assert_int_equal(tg__journal_finish(j, NULL, NULL, 0, &err), 0);
    tg__journal_close(j);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"), 2);
    tg__call_free(c1);
    tg__call_free(c2);
    tg__result_free(r1);
    tg__result_free(r2);
}

static void test_filters(void **state)
{
    struct fixture *f = *state;
    tg__journal *j = open_ok(f->path);
    tg_error err = {0};
    enum { N = 30 };
    tg_call *calls[N];
    tg_result *results[N];
    int64_t base = 1700000000000; /* 2023-11-14T22:13:20Z */
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof id, "c%02d", i);
        calls[i] = mkcall(id, i % 3 == 0 ? "grep" : "echo", "{}",
                          i % 2 ? "bob" : "alice");
        switch (i % 5) {
        case 0:
            results[i] = ok_result(calls[i], "ok");
            break;
        case 1:
            results[i] = tg__result_error(calls[i], TG_EXECUTION_FINISHED,
                                          "TOOL_FAILED", NULL, "no");
            break;
        case 2:
            results[i] = tg__result_timeout(calls[i], 100);
            break;
        case 3:
            results[i] = tg__result_denied(calls[i], "policy");
            break;
        default:
            results[i] = tg__result_canceled(calls[i], TG_EXECUTION_STARTED,
                                             "user", "stop");
        }
        results[i]->completed_at = base + i * 1000;
    }
    assert_int_equal(tg__journal_begin(j, calls, N, &err), 0);
    assert_int_equal(tg__journal_finish(j, calls, results, N, &err), 0);

    json_t *h = history(j, NULL);             /* new ref */
    assert_int_equal(json_array_size(h), 20); /* default limit */
    assert_string_equal(jstr(json_array_get(h, 0), "id"), "c29");
    assert_string_equal(jstr(json_array_get(h, 19), "id"), "c10");
    json_decref(h);

    tg_history_query q = {.tool = "grep", .limit = 100};
    h = history(j, &q);
    assert_int_equal(json_array_size(h), 10);
    for (size_t i = 0; i < json_array_size(h); i++)
        assert_string_equal(jstr(json_array_get(h, i), "tool"), "grep");
    json_decref(h);

    q = (tg_history_query){.outcome = "timeout", .limit = 100};
    h = history(j, &q);
    assert_int_equal(json_array_size(h), 6);
    assert_string_equal(jstr(json_array_get(h, 0), "outcome"), "timeout");
    json_decref(h);

    q = (tg_history_query){.caller = "bob", .outcome = "success"};
    h = history(j, &q);
    /* i odd and i % 5 == 0: 5, 15, 25 */
    assert_int_equal(json_array_size(h), 3);
    assert_string_equal(jstr(json_array_get(h, 0), "id"), "c25");
    assert_string_equal(jstr(json_array_get(h, 0), "call.caller_id"), "bob");
    json_decref(h);

    /* since: RFC 3339, Unix seconds, Unix milliseconds, all inclusive */
    const char *sinces[] = {"2023-11-14T22:13:45Z", "1700000025",
                            "1700000025000", "2023-11-14T23:13:45+01:00"};
    for (size_t k = 0; k < sizeof sinces / sizeof sinces[0]; k++) {
        q = (tg_history_query){.since = sinces[k], .limit = 100};
        h = history(j, &q);
        assert_int_equal(json_array_size(h), 5);
        json_decref(h);
    }
    q = (tg_history_query){.tool = "echo", .since = "1700000020", .limit = 2};
    h = history(j, &q);
    assert_int_equal(json_array_size(h), 2);
    assert_string_equal(jstr(json_array_get(h, 0), "id"), "c29");
    assert_string_equal(jstr(json_array_get(h, 1), "id"), "c28");
    json_decref(h);
    q = (tg_history_query){.tool = "nothing"};
    h = history(j, &q);
    assert_int_equal(json_array_size(h), 0);
    json_decref(h);

    char *out = NULL;
    q = (tg_history_query){.outcome = "exploded"};
    assert_int_equal(tg__journal_history(j, &q, &out, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "exploded"));
    q = (tg_history_query){.since = "yesterday"};
    assert_int_equal(tg__journal_history(j, &q, &out, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "yesterday"));
    q = (tg_history_query){.since = "17000x"};
    assert_int_equal(tg__journal_history(j, &q, &out, &err), TG_EINVAL);
    q = (tg_history_query){.limit = -1};
    assert_int_equal(tg__journal_history(j, &q, &out, &err), TG_EINVAL);
    assert_null(out);
    tg__journal_close(j);
    free_all(calls, results, N);
}

/* A child begins a call and dies without finishing it. */
static pid_t orphan_child(const char *path, const char *id)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tg__journal *j = NULL;
        tg_error err = {0};
        tg_call *c = tg__call_new(id, "sleep", "toolgate");
        /* its row written on the call path: the replay of a log left by
         * a killed process has test_committer.c */
        tg__journal_options inline_opts = {.commit_inline = 1};
        if (tg__journal_open_sqlite_opts(path, &inline_opts, &j, &err) != 0 ||
            tg__journal_begin(j, &c, 1, &err) != 0)
            _exit(1);
        _exit(0); /* as if killed: no finish, no close */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return pid;
}

static void test_recovery_dead_owner(void **state)
{
    struct fixture *f = *state;
    pid_t dead = orphan_child(f->path, "call_dead");
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     1);

    tg__journal *j = open_ok(f->path); /* recovers */
    json_t *s = show(j, "call_dead");  /* new ref */
    assert_string_equal(jstr(s, "result.outcome"), "error");
    assert_string_equal(jstr(s, "result.execution"), "started");
    assert_string_equal(jstr(s, "result.payload.error.code"), "INTERRUPTED");
    char want[128];
    snprintf(want, sizeof want,
             "the process running this call died before it ended (pid %ld)",
             (long)dead);
    assert_string_equal(jstr(s, "result.payload.error.message"), want);
    char *first = json_dumps(s, JSON_COMPACT);
    json_decref(s);
    tg__journal_close(j);

    /* Exactly once: reopening does not write another result. */
    j = open_ok(f->path);
    tg__journal_close(j);
    j = open_ok(f->path);
    s = show(j, "call_dead");
    char *again = json_dumps(s, JSON_COMPACT);
    assert_string_equal(first, again);
    json_decref(s);
    free(first);
    free(again);
    tg__journal_close(j);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 1);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state = 'running'"),
                     0);
}

static void test_recovery_live_owner(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    tg__journal *j1 = open_ok(f->path);
    tg_call *c = mkcall("call_live", "echo", "{}", NULL);
    assert_int_equal(tg__journal_begin(j1, &c, 1, &err), 0);

    /* A second connection of this same live process leaves the row alone. */
    tg__journal *j2 = open_ok(f->path);
    json_t *s = show(j2, "call_live"); /* new ref */
    assert_true(json_is_null(json_object_get(s, "result")));
    json_decref(s);

    tg_result *r = ok_result(c, "done");
    assert_int_equal(tg__journal_finish(j1, &c, &r, 1, &err), 0);
    s = show(j2, "call_live");
    assert_string_equal(jstr(s, "result.outcome"), "success");
    json_decref(s);
    tg__journal_close(j1);
    tg__journal_close(j2);
    tg__call_free(c);
    tg__result_free(r);
}

/* Our own pid with another start time is a recycled pid: its owner is dead. */
static void test_recovery_recycled_pid(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    tg__journal *j = open_ok(f->path);
    tg_call *c = mkcall("call_old", "echo", "{}", NULL);
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), 0);
    tg__journal_close(j);
    raw_exec(f->path, "UPDATE calls SET owner_start = owner_start + 12345");
    j = open_ok(f->path);
    json_t *s = show(j, "call_old"); /* new ref */
    assert_string_equal(jstr(s, "result.payload.error.code"), "INTERRUPTED");
    json_decref(s);
    tg__journal_close(j);

    /* A row from before a reboot (another boot id) is dead as well. */
    j = open_ok(f->path);
    tg_call *c2 = mkcall("call_boot", "echo", "{}", NULL);
    assert_int_equal(tg__journal_begin(j, &c2, 1, &err), 0);
    tg__journal_close(j);
    raw_exec(f->path, "UPDATE calls SET owner_boot = 'another-boot'"
                      " WHERE id = 'call_boot'");
    j = open_ok(f->path);
    s = show(j, "call_boot");
    assert_string_equal(jstr(s, "result.payload.error.code"), "INTERRUPTED");
    json_decref(s);
    tg__journal_close(j);
    tg__call_free(c);
    tg__call_free(c2);
}

/* Whether the view says each of calls[0..n) runs as want[] does, and the
 * ranges of `running` are sound (first <= last, none overlapping). */
static void check_running(const char *path, tg_call **calls, const int *want,
                          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char sql[160];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM calls WHERE id = '%s'"
                 " AND state = 'running'",
                 calls[i]->id);
        if (jt_count(path, sql) != want[i])
            fail_msg("call %zu (%s): running %lld, want %d", i, calls[i]->id,
                     jt_count(path, sql), want[i]);
    }
    assert_int_equal(jt_count(path, "SELECT count(*) FROM running"
                                    " WHERE last < first"),
                     0);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM running a"
                                    " JOIN running b ON a.first < b.first"
                                    " AND a.last >= b.first"),
                     0);
}

/* Running calls are ranges of rowids: a batch enters as one, and results
 * finishing in any order and any grouping cut it down exactly; writes
 * through the `calls` view and recovery keep the ranges sound. */
static void test_running_ranges(void **state)
{
    struct fixture *f = *state;
    enum { N = 40 };
    tg_error err = {0};
    tg__journal *j = open_ok(f->path);
    tg_call *calls[N];
    tg_result *results[N];
    int want[N];
    for (int i = 0; i < N; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%02d", i);
        calls[i] = mkcall(id, "echo", "{}", NULL);
        results[i] = ok_result(calls[i], "ok");
        want[i] = 1;
    }
    assert_int_equal(tg__journal_begin(j, calls, N, &err), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 1);
    check_running(f->path, calls, want, N);

    /* Random groups in random order until 30 are done (fixed seed). */
    unsigned seed = 12345;
    int left = N;
    while (left > 10) {
        tg_call *bc[N];
        tg_result *br[N];
        size_t k = 0;
        int take = 1 + (int)(rand_r(&seed) % 6);
        for (int tries = 0; tries < 200 && (int)k < take; tries++) {
            int i = (int)(rand_r(&seed) % N);
            int dup = 0;
            for (size_t m = 0; m < k; m++)
                dup |= bc[m] == calls[i];
            if (!want[i] || dup)
                continue;
            bc[k] = calls[i];
            br[k] = results[i];
            k++;
        }
        assert_int_equal(tg__journal_finish(j, bc, br, k, &err), 0);
        for (size_t m = 0; m < k; m++)
            for (int i = 0; i < N; i++)
                if (calls[i] == bc[m]) {
                    want[i] = 0;
                    left--;
                }
        check_running(f->path, calls, want, N);
    }

    /* Through the view, as an older toolgate or a person would. */
    int a = -1, b = -1, c = -1;
    for (int i = 0; i < N; i++)
        if (want[i]) {
            if (a < 0)
                a = i;
            else if (b < 0)
                b = i;
            else if (c < 0)
                c = i;
        }
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE calls SET state = 'done' WHERE id = '%s';"
             "DELETE FROM calls WHERE id = '%s';"
             "UPDATE calls SET owner_boot = 'another-boot';",
             calls[a]->id, calls[b]->id);
    raw_exec(f->path, sql);
    want[a] = want[b] = 0;
    check_running(f->path, calls, want, N);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id = 'r_fake'"),
                     0);
    raw_exec(f->path, "INSERT INTO calls(id, tool, format, created_at,"
                      " started_at, state, owner_pid, owner_start,"
                      " owner_boot) VALUES ('r_fake', 'echo', 'toolgate', 0,"
                      " 0, 'running', 1, 1, 'another-boot')");
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id = 'r_fake'"
                                       " AND state = 'running'"),
                     1);
    snprintf(sql, sizeof sql,
             "UPDATE calls SET state = 'done' WHERE id = '%s';"
             "UPDATE calls SET state = 'running' WHERE id = '%s';",
             calls[c]->id, calls[c]->id);
    raw_exec(f->path, sql);
    check_running(f->path, calls, want, N);
    tg__journal_close(j);

    /* Every owner is now of another boot: recovery ends the rest, once. */
    j = open_ok(f->path);
    tg__journal_close(j);
    for (int i = 0; i < N; i++)
        want[i] = 0;
    check_running(f->path, calls, want, N);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 0);
    /* 8 of the batch (10 left, one set done, one deleted) and the fake. */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"
                                       " WHERE payload LIKE '%INTERRUPTED%'"),
                     9);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 30 + 9);
    free_all(calls, results, N);
}

static int writer(const char *path, const char *prefix, int turns, int per)
{
    tg__journal *j = NULL;
    tg_error err = {0};
    if (tg__journal_open_sqlite(path, &j, &err) != 0) {
        fprintf(stderr, "%s: %s\n", prefix, err.message);
        return 1;
    }
    int rc = 0;
    for (int t = 0; t < turns && rc == 0; t++) {
        tg_call *calls[16];
        tg_result *results[16];
        for (int i = 0; i < per; i++) {
            char id[48];
            snprintf(id, sizeof id, "%s-%d-%d", prefix, t, i);
            calls[i] = tg__call_new(id, "echo", "toolgate");
            json_t *args = json_pack("{s:i}", "i", i); /* new ref */
            tg__call_set_args(calls[i], args);
            json_decref(args);
            results[i] = tg__result_success(calls[i], json_integer(i));
        }
        rc = tg__journal_begin(j, calls, (size_t)per, &err);
        if (rc == 0)
            rc = tg__journal_finish(j, calls, results, (size_t)per, &err);
        if (rc != 0)
            fprintf(stderr, "%s: %s\n", prefix, err.message);
        for (int i = 0; i < per; i++) {
            tg__call_free(calls[i]);
            tg__result_free(results[i]);
        }
    }
    tg__journal_close(j);
    return rc == 0 ? 0 : 1;
}

static void test_two_processes(void **state)
{
    struct fixture *f = *state;
    enum { TURNS = 60, PER = 10 };
    /* The file exists before the race so both children meet one schema
     * being created or already there; either must work. */
    pid_t kids[2];
    const char *names[2] = {"a", "b"};
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0)
            _exit(writer(f->path, names[k], TURNS, PER));
    }
    for (int k = 0; k < 2; k++) {
        int status;
        assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tg__journal *j = open_ok(f->path);
    tg_history_query q = {.limit = 100000};
    json_t *h = history(j, &q); /* new ref */
    assert_int_equal(json_array_size(h), 2 * TURNS * PER);
    json_decref(h);
    q.limit = 1000000; /* capped, still all */
    h = history(j, &q);
    assert_int_equal(json_array_size(h), 2 * TURNS * PER);
    json_decref(h);
    tg__journal_close(j);
    assert_int_equal(jt_count(f->path, "SELECT count(DISTINCT id) FROM calls"),
                     2 * TURNS * PER);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE state != 'done'"),
                     0);
}

/* The schema of versions 1 to 4 as they shipped (sqlite_journal.c's
 * migrations up to v4): old journals are built from this text, not from the
 * current code, so the upgrade from each stays proven. */
static const char *const old_schema[] = {
    /* v1 */
    "CREATE TABLE calls(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL,"
    " tool TEXT NOT NULL, args TEXT, args_raw TEXT, checksum TEXT,"
    " caller_id TEXT, context TEXT, skills TEXT, format TEXT NOT NULL,"
    " idx INTEGER NOT NULL DEFAULT 0,"
    " inline_output INTEGER NOT NULL DEFAULT 1,"
    " from_artifact_tool INTEGER NOT NULL DEFAULT 0,"
    " created_at INTEGER NOT NULL, started_at INTEGER NOT NULL,"
    " state TEXT NOT NULL, owner_pid INTEGER, owner_start INTEGER,"
    " owner_boot TEXT);"
    "CREATE TABLE results(call_rowid INTEGER PRIMARY KEY"
    "  REFERENCES calls(rowid) ON DELETE CASCADE,"
    " id TEXT NOT NULL, tool TEXT NOT NULL, outcome INTEGER NOT NULL,"
    " execution TEXT NOT NULL, payload TEXT NOT NULL, content TEXT,"
    " artifact TEXT, duration_ms REAL NOT NULL DEFAULT 0,"
    " exit_status INTEGER, completed_at INTEGER NOT NULL,"
    " replayed INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX results_completed ON results(completed_at);"
    "CREATE INDEX results_tool ON results(tool, completed_at);"
    "CREATE INDEX results_outcome ON results(outcome, completed_at);"
    "CREATE INDEX calls_id ON calls(id);"
    "CREATE INDEX calls_caller ON calls(caller_id);"
    "CREATE INDEX calls_running ON calls(owner_pid) WHERE state = 'running';",
    /* v2 */
    "ALTER TABLE results ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0;",
    /* v3 */
    "CREATE INDEX IF NOT EXISTS calls_scope ON calls(id, caller_id);"
    "DROP INDEX IF EXISTS calls_id;",
    /* v4 */
    "ALTER TABLE results ADD COLUMN caller_id TEXT;"
    "UPDATE results SET caller_id ="
    " (SELECT caller_id FROM calls WHERE calls.rowid = results.call_rowid);"
    "CREATE INDEX results_caller ON results(caller_id, completed_at);"
    "DROP INDEX results_tool;"
    "CREATE INDEX results_tool ON results(tool, completed_at, outcome,"
    " replayed, duration_ms);",
};

/* A journal of schema `version` as that toolgate left it: a finished call,
 * a call left running by a process of another boot (dead), and one running
 * in this process (alive). */
static void make_old_journal(const char *path, int version)
{
    char sql[512];
    FILE *fp = fopen(path, "w"); /* raw_exec does not create files */
    assert_non_null(fp);
    fclose(fp);
    raw_exec(path, "PRAGMA journal_mode = WAL");
    for (int v = 0; v < version; v++)
        raw_exec(path, old_schema[v]);
    raw_exec(path,
             "INSERT INTO calls(rowid, id, tool, args, checksum, caller_id,"
             " format, created_at, started_at, state, owner_pid, owner_start,"
             " owner_boot) VALUES"
             " (1, 'old_done', 'echo', '{}', 'sha256:aa', 'carol', 'toolgate',"
             " 1000, 1000, 'done', 1, 1, 'old-boot'),"
             " (2, 'old_dead', 'echo', '{}', 'sha256:bb', 'carol', 'toolgate',"
             " 1000, 1000, 'running', 1, 1, 'old-boot');"
             "INSERT INTO results(call_rowid, id, tool, outcome, execution,"
             " payload, duration_ms, completed_at) VALUES (1, 'old_done',"
             " 'echo', 0, 'finished', '\"hi\"', 5, 2000);");
    if (version >= 4) /* v4 wrote the caller on each result */
        raw_exec(path, "UPDATE results SET caller_id = 'carol'");
    snprintf(sql, sizeof sql,
             "INSERT INTO calls(rowid, id, tool, args, checksum, format,"
             " created_at, started_at, state, owner_pid, owner_start) VALUES"
             " (3, 'old_live', 'echo', '{}', 'sha256:cc', 'toolgate', 1000,"
             " 1000, 'running', %ld, 0);"
             "PRAGMA user_version = %d;",
             (long)getpid(), version);
    raw_exec(path, sql);
}

/* A journal made by the previous schema (v10, tests/data/journal/v10.sql:
 * a dump of what toolgate at that version wrote) opens with its rows, and
 * v11's results_caller holds only the results with a caller, which
 * `history --caller` still reads through it. */
static void test_migrate_v10(void **state)
{
    struct fixture *f = *state;
    char src[4096], path[192];
    tg_error err = {0};
    tg_test_source_path(src, sizeof src, "tests/data/journal/v10.sql");
    char *sql = tg_test_read_file(src, NULL);
    assert_non_null(sql);
    snprintf(path, sizeof path, "%s/v10.db", f->dir);
    FILE *fp = fopen(path, "w"); /* raw_exec does not create files */
    assert_non_null(fp);
    fclose(fp);
    raw_exec(path, "PRAGMA journal_mode = WAL");
    raw_exec(path, sql);
    free(sql);
    assert_int_equal(jt_count(path, "PRAGMA user_version"), 10);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results"
                                    " INDEXED BY results_caller"
                                    " WHERE caller_id IS NULL"),
                     2);

    tg__journal *j = open_ok(path);
    assert_int_equal(jt_count(path, "PRAGMA user_version"), 12);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM call_rows"), 4);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results"), 4);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM sqlite_schema"
                                    " WHERE name = 'results_caller' AND sql"
                                    " LIKE '%WHERE caller_id IS NOT NULL'"),
                     1);
    /* The index holds alice's two results, not the two without a caller. */
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results"
                                    " INDEXED BY results_caller"
                                    " WHERE caller_id = 'alice'"),
                     2);
    tg_history_query q = {.caller = "alice", .limit = 20};
    json_t *h = history(j, &q); /* new ref */
    assert_int_equal(json_array_size(h), 2);
    assert_string_equal(jstr(json_array_get(h, 0), "call.caller_id"), "alice");
    json_decref(h);
    h = history(j, NULL);
    assert_int_equal(json_array_size(h), 4);
    json_decref(h);
    /* New rows with and without a caller; the chain goes on. */
    tg_call *c[2] = {mkcall("new_none", "echo", "{}", NULL),
                     mkcall("new_bob", "echo", "{}", "bob")};
    tg_result *r[2] = {ok_result(c[0], "a"), ok_result(c[1], "b")};
    assert_int_equal(tg__journal_begin(j, c, 2, &err), 0);
    assert_int_equal(tg__journal_finish(j, c, r, 2, &err), 0);
    tg__journal_close(j);
    free_all(c, r, 2);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM results"
                                    " INDEXED BY results_caller"
                                    " WHERE caller_id = 'bob'"),
                     1);
    assert_int_equal(jt_count(path, "SELECT count(*) FROM"
                                    " pragma_integrity_check"
                                    " WHERE integrity_check != 'ok'"),
                     0);
    assert_int_equal(
        jt_count(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    char *report = NULL;
    assert_int_equal(tg_journal_verify(path, NULL, 0, &report, &err), 0);
    json_t *v = json_loads(report, 0, NULL); /* new ref */
    assert_true(json_is_true(json_object_get(v, "ok")));
    assert_int_equal(json_integer_value(json_object_get(v, "rows")), 6);
    json_decref(v);
    free(report);
}

/* A call over limits.max_args_bytes never runs: its row keeps the first
 * TG_JOURNAL_ARGS_PREFIX bytes of the arguments' text (never a UTF-8
 * character cut in two) and their size, not the arguments, once or twice;
 * calls within the limit keep theirs whole. */
static void test_args_over_the_limit(void **state)
{
    struct fixture *f = *state;
    tg__journal_options o = {.max_args_bytes = 4096};
    tg__journal *j = jt_open(f->path, &o);
    size_t big = 3u << 20;
    tg__buf text;
    tg__buf_init(&text, 0);
    /* "\u00e9" written as UTF-8 so the cut meets a two-byte character */
    assert_int_equal(tg__buf_puts(&text, "{\"path\": \"a"), 0);
    for (size_t i = 0; i < big / 2; i++)
        assert_int_equal(tg__buf_append(&text, "\xC3\xA9", 2), 0);
    assert_int_equal(tg__buf_puts(&text, "\"}"), 0);
    tg_call *calls[3] = {
        mkcall("over_string", "read_file", tg__buf_cstr(&text), NULL),
        mkcall("at_limit", "read_file", "{\"path\": \"x\"}", NULL), NULL};
    /* arguments sent as an object (no raw string): the compact text */
    calls[2] = tg__call_new("over_object", "read_file", "anthropic");
    assert_non_null(calls[2]);
    json_t *obj = json_pack("{s:s}", "path", tg__buf_cstr(&text) + 10);
    assert_int_equal(tg__call_set_args(calls[2], obj), 0);
    json_decref(obj);
    tg_result *replies[3] = {NULL, NULL, NULL};
    jt_turn(j, calls, 3, "done", replies);
    tg__journal_close(j);

    assert_int_equal(
        jt_count(f->path, "SELECT count(*) FROM call_rows WHERE args IS NULL"
                          " AND length(CAST(args_raw AS BLOB)) <= 1024"
                          " AND args_bytes > 3000000"),
        2);
    assert_int_equal(jt_count(f->path,
                              "SELECT max(length(CAST(args_raw AS BLOB)))"
                              " FROM call_rows WHERE id = 'over_string'"),
                     1023); /* 1024 would cut the last 'é' in two */
    assert_int_equal(jt_count(f->path, "SELECT args_bytes FROM call_rows"
                                       " WHERE id = 'over_string'"),
                     (long long)text.len);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows WHERE"
                                       " id = 'at_limit' AND args IS NOT NULL"
                                       " AND args_bytes IS NULL"),
                     1);
    /* what show gives: args null, args_raw the start, args_bytes the size */
    j = open_ok(f->path);
    json_t *rec = show(j, "over_string");
    json_t *call = json_object_get(rec, "call");
    assert_true(json_is_null(json_object_get(call, "args")));
    assert_int_equal(json_integer_value(json_object_get(call, "args_bytes")),
                     text.len);
    assert_memory_equal(json_string_value(json_object_get(call, "args_raw")),
                        "{\"path\": \"a\xC3\xA9", 13);
    json_decref(rec);
    rec = show(j, "at_limit");
    assert_null(json_object_get(json_object_get(rec, "call"), "args_bytes"));
    json_decref(rec);
    tg__journal_close(j);
    for (size_t i = 0; i < 3; i++)
        tg__call_free(calls[i]);
    tg__buf_cleanup(&text);
}

static void test_migrations(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    tg__journal *j = open_ok(f->path);
    tg_call *c = mkcall("call_m", "echo", "{}", NULL);
    tg_result *r = ok_result(c, "x");
    assert_int_equal(tg__journal_finish(j, &c, &r, 1, &err), 0);
    tg__journal_close(j);
    long long objects = jt_count(f->path, "SELECT count(*) FROM sqlite_schema");
    assert_int_equal(jt_count(f->path, "PRAGMA user_version"), 12);
    for (int i = 0; i < 3; i++) {
        j = open_ok(f->path);
        tg__journal_close(j);
    }
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM sqlite_schema"),
                     objects);
    assert_int_equal(jt_count(f->path, "PRAGMA user_version"), 12);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 1);
    /* v10: results_outcome holds the results that did not succeed only. */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"
                                       " INDEXED BY results_outcome"
                                       " WHERE outcome != 0"),
                     0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM sqlite_schema"
                                       " WHERE name = 'results_outcome'"
                                       " AND sql LIKE '%WHERE outcome != 0'"),
                     1);
    tg__call_free(c);
    tg__result_free(r);

    /* Journals of each older version are migrated forward with their rows;
     * the dead owner's call is recovered once, the live one stays running. */
    for (int version = 1; version <= 4; version++) {
        char path[192];
        snprintf(path, sizeof path, "%s/v%d.db", f->dir, version);
        make_old_journal(path, version);
        j = open_ok(path);
        assert_int_equal(jt_count(path, "PRAGMA user_version"), 12);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM sqlite_schema"),
                         objects);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM call_rows"), 3);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM results"), 2);
        /* Running: the live call alone, in the table and in the view. */
        assert_int_equal(jt_count(path, "SELECT count(*) FROM running"), 1);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM running"
                                        " WHERE first = 3 AND last = 3"),
                         1);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM calls"
                                        " WHERE state = 'running'"
                                        " AND id = 'old_live'"),
                         1);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM calls"
                                        " WHERE state = 'done'"),
                         2);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM results"
                                        " WHERE id = 'old_dead'"
                                        " AND execution = 'started'"
                                        " AND payload LIKE '%INTERRUPTED%'"),
                         1);
        /* v2's repaired, v4's caller on the result, v5's decisions. */
        assert_int_equal(jt_count(path, "SELECT count(*) FROM results"
                                        " WHERE repaired = 0"
                                        " AND caller_id = 'carol'"
                                        " AND decisions IS NULL"),
                         2);
        assert_int_equal(
            jt_count(path, "SELECT count(*) FROM sqlite_schema"
                           " WHERE name IN ('calls_caller', 'calls_running',"
                           " 'calls_id')"),
            0);
        json_t *s = show(j, "old_done"); /* new ref */
        assert_string_equal(jstr(s, "result.payload"), "hi");
        assert_string_equal(jstr(s, "call.caller_id"), "carol");
        json_decref(s);
        /* The upgraded journal takes new calls and finds the old ones. */
        tg_call *again = mkcall("old_done", "echo", "{}", "carol");
        tg_result *reply = NULL;
        snprintf(again->checksum, sizeof again->checksum, "sha256:aa");
        assert_int_equal(tg__journal_begin_dedup(j, &again, 1, &reply, &err),
                         0);
        assert_non_null(reply);
        assert_true(reply->replayed);
        assert_int_equal(tg__journal_finish(j, &again, &reply, 1, &err), 0);
        tg__journal_close(j);
        tg__call_free(again);
        tg__result_free(reply);
        j = open_ok(path); /* once: nothing more to recover or migrate */
        tg__journal_close(j);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM results"), 3);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM"
                                        " pragma_integrity_check"
                                        " WHERE integrity_check != 'ok'"),
                         0);
        assert_int_equal(jt_count(path, "SELECT count(*) FROM"
                                        " pragma_foreign_key_check"),
                         0);
        /* v8: the chain starts at the first row written after the
         * migration (the recovered call); the row from before is counted
         * apart, not reported as inserted. */
        char *report = NULL;
        assert_int_equal(tg_journal_verify(path, NULL, 0, &report, &err), 0);
        json_t *v = json_loads(report, 0, NULL); /* new ref */
        assert_true(json_is_true(json_object_get(v, "ok")));
        assert_int_equal(json_integer_value(json_object_get(v, "rows")), 2);
        assert_int_equal(json_integer_value(json_object_get(v, "before_chain")),
                         1);
        json_decref(v);
        free(report);
    }
    assert_int_equal(jt_count(f->path, "SELECT journal_mode = 'wal'"
                                       " FROM pragma_journal_mode"),
                     1);

    /* A journal written by a newer toolgate is refused, not damaged. */
    raw_exec(f->path, "PRAGMA user_version = 99");
    j = NULL;
    assert_int_equal(tg__journal_open_sqlite(f->path, &j, &err), TG_EJOURNAL);
    assert_null(j);
    assert_non_null(strstr(err.message, "newer"));
    assert_non_null(strstr(err.message, f->path));
    assert_int_equal(jt_count(f->path, "PRAGMA user_version"), 99);
}

static void test_unwritable(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    tg__journal *j = NULL;
    char file[128], path[192];
    /* A parent that is a regular file (root passes permission checks, so
     * permissions alone cannot make a path unwritable here). */
    snprintf(file, sizeof file, "%s/plain", f->dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/sub/journal.db", file);
    assert_int_equal(tg__journal_open_sqlite(path, &j, &err), TG_EJOURNAL);
    assert_null(j);
    assert_non_null(strstr(err.message, path));

    /* The path is a directory. */
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__journal_open_sqlite(f->dir, &j, &err), TG_EJOURNAL);
    assert_null(j);
    assert_non_null(strstr(err.message, f->dir));

    /* Not a database. */
    snprintf(path, sizeof path, "%s/garbage.db", f->dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 512; i++)
        fputs("this is not a database file at all ", fp);
    fclose(fp);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__journal_open_sqlite(path, &j, &err), TG_EJOURNAL);
    assert_null(j);
    assert_non_null(strstr(err.message, path));

    assert_int_equal(tg__journal_open_sqlite("", &j, &err), TG_EINVAL);
}

/* The journal notices when its file is moved, replaced, removed or given a
 * second name, and writes nothing more; a file with two names is not
 * opened. */
static void test_watched_file(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    char dir[160], away[176], awayfile[200], link_path[192];
    snprintf(dir, sizeof dir, "%s/.toolgate", f->dir);
    snprintf(away, sizeof away, "%s/away", f->dir);
    snprintf(awayfile, sizeof awayfile, "%s/journal.db", away);
    snprintf(link_path, sizeof link_path, "%s/second-name.db", f->dir);

    /* Its directory swapped for a copy: the copy is not written. */
    tg__journal *j = open_ok(f->path);
    tg_call *c = mkcall("call_w", "echo", "{}", NULL);
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), 0);
    assert_int_equal(rename(dir, away), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    copy_file(awayfile, f->path);
    tg_result *r = ok_result(c, "done");
    assert_int_equal(tg__journal_finish(j, &c, &r, 1, &err), TG_EJOURNAL);
    assert_non_null(strstr(err.message, "was moved, removed or replaced"));
    assert_non_null(strstr(err.message, "names another file now"));
    tg__journal_close(j);
    tg__result_free(r);
    /* the file moved away holds the call and no result */
    assert_int_equal(jt_count(awayfile, "SELECT count(*) FROM call_rows"), 1);
    assert_int_equal(jt_count(awayfile, "SELECT count(*) FROM results"), 0);

    /* Removed while open. */
    j = open_ok(f->path);
    assert_int_equal(unlink(f->path), 0);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), TG_EJOURNAL);
    assert_non_null(strstr(err.message, "names nothing now"));
    tg__journal_close(j);
    copy_file(awayfile, f->path);

    /* A second name made while open, then at open. */
    j = open_ok(f->path);
    assert_int_equal(link(f->path, link_path), 0);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), TG_EJOURNAL);
    assert_non_null(strstr(err.message, "got another name (2 hard links)"));
    tg__journal_close(j);
    j = NULL;
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__journal_open_sqlite(f->path, &j, &err), TG_EJOURNAL);
    assert_null(j);
    assert_non_null(strstr(err.message, "has 2 names (hard links)"));
    assert_int_equal(unlink(link_path), 0);
    j = open_ok(f->path);
    tg__journal_close(j);
    tg__call_free(c);
}

static void test_public_api(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    char *out = NULL;
    /* No journal yet: empty answers, and nothing is created. */
    assert_int_equal(tg_journal_history(f->path, NULL, &out, &err), 0);
    assert_string_equal(out, "[]");
    tg_free(out);
    assert_int_equal(tg_journal_show(f->path, "x", &out, &err), TG_ENOTFOUND);
    assert_null(out);
    assert_non_null(strstr(err.message, "no call with id 'x' in journal"));
    assert_non_null(strstr(err.message, f->path));
    tg_history_query bad = {.outcome = "nope"};
    assert_int_equal(tg_journal_history(f->path, &bad, &out, &err), TG_EINVAL);
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), -1);

    tg__journal *j = open_ok(f->path);
    tg_call *c = mkcall("call_p", "echo", "{\"a\":1}", "carol");
    tg_result *r = ok_result(c, "out");
    assert_int_equal(tg__journal_begin(j, &c, 1, &err), 0);
    assert_int_equal(tg__journal_finish(j, &c, &r, 1, &err), 0);
    tg__journal_close(j);

    tg_history_query q = {.caller = "carol"};
    assert_int_equal(tg_journal_history(f->path, &q, &out, &err), 0);
    json_t *h = json_loads(out, 0, NULL); /* new ref */
    tg_free(out);
    assert_int_equal(json_array_size(h), 1);
    assert_string_equal(jstr(json_array_get(h, 0), "call.id"), "call_p");
    json_decref(h);
    assert_int_equal(tg_journal_show(f->path, "call_p", &out, &err), 0);
    json_t *s = json_loads(out, 0, NULL); /* new ref */
    tg_free(out);
    assert_string_equal(jstr(s, "result.payload"), "out");
    assert_int_equal(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(s, "call"), "args"), "a")),
        1);
    json_decref(s);
    tg__call_free(c);
    tg__result_free(r);
}

/* On a 320 KiB tmpfs the journal fills the disk: a clear error, no partial
 * batch, and the file stays sound. Runs in a child with its own mount
 * namespace; skipped where mounting is not permitted. */
static int disk_full_child(const char *dir)
{
    if (unshare(CLONE_NEWNS) != 0 ||
        mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, "size=320k") != 0)
        return 77;
    char path[160];
    snprintf(path, sizeof path, "%s/journal.db", dir);
    tg__journal *j = NULL;
    tg_error err = {0};
    if (tg__journal_open_sqlite(path, &j, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.message);
        return 1;
    }
    char big[4096];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    int rc = 0, turn;
    for (turn = 0; turn < 1000 && rc == 0; turn++) {
        tg_call *calls[10];
        tg_result *results[10];
        for (int i = 0; i < 10; i++) {
            char id[32];
            snprintf(id, sizeof id, "c%d-%d", turn, i);
            calls[i] = tg__call_new(id, "echo", "toolgate");
            json_t *args = json_pack("{s:s}", "text", big); /* new ref */
            tg__call_set_args(calls[i], args);
            json_decref(args);
            results[i] = tg__result_success(calls[i], json_string(big));
        }
        rc = tg__journal_begin(j, calls, 10, &err);
        if (rc == 0)
            rc = tg__journal_finish(j, calls, results, 10, &err);
        for (int i = 0; i < 10; i++) {
            tg__call_free(calls[i]);
            tg__result_free(results[i]);
        }
    }
    tg__journal_close(j);
    if (rc != TG_EJOURNAL || strstr(err.message, "disk full") == NULL ||
        strstr(err.message, path) == NULL) {
        fprintf(stderr, "rc %d after %d turns: %s\n", rc, turn, err.message);
        return 2;
    }
    /* Whole batches only, and the file passes integrity_check. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT (SELECT count(*) FROM results),"
                           " (SELECT count(*) FROM calls),"
                           " (SELECT count(*) FROM calls WHERE state='done')",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        return 3;
    long long results = sqlite3_column_int64(st, 0);
    long long calls = sqlite3_column_int64(st, 1);
    long long done = sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    int bad = 0;
    if (results == 0 || results % 10 != 0 || done != results ||
        calls % 10 != 0) {
        fprintf(stderr, "partial rows: %lld results %lld calls %lld done\n",
                results, calls, done);
        bad = 4;
    }
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) !=
            SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW ||
        strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
        bad = 5;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return bad;
}

static void test_disk_full(void **state)
{
    struct fixture *f = *state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/small", f->dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    int status = tg_test_in_child(disk_full_child, dir);
    if (status == 77)
        skip();
    assert_int_equal(status, 0);
}

/* An I/O error while the journal writes: begin or finish fails with an
 * error naming the journal, nothing of the failed step is there, the file
 * passes integrity_check, and the same journal goes on once writes work
 * again (the failed results committed then, their calls still begun). */
static void test_io_error(void **state)
{
    struct fixture *f = *state;
    tg_error err = {0};
    faulty_vfs_use(1);
    tg__journal *j = open_ok(f->path);
    tg_call *ok[2] = {mkcall("io_ok1", "echo", "{}", NULL),
                      mkcall("io_ok2", "echo", "{}", NULL)};
    tg_result *okr[2] = {ok_result(ok[0], "x"), ok_result(ok[1], "y")};
    assert_int_equal(tg__journal_begin(j, ok, 2, &err), 0);
    assert_int_equal(tg__journal_finish(j, ok, okr, 2, &err), 0);

    /* The call rows cannot be written. */
    tg_call *a[3] = {mkcall("io_a1", "echo", "{}", NULL),
                     mkcall("io_a2", "echo", "{}", NULL),
                     mkcall("io_a3", "echo", "{}", NULL)};
    io_writes_left = 0;
    assert_int_equal(tg__journal_begin(j, a, 3, &err), TG_EJOURNAL);
    io_writes_left = -1;
    assert_non_null(strstr(err.message, f->path));
    assert_non_null(strstr(err.message, "I/O error"));
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM call_rows"
                                       " WHERE id LIKE 'io_a%'"),
                     0);

    /* The call rows are in; the results cannot be written (the commit's
     * frames go out in one write, src/journal/walbuf.c: it fails). */
    tg_call *b[3] = {mkcall("io_b1", "echo", "{}", NULL),
                     mkcall("io_b2", "echo", "{}", NULL),
                     mkcall("io_b3", "echo", "{}", NULL)};
    tg_result *br[3] = {ok_result(b[0], "1"), ok_result(b[1], "2"),
                        ok_result(b[2], "3")};
    assert_int_equal(tg__journal_begin(j, b, 3, &err), 0);
    memset(&err, 0, sizeof err);
    io_writes_left = 0;
    assert_int_equal(tg__journal_finish(j, b, br, 3, &err), TG_EJOURNAL);
    io_writes_left = -1;
    assert_non_null(strstr(err.message, f->path));
    assert_non_null(strstr(err.message, "I/O error"));
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"
                                       " WHERE id LIKE 'io_b%'"),
                     0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM calls"
                                       " WHERE id LIKE 'io_b%'"
                                       " AND state = 'running'"),
                     3);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM"
                                       " pragma_integrity_check"
                                       " WHERE integrity_check != 'ok'"),
                     0);

    /* Writes work again: the same journal records the results. */
    assert_int_equal(tg__journal_finish(j, b, br, 3, &err), 0);

    /* Results too big for one write (walbuf.c gathers 120 KiB at most):
     * the first write of the commit goes in, the second fails, a partial
     * WAL append that nobody may see. */
    char *big = malloc(300 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'z', 300 * 1024);
    big[300 * 1024] = '\0';
    tg_call *c[3] = {mkcall("io_c1", "echo", "{}", NULL),
                     mkcall("io_c2", "echo", "{}", NULL),
                     mkcall("io_c3", "echo", "{}", NULL)};
    tg_result *cr[3] = {ok_result(c[0], big), ok_result(c[1], big),
                        ok_result(c[2], big)};
    free(big);
    assert_int_equal(tg__journal_begin(j, c, 3, &err), 0);
    memset(&err, 0, sizeof err);
    io_writes_left = 1;
    assert_int_equal(tg__journal_finish(j, c, cr, 3, &err), TG_EJOURNAL);
    io_writes_left = -1;
    assert_non_null(strstr(err.message, "I/O error"));
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"
                                       " WHERE id LIKE 'io_c%'"),
                     0);
    assert_int_equal(tg__journal_finish(j, c, cr, 3, &err), 0);
    tg__journal_close(j);
    faulty_vfs_use(0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM results"), 8);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM running"), 0);
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM"
                                       " pragma_integrity_check"
                                       " WHERE integrity_check != 'ok'"),
                     0);
    free_all(ok, okr, 2);
    free_all(a, NULL, 3);
    free_all(b, br, 3);
    free_all(c, cr, 3);
}

/* ASan's build, where LeakSanitizer checks the refused paths at exit. */
#if defined(__SANITIZE_ADDRESS__)
#define JT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JT_ASAN 1
#endif
#endif

/* Which N the failing-allocation loops refuse: every one in the plain
 * build; under ASan, where each run costs three times as much, one in
 * ALLOC_STRIDE from the loop's own offset (a different one per loop),
 * unless TG_ALLOC_FULL=1 asks for all. Every N runs with every assertion
 * of the loops in CI's plain stage (SQLite's memory given back included);
 * the sanitizer stage adds leak and memory-error checks at a third of
 * them, spread over every step of the sequence (each step makes hundreds
 * of allocations, so each still fails at many points). All of them took
 * 140 s of the sanitizer stage's 650 s on a 2-core CI machine. */
enum { ALLOC_STRIDE = 3 };

static long alloc_stride(void)
{
#ifdef JT_ASAN
    const char *full = getenv("TG_ALLOC_FULL");
    return full != NULL && strcmp(full, "1") == 0 ? 1 : ALLOC_STRIDE;
#else
    return 1;
#endif
}

/* The first N a loop refuses: `offset` (1 .. ALLOC_STRIDE) when it samples. */
static long alloc_first(long stride, long offset)
{
    return stride == 1 ? 1 : offset;
}

/* Fails the N-th allocation of SQLite and jansson for N = 1, 2, ... until the
 * whole sequence runs without a failure (every third N under ASan,
 * alloc_stride): every step returns an error or succeeds, nothing crashes,
 * nothing leaks (ASan), and what was committed is whole. */
static void test_failing_allocations(void **state)
{
    struct fixture *f = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/alloc/journal.db", f->dir);
    enum { N = 3 };
    tg_call *calls[N] = {
        mkcall("a1", "echo", "{\"text\":\"one\"}", "u"),
        mkcall("a2", "grep", "{\"p\":[1,2,3]}", NULL),
        mkcall("a3", "echo", "{\"text\":\"three\"}", "u"),
    };
    calls[0]->context = json_pack("{s:s}", "cwd", "/tmp");
    tg_result *results[N] = {
        ok_result(calls[0], "one"),
        tg__result_error(calls[1], TG_EXECUTION_FINISHED, "EXIT_STATUS", NULL,
                         "exit 1"),
        tg__result_timeout(calls[2], 50),
    };
    for (int i = 0; i < N; i++)
        assert_non_null(tg_call_checksum(calls[i])); /* warm the caches */
    tg_history_query q = {.tool = "echo", .since = "1000000000"};
    long failures = 0, iterations = 0;
    int clean[2] = {0, 0};
    char adir[160];
    snprintf(adir, sizeof adir, "%s/alloc", f->dir);
    assert_int_equal(mkdir(adir, 0700), 0);
    /* Odd runs start from a journal holding a call whose process died, so
     * recovery writes under failing allocations too; even runs from no
     * file, so the schema is created under them. */
    char orphaned[160];
    snprintf(orphaned, sizeof orphaned, "%s/orphaned.db", f->dir);
    orphan_child(orphaned, "dead");
    raw_exec(orphaned, "PRAGMA wal_checkpoint(TRUNCATE)");
    /* An odd stride alternates the parity of N, so both starting points
     * fail at every step. */
    long stride = alloc_stride();
    for (long n = alloc_first(stride, ALLOC_STRIDE);; n += stride) {
        char wal[192], shm[192];
        snprintf(wal, sizeof wal, "%s-wal", path);
        snprintf(shm, sizeof shm, "%s-shm", path);
        unlink(path);
        unlink(wal);
        unlink(shm);
        int with_orphan = n % 2;
        if (with_orphan)
            copy_file(orphaned, path);
        sqlite3_int64 before = sqlite3_memory_used();
        tg_error err = {0};
        tg__journal *j = NULL;
        char *out = NULL;
        int rcs[7] = {1, 1, 1, 1, 1, 1, 1};
        tg_result *replies[N] = {NULL};
        alloc_count = 0;
        injected = 0;
        fail_at = n;
        /* On the call path: the committer's thread would allocate
         * beside the count (its failures have test_committer.c). */
        tg__journal_options inline_opts = {.commit_inline = 1};
        rcs[0] = tg__journal_open_sqlite_opts(path, &inline_opts, &j, &err);
        if (rcs[0] == 0) {
            /* With re-delivery lookups: none matches in a fresh file. */
            rcs[1] = tg__journal_begin_dedup(j, calls, N, replies, &err);
            for (int k = 0; k < N; k++)
                assert_null(replies[k]);
            rcs[2] = tg__journal_finish(j, calls, results, N, &err);
            rcs[3] = tg__journal_history(j, &q, &out, &err);
            free(out);
            out = NULL;
            rcs[4] = tg__journal_show(j, "a2", &out, &err);
            free(out);
            out = NULL;
            rcs[5] = tg__journal_stats(j, &q, &out, &err);
            free(out);
            out = NULL;
            tg__journal_close(j);
            /* The hash chain over what was written (a failed batch wrote
             * nothing), read with every allocation granted: the loop counts
             * the writer's allocations, not the reader's, or it would run
             * thousands of rounds more. */
            fail_at = 0;
            rcs[6] = tg_journal_verify(path, NULL, 0, &out, &err);
            if (rcs[6] != 0 || strstr(out, "\"ok\":true") == NULL)
                fail_msg("N=%ld: the chain does not verify: %s", n,
                         out != NULL ? out : err.message);
            free(out);
        } else {
            assert_null(j);
        }
        fail_at = 0;
        iterations++;
        int all_ok = 1;
        for (int k = 0; k < 7; k++) {
            if (rcs[k] == 0 || rcs[k] == 1)
                continue;
            all_ok = 0;
            if (rcs[k] != TG_EJOURNAL && rcs[k] != TG_ENOMEM)
                fail_msg("N=%ld step %d: unexpected %d: %s", n, k, rcs[k],
                         err.message);
            assert_true(err.message[0] != '\0');
        }
        for (int k = 0; k < 7; k++)
            if (rcs[k] == 1 && rcs[0] == 0)
                fail_msg("N=%ld step %d did not run", n, k);
        if (!all_ok)
            failures++;
        /* Every connection closed gives back all SQLite memory. */
        assert_int_equal(sqlite3_memory_used(), before);
        /* What was committed is whole: no result without its call marked
         * done, no done call without its result, no half batch. */
        if (rcs[0] == 0 || with_orphan) {
            /* One connection for the five counts: opening one per check
             * (each parsing the schema) was over half the loop's time. */
            long long c[5];
            jt_counts(path,
                      "SELECT (SELECT count(*) FROM results r JOIN calls c"
                      " ON c.rowid = r.call_rowid WHERE c.state != 'done'),"
                      " (SELECT count(*) FROM calls WHERE state = 'done'),"
                      " (SELECT count(*) FROM results),"
                      " (SELECT count(*) FROM results WHERE id != 'dead'),"
                      " (SELECT count(*) FROM results WHERE id = 'dead')",
                      c, 5);
            assert_int_equal(c[0], 0);
            assert_int_equal(c[1], c[2]);
            assert_true(c[3] == 0 || c[3] == N);
            if (with_orphan && rcs[0] == 0)
                assert_int_equal(c[4], 1);
        }
        if (!injected) {
            if (!all_ok)
                fail_msg("N=%ld failed without an injected failure: %s", n,
                         err.message);
            /* Until both starting points have run clean once. */
            clean[with_orphan] = 1;
            if (clean[0] && clean[1])
                break;
        }
    }
    print_message("failing-allocation loop: %ld runs (every %ld), %ld failed "
                  "cleanly\n",
                  iterations, stride, failures);
    assert_true(failures > 0);
    free_all(calls, results, N);
}

/* The same under re-delivery and retention: a journal holding two finished
 * calls; each run re-delivers one (a replay) and the other with other
 * arguments (a conflict), journals both answers, and prunes down to
 * max_rows. Every step fails cleanly or succeeds, nothing leaks, and the
 * answers are right whenever the steps succeed. */
static void test_failing_allocations_replay(void **state)
{
    struct fixture *f = *state;
    char seed[160], path[160];
    snprintf(seed, sizeof seed, "%s/seed.db", f->dir);
    snprintf(path, sizeof path, "%s/replay.db", f->dir);
    tg_error err = {0};
    tg__journal *j = open_ok(seed);
    tg_call *first[2] = {mkcall("r1", "echo", "{\"text\":\"one\"}", "u"),
                         mkcall("r2", "echo", "{\"text\":\"two\"}", "u")};
    tg_result *done[2] = {ok_result(first[0], "one"),
                          ok_result(first[1], "two")};
    assert_int_equal(tg__journal_begin(j, first, 2, &err), 0);
    assert_int_equal(tg__journal_finish(j, first, done, 2, &err), 0);
    tg__journal_close(j);
    raw_exec(seed, "PRAGMA wal_checkpoint(TRUNCATE)");
    free_all(first, done, 2);

    tg_call *again[2] = {mkcall("r1", "echo", "{\"text\":\"one\"}", "u"),
                         mkcall("r2", "echo", "{\"text\":\"TWO\"}", "u")};
    for (int i = 0; i < 2; i++)
        assert_non_null(tg_call_checksum(again[i]));
    tg__journal_options opts = {
        .max_rows = 3, .prune_batch = 2, .commit_inline = 1};
    long failures = 0, stride = alloc_stride();
    for (long n = alloc_first(stride, 1);; n += stride) {
        char wal[192], shm[192];
        snprintf(wal, sizeof wal, "%s-wal", path);
        snprintf(shm, sizeof shm, "%s-shm", path);
        unlink(wal);
        unlink(shm);
        copy_file(seed, path);
        sqlite3_int64 before = sqlite3_memory_used();
        tg_result *replies[2] = {NULL, NULL};
        size_t pruned = 0;
        int rcs[4] = {1, 1, 1, 1};
        memset(&err, 0, sizeof err);
        j = NULL;
        alloc_count = 0;
        injected = 0;
        fail_at = n;
        rcs[0] = tg__journal_open_sqlite_opts(path, &opts, &j, &err);
        if (rcs[0] == 0) {
            rcs[1] = tg__journal_begin_dedup(j, again, 2, replies, &err);
            if (rcs[1] == 0)
                rcs[2] = tg__journal_finish(j, again, replies, 2, &err);
            rcs[3] = tg__journal_prune(j, &pruned, &err);
            tg__journal_close(j);
        }
        fail_at = 0;
        int all_ok = 1;
        for (int k = 0; k < 4; k++) {
            if (rcs[k] == 0 || rcs[k] == 1)
                continue;
            all_ok = 0;
            if (rcs[k] != TG_EJOURNAL && rcs[k] != TG_ENOMEM)
                fail_msg("N=%ld step %d: unexpected %d: %s", n, k, rcs[k],
                         err.message);
        }
        if (rcs[1] == 0) {
            assert_non_null(replies[0]);
            assert_non_null(replies[1]);
            assert_true(tg_result_replayed(replies[0]));
            assert_string_equal(tg_result_payload_json(replies[0]), "\"one\"");
            assert_string_equal(tg_result_error_code(replies[1]),
                                "CALL_ID_CONFLICT");
        } else {
            assert_null(replies[0]);
            assert_null(replies[1]);
        }
        tg__result_free(replies[0]);
        tg__result_free(replies[1]);
        assert_int_equal(sqlite3_memory_used(), before);
        /* Whole or nothing: no running rows (answers get none), calls and
         * results paired. */
        long long c[3];
        jt_counts(path,
                  "SELECT (SELECT count(*) FROM calls WHERE state != 'done'),"
                  " (SELECT count(*) FROM calls),"
                  " (SELECT count(*) FROM results)",
                  c, 3);
        assert_int_equal(c[0], 0);
        assert_int_equal(c[1], c[2]);
        if (!all_ok)
            failures++;
        if (!injected) {
            if (!all_ok)
                fail_msg("N=%ld failed without an injected failure: %s", n,
                         err.message);
            assert_int_equal(c[1], 3);
            break;
        }
    }
    print_message("failing-allocation loop (replay, prune; every %ld): %ld "
                  "failed cleanly\n",
                  stride, failures);
    assert_true(failures > 0);
    tg__call_free(again[0]);
    tg__call_free(again[1]);
}

/* `test_journal PATTERN` runs only the tests whose names match PATTERN
 * (cmocka's glob), `test_journal -PATTERN` all the others: ctest runs the
 * two failing-allocation loops, most of this program's time, as tests of
 * their own beside the rest (tests/CMakeLists.txt). */
int main(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "usage: %s [PATTERN | -PATTERN]\n", argv[0]);
        return 2;
    }
    const char *skip = argc == 2 && argv[1][0] == '-' ? argv[1] + 1 : NULL;
    const char *only = argc == 2 && skip == NULL ? argv[1] : NULL;
    /* Before SQLite initialises: its allocator can only be set first. */
    static const sqlite3_mem_methods mem = {sq_malloc,   sq_free,    sq_realloc,
                                            sq_size,     sq_roundup, sq_init,
                                            sq_shutdown, NULL};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &mem) != SQLITE_OK) {
        fprintf(stderr, "sqlite3_config failed\n");
        return 1;
    }
    json_set_alloc_funcs(js_malloc, js_free);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_id_and_unbegun, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_dead_owner, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_recovery_live_owner, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_recovery_recycled_pid, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_running_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_args_over_the_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_migrations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_public_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_io_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_allocations, setup_mem,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failing_allocations_replay,
                                        setup_mem, teardown),
    };
    /* A pattern that selects nothing is a mistake, not a pass. */
    size_t ntests = sizeof tests / sizeof tests[0], selected = 0;
    for (size_t i = 0; i < ntests; i++)
        if (only != NULL ? fnmatch(only, tests[i].name, 0) == 0
                         : skip == NULL || fnmatch(skip, tests[i].name, 0) != 0)
            selected++;
    if (selected == 0) {
        fprintf(stderr, "%s: no test selected by '%s'\n", argv[0], argv[1]);
        return 2;
    }
    if (skip != NULL)
        cmocka_set_skip_filter(skip);
    if (only != NULL)
        cmocka_set_test_filter(only);
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    sqlite3_shutdown();
    return failed;
}
