/* SPDX-License-Identifier: MIT */
/*
 * test_spool.c - the spool on real files in a temporary directory: inline
 * versus spooled at the threshold, dedupe, atomic commit (no temporary
 * files left), a 100 MB stream in bounded memory, binary detection, a line
 * that never ends, a full disk (a small tmpfs, where mounting is allowed),
 * the output limit, every reader on edge cases, grep (invalid and
 * catastrophic patterns, context, limits, matches across blocks), strict
 * ids (malformed, traversal, unknown, evicted), LRU eviction with pins and
 * release, concurrent writers of the same output, and the artifact tools.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "spool.h"
#include "tg_test.h"

struct fixture {
    char dir[64]; /* first: tg_test_dir_setup makes it */
    char spool[96];
    tg_spool *sp;
};

static int setup(void **state)
{
    if (tg_test_dir_setup(state, sizeof(struct fixture), "tg-spool-") != 0)
        return -1;
    struct fixture *f = *state;
    snprintf(f->spool, sizeof f->spool, "%s/.toolgate/artifacts", f->dir);
    tg_error err = {0};
    assert_int_equal(tg__spool_open(f->spool, 0, 0, &f->sp, &err), 0);
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tg__spool_free(f->sp);
    return tg_test_dir_teardown(state);
}

/* Writes `len` bytes in chunks of `chunk` through a writer and finishes. */
static int put(tg_spool *sp, const char *data, size_t len, size_t inline_max,
               size_t chunk, tg__spool_outcome *o, tg_error *err)
{
    tg__spool_writer *w = NULL;
    int rc = tg__spool_writer_new(sp, inline_max, &w, err);
    if (rc)
        return rc;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        if ((rc = tg__spool_writer_write(w, data + off, n, err)) != 0) {
            tg__spool_writer_abort(w);
            return rc;
        }
    }
    return tg__spool_writer_finish(w, o, err);
}

/* Stores data as an artifact (forced) and copies its id into id. */
static void store(tg_spool *sp, const char *data, size_t len,
                  char id[TG_SPOOL_ID_LEN + 1])
{
    tg__spool_writer *w = NULL;
    tg_error err = {0};
    tg__spool_outcome o;
    assert_int_equal(tg__spool_writer_new(sp, 0, &w, &err), 0);
    tg__spool_writer_set_force(w, true);
    assert_int_equal(tg__spool_writer_write(w, data, len, &err), 0);
    assert_int_equal(tg__spool_writer_finish(w, &o, &err), 0);
    assert_true(o.spooled);
    snprintf(id, TG_SPOOL_ID_LEN + 1, "%s",
             json_string_value(json_object_get(o.artifact, "id")));
    tg__spool_outcome_cleanup(&o);
}

static size_t count_files(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", dir);
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%zu", &n), 1);
    pclose(p);
    return n;
}

static void sha256_hex(const char *data, size_t len, char out[65])
{
    unsigned char d[32];
    unsigned int n = 0;
    EVP_Digest(data, len, d, &n, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_int_t iget(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* ------------------------------------------------------------- writing */

static void test_threshold(void **state)
{
    struct fixture *f = *state;
    char data[101];
    memset(data, 'x', sizeof data);
    tg__spool_outcome o;
    tg_error err = {0};
    /* exactly the inline limit stays inline, in any chunking */
    assert_int_equal(put(f->sp, data, 100, 100, 7, &o, &err), 0);
    assert_false(o.spooled);
    assert_int_equal(o.inline_len, 100);
    assert_memory_equal(o.inline_data, data, 100);
    assert_null(o.artifact);
    tg__spool_outcome_cleanup(&o);
    /* one byte more is spooled, the buffered bytes included */
    assert_int_equal(put(f->sp, data, 101, 100, 7, &o, &err), 0);
    assert_true(o.spooled);
    assert_null(o.inline_data);
    assert_int_equal(iget(o.artifact, "bytes"), 101);
    assert_int_equal(iget(o.artifact, "lines"), 1);
    char sha[65];
    sha256_hex(data, 101, sha);
    assert_string_equal(sget(o.artifact, "sha256"), sha);
    char id[32];
    snprintf(id, sizeof id, "art_%.24s", sha);
    assert_string_equal(sget(o.artifact, "id"), id);
    assert_string_equal(sget(o.artifact, "media_type"),
                        "text/plain; charset=utf-8");
    tg__spool_outcome_cleanup(&o);
    /* empty output stays inline, as an empty string */
    assert_int_equal(put(f->sp, data, 0, 100, 7, &o, &err), 0);
    assert_false(o.spooled);
    assert_int_equal(o.inline_len, 0);
    assert_string_equal(o.inline_data, "");
    tg__spool_outcome_cleanup(&o);
    /* inline_max 0: any byte spools */
    assert_int_equal(put(f->sp, "a", 1, 0, 1, &o, &err), 0);
    assert_true(o.spooled);
    tg__spool_outcome_cleanup(&o);
}

static void test_dedupe_and_atomic(void **state)
{
    struct fixture *f = *state;
    char data[5000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    tg__spool_outcome a, b;
    tg_error err = {0};
    assert_int_equal(put(f->sp, data, sizeof data, 10, 999, &a, &err), 0);
    assert_int_equal(put(f->sp, data, sizeof data, 10, 1, &b, &err), 0);
    assert_true(a.spooled && b.spooled);
    assert_string_equal(sget(a.artifact, "id"), sget(b.artifact, "id"));
    /* one artifact file, nothing left in tmp/ */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s/tmp", f->spool);
    assert_int_equal(count_files(tmp), 0);
    const char *id = sget(a.artifact, "id");
    char path[200];
    snprintf(path, sizeof path, "%s/%.2s/%s", f->spool, id + 4, id);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, sizeof data);
    assert_int_equal(st.st_mode & 0777, 0600);
    json_t *list = NULL;
    assert_int_equal(tg__spool_list(f->sp, &list, &err), 0);
    assert_int_equal(json_array_size(list), 1);
    json_decref(list);
    /* the spool directory is private */
    assert_int_equal(stat(f->spool, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    char db[160];
    snprintf(db, sizeof db, "%s/index.db", f->spool);
    assert_int_equal(stat(db, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    tg__spool_outcome_cleanup(&a);
    tg__spool_outcome_cleanup(&b);
    /* an aborted writer leaves nothing behind */
    tg__spool_writer *w = NULL;
    assert_int_equal(tg__spool_writer_new(f->sp, 0, &w, &err), 0);
    assert_int_equal(tg__spool_writer_write(w, data, sizeof data, &err), 0);
    assert_int_equal(count_files(tmp), 1);
    tg__spool_writer_abort(w);
    assert_int_equal(count_files(tmp), 0);
}

static void test_big_stream_bounded(void **state)
{
    struct fixture *f = *state;
    enum { CHUNK = 65536, MB = 100 };
    char *chunk = malloc(CHUNK);
    assert_non_null(chunk);
    for (int i = 0; i < CHUNK; i++)
        chunk[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
    tg__spool_writer *w = NULL;
    tg_error err = {0};
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    assert_int_equal(tg__spool_writer_new(f->sp, 16384, &w, &err), 0);
    long start = tg_test_status_kib("VmRSS"), peak = start;
    uint64_t total = (uint64_t)MB * 1000 * 1000;
    for (uint64_t off = 0; off < total; off += CHUNK) {
        size_t n = total - off < CHUNK ? (size_t)(total - off) : CHUNK;
        assert_int_equal(tg__spool_writer_write(w, chunk, n, &err), 0);
        EVP_DigestUpdate(md, chunk, n);
        if ((off / CHUNK) % 128 == 0) {
            long now = tg_test_status_kib("VmRSS");
            peak = now > peak ? now : peak;
        }
    }
    assert_int_equal(tg__spool_writer_bytes(w), total);
    tg__spool_outcome o;
    assert_int_equal(tg__spool_writer_finish(w, &o, &err), 0);
    /* the writer's memory does not grow with the output (ASan's shadow
     * and quarantine included, a few MiB at most) */
    assert_true(peak - start < 16 * 1024);
    unsigned char d[32];
    unsigned int dl;
    char hex[65];
    EVP_DigestFinal_ex(md, d, &dl);
    EVP_MD_CTX_free(md);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    assert_string_equal(sget(o.artifact, "sha256"), hex);
    assert_int_equal(iget(o.artifact, "bytes"), total);
    /* every full chunk has CHUNK/64 lines; the last partial one too */
    uint64_t full = total / CHUNK, rest = total % CHUNK;
    uint64_t lines = full * (CHUNK / 64) + rest / 64 + (rest % 64 != 0);
    assert_int_equal(iget(o.artifact, "lines"), lines);
    /* a line deep in the file, found through the checkpoints */
    tg__spool_text t;
    const char *id = sget(o.artifact, "id");
    assert_int_equal(
        tg__spool_read_lines(f->sp, id, 1000001, 2, 4096, &t, &err), 0);
    assert_int_equal(t.text.len, 128);
    assert_int_equal(t.offset, (uint64_t)1000000 * 64);
    assert_memory_equal(t.text.data, chunk + (1000000 * 64) % CHUNK, 64);
    assert_int_equal(t.first_line, 1000001);
    assert_int_equal(t.last_line, 1000002);
    tg__spool_text_cleanup(&t);
    tg__spool_outcome_cleanup(&o);
    free(chunk);
}

static void test_binary_detection(void **state)
{
    struct fixture *f = *state;
    tg__spool_outcome o;
    tg_error err = {0};
    /* a NUL byte */
    assert_int_equal(put(f->sp, "abc\0def\n", 8, 0, 8, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "media_type"),
                        "application/octet-stream");
    assert_string_equal(sget(o.artifact, "preview"), "binary, 8 bytes");
    char *h = NULL;
    assert_int_equal(tg__spool_handle_text(o.artifact, &h), 0);
    assert_non_null(strstr(h, "binary"));
    assert_null(strstr(h, "def"));
    free(h);
    tg__spool_outcome_cleanup(&o);
    /* invalid UTF-8 (a lone continuation byte) */
    assert_int_equal(put(f->sp, "caf\x80 ok", 7, 0, 7, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "media_type"),
                        "application/octet-stream");
    tg__spool_outcome_cleanup(&o);
    /* valid multi-byte text cut by every chunking stays text */
    const char *text = "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 end\n";
    size_t tl = strlen(text);
    for (size_t chunk = 1; chunk <= 4; chunk++) {
        assert_int_equal(put(f->sp, text, tl, 0, chunk, &o, &err), 0);
        assert_string_equal(sget(o.artifact, "media_type"),
                            "text/plain; charset=utf-8");
        assert_string_equal(sget(o.artifact, "preview"),
                            "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 end");
        tg__spool_outcome_cleanup(&o);
    }
    /* ending inside a sequence is not text */
    assert_int_equal(put(f->sp, "ok \xe2\x82", 5, 0, 1, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "media_type"),
                        "application/octet-stream");
    tg__spool_outcome_cleanup(&o);
    /* a surrogate encoded in UTF-8 is not text */
    assert_int_equal(put(f->sp, "\xed\xa0\x80", 3, 0, 3, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "media_type"),
                        "application/octet-stream");
    tg__spool_outcome_cleanup(&o);
}

static void test_endless_line(void **state)
{
    struct fixture *f = *state;
    size_t n = 5 * 1024 * 1024;
    char *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + i % 26);
    data[n - 1] = 'Z';
    tg__spool_outcome o;
    tg_error err = {0};
    assert_int_equal(put(f->sp, data, n, 16384, 65536, &o, &err), 0);
    assert_int_equal(iget(o.artifact, "lines"), 1);
    const char *preview = sget(o.artifact, "preview");
    assert_true(strlen(preview) < 200);
    assert_memory_equal(preview, "abcdef", 6);
    const char *id = sget(o.artifact, "id");
    tg__spool_text t;
    assert_int_equal(tg__spool_tail(f->sp, id, 3, 1000, &t, &err), 0);
    assert_true(t.truncated);
    assert_int_equal(t.text.len, 1000);
    assert_int_equal(t.text.data[999], 'Z');
    assert_int_equal(t.first_line, 1);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_head(f->sp, id, 3, 1000, &t, &err), 0);
    assert_true(t.truncated);
    assert_int_equal(t.text.len, 1000);
    tg__spool_text_cleanup(&t);
    /* grep finds the end of the one line, split in 16 MiB pieces or not */
    tg__spool_grep_opts g = {.pattern = "Z$", .pattern_len = 2};
    json_t *res = NULL;
    assert_int_equal(tg__spool_grep(f->sp, id, &g, &res, &err), 0);
    assert_int_equal(iget(res, "count"), 1);
    json_t *m0 = json_array_get(json_object_get(res, "matches"), 0);
    assert_int_equal(iget(m0, "line"), 1);
    assert_int_equal(iget(m0, "offset"), n - 1);
    assert_true(strlen(sget(m0, "text")) <= 512 + 6);
    json_decref(res);
    tg__spool_outcome_cleanup(&o);
    free(data);
}

/* Fills the spool at `dir` past its file system's size through one writer:
 * a clear error, sticky, nothing left in tmp/, and the spool still works.
 * Returns 0 or the number of the check that failed. */
static int fill_up(const char *dir, size_t chunks)
{
    tg_spool *sp = NULL;
    tg_error err = {0};
    if (tg__spool_open(dir, 0, 0, &sp, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.message);
        return 1;
    }
    char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    tg__spool_writer *w = NULL;
    if (tg__spool_writer_new(sp, 1024, &w, &err) != 0)
        return 2;
    int rc = 0;
    for (size_t i = 0; i < chunks && rc == 0; i++)
        rc = tg__spool_writer_write(w, chunk, sizeof chunk, &err);
    tg__spool_outcome o;
    if (rc == 0) { /* the last buffers fail when they are written */
        rc = tg__spool_writer_finish(w, &o, &err);
        w = NULL;
    }
    if (rc != TG_EIO || strstr(err.message, "No space left") == NULL ||
        strstr(err.message, "removed") == NULL) {
        fprintf(stderr, "write rc %d: %s\n", rc, err.message);
        return 3;
    }
    /* sticky: the next write and the finish say the same */
    tg_error err2 = {0};
    if (w != NULL && (tg__spool_writer_write(w, "x", 1, &err2) != TG_EIO ||
                      strcmp(err2.message, err.message) != 0))
        return 4;
    if (w != NULL &&
        (tg__spool_writer_finish(w, &o, &err2) != TG_EIO || o.artifact != NULL))
        return 5;
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s/tmp", dir);
    if (count_files(tmp) != 0)
        return 6;
    /* the spool still works for what fits */
    if (put(sp, "small\n", 6, 0, 6, &o, &err) != 0 || !o.spooled)
        return 7;
    tg__spool_outcome_cleanup(&o);
    tg__spool_free(sp);
    return 0;
}

/* Small tmpfs file systems fill up: a 1 MiB one while the writer writes
 * its buffers itself, a 24 MiB one once its thread writes them. Runs in a
 * child with its own mount namespace; skipped where mounting is not
 * permitted. */
static int disk_full_child(const char *dir)
{
    char small[160], big[160];
    snprintf(small, sizeof small, "%s/small", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    if (unshare(CLONE_NEWNS) != 0 ||
        mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mkdir(small, 0700) != 0 || mkdir(big, 0700) != 0 ||
        mount("tmpfs", small, "tmpfs", 0, "size=1m") != 0 ||
        mount("tmpfs", big, "tmpfs", 0, "size=24m") != 0)
        return 77;
    int rc = fill_up(small, 64);
    if (rc == 0)
        rc = fill_up(big, 1024) * 10;
    return rc;
}

static void test_disk_full(void **state)
{
    struct fixture *f = *state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/full", f->dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    int status = tg_test_in_child(disk_full_child, dir);
    if (status == 77)
        skip();
    assert_int_equal(status, 0);
}

static void test_output_limit(void **state)
{
    struct fixture *f = *state;
    char data[1500];
    memset(data, 'y', sizeof data);
    tg__spool_writer *w = NULL;
    tg_error err = {0};
    assert_int_equal(tg__spool_writer_new(f->sp, 100, &w, &err), 0);
    tg__spool_writer_set_max_bytes(w, 1000);
    assert_int_equal(tg__spool_writer_write(w, data, 600, &err), 0);
    assert_int_equal(tg__spool_writer_write(w, data, 600, &err), TG_ELIMIT);
    assert_non_null(strstr(err.message, "1000"));
    assert_int_equal(tg__spool_writer_write(w, data, 1, &err), TG_ELIMIT);
    tg__spool_outcome o;
    assert_int_equal(tg__spool_writer_finish(w, &o, &err), 0);
    assert_true(o.limited && o.spooled);
    assert_int_equal(o.bytes, 1000);
    assert_int_equal(iget(o.artifact, "bytes"), 1000);
    tg__spool_outcome_cleanup(&o);
}

static void test_preview_and_handle(void **state)
{
    struct fixture *f = *state;
    tg__buf b;
    tg__buf_init(&b, 0);
    for (int i = 1; i <= 1000; i++)
        assert_int_equal(tg__buf_printf(&b, "line %d\r\n", i), 0);
    tg__spool_outcome o;
    tg_error err = {0};
    assert_int_equal(put(f->sp, b.data, b.len, 100, 333, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "preview"),
                        "line 1\nline 2\nline 3\nline 4\nline 5\n"
                        "[990 lines omitted]\n"
                        "line 996\nline 997\nline 998\nline 999\nline 1000");
    char *h = NULL;
    assert_int_equal(tg__spool_handle_text(o.artifact, &h), 0);
    const char *id = sget(o.artifact, "id");
    assert_non_null(strstr(h, id));
    assert_non_null(strstr(h, "1000 lines"));
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%zu bytes", b.len);
    assert_non_null(strstr(h, bytes));
    assert_non_null(strstr(h, "line 998"));
    assert_non_null(strstr(h, "artifact_grep"));
    assert_non_null(strstr(h, "artifact_read"));
    assert_non_null(strstr(h, "artifact_tail"));
    free(h);
    tg__spool_outcome_cleanup(&o);
    /* few lines: all of them, no marker */
    assert_int_equal(put(f->sp, "a\nb\nc", 5, 0, 5, &o, &err), 0);
    assert_string_equal(sget(o.artifact, "preview"), "a\nb\nc");
    assert_int_equal(iget(o.artifact, "lines"), 3);
    tg__spool_outcome_cleanup(&o);
    tg__buf_cleanup(&b);
}

/* ------------------------------------------------------------- readers */

static void test_readers_edges(void **state)
{
    struct fixture *f = *state;
    char empty[32], small[32];
    store(f->sp, "", 0, empty);
    store(f->sp, "a\nbb\nccc", 8, small);
    tg__spool_text t;
    tg_error err = {0};
    json_t *s = NULL;
    /* an empty artifact */
    assert_int_equal(tg__spool_stat(f->sp, empty, &s, &err), 0);
    assert_int_equal(iget(s, "bytes"), 0);
    assert_int_equal(iget(s, "lines"), 0);
    json_decref(s);
    assert_int_equal(tg__spool_head(f->sp, empty, 5, 100, &t, &err), 0);
    assert_int_equal(t.text.len, 0);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_tail(f->sp, empty, 5, 100, &t, &err), 0);
    assert_int_equal(t.text.len, 0);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_read_bytes(f->sp, empty, 0, 10, 100, &t, &err),
                     0);
    assert_int_equal(t.text.len, 0);
    tg__spool_text_cleanup(&t);
    /* no trailing newline */
    assert_int_equal(tg__spool_stat(f->sp, small, &s, &err), 0);
    assert_int_equal(iget(s, "lines"), 3);
    json_decref(s);
    assert_int_equal(tg__spool_tail(f->sp, small, 1, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "ccc");
    assert_int_equal(t.first_line, 3);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_tail(f->sp, small, 2, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "bb\nccc");
    assert_int_equal(t.first_line, 2);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_tail(f->sp, small, 99, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "a\nbb\nccc");
    assert_int_equal(t.first_line, 1);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_head(f->sp, small, 2, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "a\nbb\n");
    assert_int_equal(t.last_line, 2);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_read_lines(f->sp, small, 3, 5, 100, &t, &err),
                     0);
    assert_string_equal(t.text.data, "ccc");
    assert_int_equal(t.last_line, 3);
    tg__spool_text_cleanup(&t);
    /* ranges past the end */
    assert_int_equal(tg__spool_read_lines(f->sp, small, 4, 5, 100, &t, &err),
                     0);
    assert_int_equal(t.text.len, 0);
    assert_int_equal(t.offset, 8);
    tg__spool_text_cleanup(&t);
    assert_int_equal(tg__spool_read_bytes(f->sp, small, 6, 100, 100, &t, &err),
                     0);
    assert_string_equal(t.text.data, "cc");
    tg__spool_text_cleanup(&t);
    assert_int_equal(
        tg__spool_read_bytes(f->sp, small, 9999, 100, 100, &t, &err), 0);
    assert_int_equal(t.text.len, 0);
    tg__spool_text_cleanup(&t);
    /* the byte cap */
    assert_int_equal(tg__spool_read_bytes(f->sp, small, 0, 100, 3, &t, &err),
                     0);
    assert_string_equal(t.text.data, "a\nb");
    assert_true(t.truncated);
    tg__spool_text_cleanup(&t);
    /* a trailing newline ends the last line */
    char nl[32];
    store(f->sp, "x\ny\n", 4, nl);
    assert_int_equal(tg__spool_tail(f->sp, nl, 1, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "y\n");
    assert_int_equal(t.first_line, 2);
    tg__spool_text_cleanup(&t);
}

/* Numbered lines of varying length: every line read against the source. */
/* An artifact whose file got a second name is not read: through the other
 * name its bytes could have changed. */
static void test_second_name(void **state)
{
    struct fixture *f = *state;
    char id[32], file[600], other[600];
    store(f->sp, "true bytes\n", 11, id);
    snprintf(file, sizeof file, "%s/%c%c/%s", f->spool, id[4], id[5], id);
    snprintf(other, sizeof other, "%s/other-name", f->dir);
    assert_int_equal(link(file, other), 0);
    tg__spool_text t;
    tg_error err = {0};
    assert_int_equal(tg__spool_head(f->sp, id, 5, 100, &t, &err), TG_EIO);
    assert_non_null(strstr(err.message, "has 2 names (hard links)"));
    assert_int_equal(unlink(other), 0);
    assert_int_equal(tg__spool_head(f->sp, id, 5, 100, &t, &err), 0);
    assert_string_equal(t.text.data, "true bytes\n");
    tg__spool_text_cleanup(&t);
}

static void test_line_reads_match_source(void **state)
{
    struct fixture *f = *state;
    tg__buf b;
    tg__buf_init(&b, 0);
    size_t nlines = 150000;
    uint64_t *starts = malloc((nlines + 1) * sizeof *starts);
    assert_non_null(starts);
    for (size_t i = 1; i <= nlines; i++) {
        starts[i] = b.len;
        assert_int_equal(tg__buf_printf(&b, "%zu:%.*s\n", i, (int)(i % 37),
                                        "abcdefghijklmnopqrstuvwxyz0123456789"
                                        "ABCDEFG"),
                         0);
    }
    char id[32];
    store(f->sp, b.data, b.len, id);
    tg_error err = {0};
    tg__spool_text t;
    srand(7);
    for (int k = 0; k < 300; k++) {
        size_t line = 1 + (size_t)rand() % nlines;
        if (k < 3)
            line = k == 0 ? 1 : k == 1 ? nlines : nlines - 1;
        assert_int_equal(
            tg__spool_read_lines(f->sp, id, line, 2, 4096, &t, &err), 0);
        size_t end = line + 2 <= nlines ? starts[line + 2] : b.len;
        assert_int_equal(t.offset, starts[line]);
        assert_int_equal(t.text.len, end - starts[line]);
        assert_memory_equal(t.text.data, b.data + starts[line], t.text.len);
        tg__spool_text_cleanup(&t);
    }
    assert_int_equal(tg__spool_tail(f->sp, id, 3, 4096, &t, &err), 0);
    assert_int_equal(t.offset, starts[nlines - 2]);
    assert_int_equal(t.first_line, nlines - 2);
    tg__spool_text_cleanup(&t);
    free(starts);
    tg__buf_cleanup(&b);
}

/* ---------------------------------------------------------------- grep */

static json_t *grep(tg_spool *sp, const char *id, const char *pattern,
                    unsigned before, unsigned after, uint64_t max,
                    int expect_rc, tg_error *err)
{
    tg__spool_grep_opts o = {.pattern = pattern,
                             .pattern_len = strlen(pattern),
                             .before = before,
                             .after = after,
                             .max_matches = max};
    json_t *res = NULL;
    assert_int_equal(tg__spool_grep(sp, id, &o, &res, err), expect_rc);
    return res;
}

static void test_grep(void **state)
{
    struct fixture *f = *state;
    const char *text = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\n\neta\ntheta";
    char id[32];
    store(f->sp, text, strlen(text), id);
    tg_error err = {0};
    json_t *r = grep(f->sp, id, "ta$", 0, 0, 0, 0, &err);
    json_t *m = json_object_get(r, "matches");
    assert_int_equal(json_array_size(m), 5);
    assert_int_equal(iget(json_array_get(m, 0), "line"), 2);
    assert_string_equal(sget(json_array_get(m, 0), "text"), "beta");
    assert_int_equal(iget(json_array_get(m, 4), "line"), 9);
    assert_string_equal(sget(json_array_get(m, 4), "text"), "theta");
    /* the offset is the match's, not the line's */
    assert_int_equal(iget(json_array_get(m, 4), "offset"), strlen(text) - 2);
    assert_false(json_is_true(json_object_get(r, "truncated")));
    json_decref(r);
    /* context, and the max */
    r = grep(f->sp, id, "^gamma", 2, 1, 0, 0, &err);
    json_t *m0 = json_array_get(json_object_get(r, "matches"), 0);
    json_t *before = json_object_get(m0, "before");
    assert_int_equal(json_array_size(before), 2);
    assert_int_equal(iget(json_array_get(before, 0), "line"), 1);
    assert_string_equal(sget(json_array_get(before, 0), "text"), "alpha");
    assert_string_equal(sget(json_array_get(before, 1), "text"), "beta");
    json_t *after = json_object_get(m0, "after");
    assert_int_equal(json_array_size(after), 1);
    assert_string_equal(sget(json_array_get(after, 0), "text"), "delta");
    assert_int_equal(iget(json_array_get(after, 0), "line"), 4);
    json_decref(r);
    r = grep(f->sp, id, "^alpha", 3, 0, 0, 0, &err);
    m0 = json_array_get(json_object_get(r, "matches"), 0);
    assert_int_equal(json_array_size(json_object_get(m0, "before")), 0);
    json_decref(r);
    r = grep(f->sp, id, "theta", 0, 3, 0, 0, &err);
    m0 = json_array_get(json_object_get(r, "matches"), 0);
    assert_int_equal(json_array_size(json_object_get(m0, "after")), 0);
    json_decref(r);
    r = grep(f->sp, id, "a", 0, 0, 3, 0, &err);
    assert_int_equal(json_array_size(json_object_get(r, "matches")), 3);
    assert_true(json_is_true(json_object_get(r, "truncated")));
    json_decref(r);
    /* empty line, and a pattern that would cross a newline */
    r = grep(f->sp, id, "^$", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 1);
    assert_int_equal(
        iget(json_array_get(json_object_get(r, "matches"), 0), "line"), 7);
    json_decref(r);
    r = grep(f->sp, id, "a\\sb", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 0);
    json_decref(r);
    r = grep(f->sp, id, "zeta\\s*$", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 1);
    json_decref(r);
    r = grep(f->sp, id, "a(?=\\nb)", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 0);
    json_decref(r);
    r = grep(f->sp, id, "\\Ae", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 2); /* epsilon, eta */
    json_decref(r);
    /* close matches share their context lines, each shown once */
    r = grep(f->sp, id, "^(beta|gamma|eta)$", 2, 2, 0, 0, &err);
    m = json_object_get(r, "matches");
    assert_int_equal(json_array_size(m), 3);
    json_t *b0 = json_array_get(m, 0), *b1 = json_array_get(m, 1);
    assert_int_equal(json_array_size(json_object_get(b0, "before")), 1);
    assert_int_equal(json_array_size(json_object_get(b0, "after")), 0);
    assert_int_equal(json_array_size(json_object_get(b1, "before")), 0);
    assert_int_equal(json_array_size(json_object_get(b1, "after")), 2);
    json_t *b2 = json_array_get(m, 2);
    assert_int_equal(iget(b2, "line"), 8);
    /* lines 6 and 7 were not shown yet: 5 was gamma's last after-line */
    assert_int_equal(json_array_size(json_object_get(b2, "before")), 2);
    assert_int_equal(
        iget(json_array_get(json_object_get(b2, "before"), 0), "line"), 6);
    json_decref(r);
    /* $ at the end of a last line without a newline; no phantom line
     * after a final newline */
    char nonl[32], trail[32];
    store(f->sp, "a\nb\nlast", 8, nonl);
    store(f->sp, "a\n\n", 3, trail);
    r = grep(f->sp, nonl, "$", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 3);
    json_decref(r);
    r = grep(f->sp, trail, "^$", 0, 0, 0, 0, &err);
    assert_int_equal(iget(r, "count"), 1);
    json_decref(r);
    /* case folding and count_only */
    tg__spool_grep_opts o = {.pattern = "ALPHA|BETA",
                             .pattern_len = 10,
                             .ignore_case = true,
                             .count_only = true};
    assert_int_equal(tg__spool_grep(f->sp, id, &o, &r, &err), 0);
    assert_int_equal(iget(r, "count"), 2);
    assert_null(json_object_get(r, "matches"));
    json_decref(r);
    /* an invalid pattern: PCRE2's message and the offset */
    r = grep(f->sp, id, "ab(c", 0, 0, 0, TG_EINVAL, &err);
    assert_null(r);
    assert_non_null(strstr(err.message, "invalid pattern at offset 4"));
    assert_non_null(strstr(err.message, "missing closing parenthesis"));
}

static void test_grep_catastrophic(void **state)
{
    struct fixture *f = *state;
    size_t n = 20000;
    char *data = malloc(n + 16);
    assert_non_null(data);
    memcpy(data, "first\n", 6);
    memset(data + 6, 'a', n);
    memcpy(data + 6 + n, "b\nlast\n", 7);
    char id[32];
    store(f->sp, data, n + 13, id);
    tg_error err = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    json_t *r = grep(f->sp, id, "(a+)+$", 0, 0, 0, TG_ELIMIT, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_null(r);
    assert_non_null(strstr(err.message, "too expensive on line 2"));
    assert_non_null(strstr(err.message, "match limit"));
    double secs = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* The match limit ends it (well under a second, sanitized); a scaled
     * 10 s tells a limit from a hang. */
    fprintf(stderr, "    catastrophic pattern: %.3f s\n", secs);
    assert_true(secs < 10.0 * (double)tg_test_time_scale());
    /* the same with count_only still names the line */
    tg__spool_grep_opts o = {
        .pattern = "(a+)+$", .pattern_len = 6, .count_only = true};
    assert_int_equal(tg__spool_grep(f->sp, id, &o, &r, &err), TG_ELIMIT);
    assert_non_null(strstr(err.message, "line 2"));
    free(data);
}

/* A line over 16 MiB is searched in pieces: still one line, matched once,
 * and the cuts are neither its start nor its end. */
static void test_grep_giant_line(void **state)
{
    struct fixture *f = *state;
    size_t n = (size_t)40 << 20;
    char *data = malloc(n + 16);
    assert_non_null(data);
    memset(data, 'x', n);
    memcpy(data + ((size_t)20 << 20), "needle", 6);
    memcpy(data + n, "\nlast\n", 6);
    char id[32];
    store(f->sp, data, n + 6, id);
    free(data);
    tg_error err = {0};
    static const struct {
        const char *pattern;
        json_int_t count;
    } cases[] = {{"needle", 1}, {"^x", 1},      {"x$", 1},      {"x", 1},
                 {"^last$", 1}, {"^needle", 0}, {"xneedlex", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__spool_grep_opts o = {.pattern = cases[i].pattern,
                                 .pattern_len = strlen(cases[i].pattern),
                                 .count_only = true};
        json_t *r = NULL;
        assert_int_equal(tg__spool_grep(f->sp, id, &o, &r, &err), 0);
        if (iget(r, "count") != cases[i].count)
            fail_msg("%s: %lld lines", cases[i].pattern,
                     (long long)iget(r, "count"));
        json_decref(r);
    }
    json_t *r = grep(f->sp, id, "needle", 0, 0, 0, 0, &err);
    json_t *m0 = json_array_get(json_object_get(r, "matches"), 0);
    assert_int_equal(iget(m0, "line"), 1);
    assert_int_equal(iget(m0, "offset"), (json_int_t)20 << 20);
    assert_non_null(strstr(sget(m0, "text"), "xneedlex"));
    json_decref(r);
    r = grep(f->sp, id, "^last", 0, 0, 0, 0, &err);
    assert_int_equal(
        iget(json_array_get(json_object_get(r, "matches"), 0), "line"), 2);
    json_decref(r);
}

/* Matches across the 4 MiB block boundaries keep exact line numbers. */
static void test_grep_across_blocks(void **state)
{
    struct fixture *f = *state;
    tg__buf b;
    tg__buf_init(&b, 0);
    size_t nlines = 400000; /* ~11 MB */
    for (size_t i = 1; i <= nlines; i++)
        assert_int_equal(tg__buf_printf(&b, "row %zu %s\n", i,
                                        i % 50000 == 0 ? "NEEDLE" : "hay"),
                         0);
    char id[32];
    store(f->sp, b.data, b.len, id);
    tg_error err = {0};
    json_t *r = grep(f->sp, id, "NEEDLE", 1, 1, 0, 0, &err);
    json_t *m = json_object_get(r, "matches");
    assert_int_equal(json_array_size(m), 8);
    for (size_t k = 0; k < 8; k++) {
        json_t *e = json_array_get(m, k);
        size_t line = (k + 1) * 50000;
        assert_int_equal(iget(e, "line"), line);
        char want[64];
        snprintf(want, sizeof want, "row %zu NEEDLE", line);
        assert_string_equal(sget(e, "text"), want);
        snprintf(want, sizeof want, "row %zu hay", line - 1);
        assert_string_equal(
            sget(json_array_get(json_object_get(e, "before"), 0), "text"),
            want);
    }
    json_decref(r);
    /* a pattern hitting every line: counted exactly */
    tg__spool_grep_opts o = {
        .pattern = "^row \\d+ ", .pattern_len = 9, .count_only = true};
    assert_int_equal(tg__spool_grep(f->sp, id, &o, &r, &err), 0);
    assert_int_equal(iget(r, "count"), nlines);
    json_decref(r);
    /* the last line, reached at the end of the last block */
    r = grep(f->sp, id, "row 400000 ", 0, 0, 0, 0, &err);
    assert_int_equal(
        iget(json_array_get(json_object_get(r, "matches"), 0), "line"), nlines);
    json_decref(r);
    tg__buf_cleanup(&b);
}

/* ----------------------------------------------------------------- ids */

static void test_ids(void **state)
{
    struct fixture *f = *state;
    static const char *const bad[] = {
        "",
        "art_",
        "art_0123456789abcdef0123456",   /* 23 */
        "art_0123456789abcdef012345678", /* 25 */
        "art_0123456789ABCDEF01234567",  /* upper case */
        "ART_0123456789abcdef01234567",
        "art_../../etc/passwd",
        "art_../../../../../../../etc",
        "art_0123456789abcdef0123456/",
        "art_0123456789abcdef0123456\n",
        "/etc/passwd",
        "ab/art_0123456789abcdef01234567",
        "art_0123456789abcdeg01234567",
    };
    tg_error err = {0};
    tg__spool_text t;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(tg__spool_id_valid(bad[i]));
        assert_int_equal(
            tg__spool_read_bytes(f->sp, bad[i], 0, 10, 10, &t, &err),
            TG_EINVAL);
        assert_non_null(strstr(err.message, "malformed artifact id"));
        assert_int_equal(tg__spool_tail(f->sp, bad[i], 1, 10, &t, &err),
                         TG_EINVAL);
        assert_int_equal(tg__spool_release(f->sp, bad[i], &err), TG_EINVAL);
        assert_int_equal(tg__spool_state_of(f->sp, bad[i]), TG_SPOOL_UNKNOWN);
    }
    assert_false(tg__spool_id_valid(NULL));
    assert_int_equal(tg__spool_read_bytes(f->sp, NULL, 0, 1, 1, &t, &err),
                     TG_EINVAL);
    /* unknown */
    const char *unknown = "art_0123456789abcdef01234567";
    assert_true(tg__spool_id_valid(unknown));
    assert_int_equal(tg__spool_head(f->sp, unknown, 1, 10, &t, &err),
                     TG_ENOTFOUND);
    assert_non_null(strstr(err.message, "unknown artifact"));
    assert_int_equal(tg__spool_state_of(f->sp, unknown), TG_SPOOL_UNKNOWN);
}

static void touch_later(void)
{
    struct timespec ts = {0, 3 * 1000 * 1000};
    nanosleep(&ts, NULL); /* last-used times have millisecond resolution */
}

static void test_eviction(void **state)
{
    struct fixture *f = *state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/lru", f->dir);
    tg_spool *sp = NULL;
    tg_error err = {0};
    assert_int_equal(tg__spool_open(dir, 3000, 0, &sp, &err), 0);
    char a[32], b[32], c[32], d[32], data[1000];
    memset(data, 'A', sizeof data);
    store(sp, data, sizeof data, a);
    assert_int_equal(tg__spool_pin(sp, a, &err), 0);
    touch_later();
    memset(data, 'B', sizeof data);
    store(sp, data, sizeof data, b);
    touch_later();
    memset(data, 'C', sizeof data);
    store(sp, data, sizeof data, c);
    touch_later();
    /* B is read, so C is now the least recently used unpinned one */
    tg__spool_text t;
    assert_int_equal(tg__spool_head(sp, b, 1, 10, &t, &err), 0);
    tg__spool_text_cleanup(&t);
    touch_later();
    memset(data, 'D', sizeof data);
    store(sp, data, sizeof data, d);
    assert_int_equal(tg__spool_state_of(sp, a), TG_SPOOL_STORED);
    assert_int_equal(tg__spool_state_of(sp, b), TG_SPOOL_STORED);
    assert_int_equal(tg__spool_state_of(sp, c), TG_SPOOL_EVICTED);
    assert_int_equal(tg__spool_state_of(sp, d), TG_SPOOL_STORED);
    /* an evicted id answers so, never with other bytes */
    assert_int_equal(tg__spool_read_bytes(sp, c, 0, 10, 10, &t, &err),
                     TG_ENOTFOUND);
    assert_non_null(strstr(err.message, "evicted"));
    char path[200];
    snprintf(path, sizeof path, "%s/%.2s/%s", dir, c + 4, c);
    assert_int_not_equal(access(path, F_OK), 0);
    /* the tool says ARTIFACT_EVICTED */
    char args[96], *payload = NULL;
    const char *code = NULL;
    snprintf(args, sizeof args, "{\"artifact\":\"%s\"}", c);
    assert_int_equal(tg__spool_tool_exec(sp, "artifact_stat", args,
                                         strlen(args), NULL, 0, &payload, &code,
                                         &err),
                     TG_ENOTFOUND);
    assert_string_equal(code, "ARTIFACT_EVICTED");
    /* pins count: two pins need two releases */
    assert_int_equal(tg__spool_pin(sp, d, &err), 0);
    assert_int_equal(tg__spool_pin(sp, d, &err), 0);
    assert_int_equal(tg__spool_release(sp, d, &err), 0);
    assert_int_equal(tg__spool_state_of(sp, d), TG_SPOOL_STORED);
    assert_int_equal(tg__spool_release(sp, d, &err), 0);
    assert_int_equal(tg__spool_state_of(sp, d), TG_SPOOL_RELEASED);
    assert_int_equal(tg__spool_head(sp, d, 1, 10, &t, &err), TG_ENOTFOUND);
    assert_non_null(strstr(err.message, "journal rows"));
    assert_int_equal(tg__spool_release(sp, d, &err), TG_ENOTFOUND);
    /* the pinned one survives a smaller cap at the next open */
    tg__spool_free(sp);
    assert_int_equal(tg__spool_open(dir, 500, 0, &sp, &err), 0);
    assert_int_equal(tg__spool_state_of(sp, a), TG_SPOOL_STORED);
    assert_int_equal(tg__spool_state_of(sp, b), TG_SPOOL_EVICTED);
    /* storing evicted content again brings the same id back */
    memset(data, 'C', sizeof data);
    char c2[32];
    store(sp, data, sizeof data, c2);
    assert_string_equal(c, c2);
    assert_int_equal(tg__spool_state_of(sp, c), TG_SPOOL_STORED);
    json_t *list = NULL;
    assert_int_equal(tg__spool_list(sp, &list, &err), 0);
    assert_int_equal(json_array_size(list), 4);
    json_decref(list);
    tg__spool_free(sp);
}

static void test_stale_tmp(void **state)
{
    struct fixture *f = *state;
    char old[200], live[200];
    snprintf(old, sizeof old, "%s/tmp/w-1-dead", f->spool);
    snprintf(live, sizeof live, "%s/tmp/w-2-live", f->spool);
    int a = open(old, O_CREAT | O_WRONLY, 0600);
    int b = open(live, O_CREAT | O_WRONLY, 0600);
    assert_true(a >= 0 && b >= 0);
    close(a);
    assert_int_equal(flock(b, LOCK_EX), 0);
    struct timespec ts[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old, ts, 0), 0);
    assert_int_equal(utimensat(AT_FDCWD, live, ts, 0), 0);
    tg_spool *sp = NULL;
    tg_error err = {0};
    assert_int_equal(tg__spool_open(f->spool, 0, 0, &sp, &err), 0);
    assert_int_not_equal(access(old, F_OK), 0);
    assert_int_equal(access(live, F_OK), 0); /* its writer holds the lock */
    tg__spool_free(sp);
    close(b);
    /* NO_CREATE on a missing directory: an empty spool */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none", f->dir);
    assert_int_equal(tg__spool_open(missing, 0, TG__SPOOL_NO_CREATE, &sp, &err),
                     0);
    assert_int_not_equal(access(missing, F_OK), 0);
    json_t *list = NULL;
    assert_int_equal(tg__spool_list(sp, &list, &err), 0);
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    tg__spool_text t;
    assert_int_equal(
        tg__spool_head(sp, "art_0123456789abcdef01234567", 1, 10, &t, &err),
        TG_ENOTFOUND);
    tg__spool_writer *w = NULL;
    assert_int_equal(tg__spool_writer_new(sp, 0, &w, &err), TG_EINVAL);
    tg__spool_free(sp);
}

struct racer {
    tg_spool *sp;
    const char *data;
    size_t len;
    char id[32];
    int rc;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    tg__spool_outcome o;
    tg_error err = {0};
    r->rc = put(r->sp, r->data, r->len, 0, 4096, &o, &err);
    if (r->rc == 0)
        snprintf(r->id, sizeof r->id, "%s", sget(o.artifact, "id"));
    tg__spool_outcome_cleanup(&o);
    return NULL;
}

static void test_concurrent_writers(void **state)
{
    struct fixture *f = *state;
    size_t len = 300000;
    char *data = malloc(len);
    assert_non_null(data);
    for (size_t i = 0; i < len; i++)
        data[i] = (char)(' ' + i % 90);
    struct racer r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct racer){.sp = f->sp, .data = data, .len = len};
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(r[i].rc, 0);
        assert_string_equal(r[i].id, r[0].id);
    }
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s/tmp", f->spool);
    assert_int_equal(count_files(tmp), 0);
    char shard[160];
    snprintf(shard, sizeof shard, "%s/%.2s", f->spool, r[0].id + 4);
    assert_int_equal(count_files(shard), 1);
    free(data);
}

/* ---------------------------------------------------------- the tools */

static json_t *tool(tg_spool *sp, const char *name, const char *args,
                    const char *const *allowed, size_t n, int expect,
                    const char *expect_code)
{
    char *payload = NULL;
    const char *code = NULL;
    tg_error err = {0};
    int rc = tg__spool_tool_exec(sp, name, args, strlen(args), allowed, n,
                                 &payload, &code, &err);
    if (rc != expect ||
        (expect_code && (!code || strcmp(code, expect_code) != 0))) {
        fprintf(stderr, "%s %s: rc %d code %s: %s\n", name, args, rc,
                code ? code : "-", err.message);
        fail();
    }
    if (rc != 0) {
        assert_null(payload);
        assert_true(err.message[0] != '\0');
        return NULL;
    }
    json_error_t jerr;
    json_t *v = json_loads(payload, 0, &jerr);
    assert_non_null(v);
    free(payload);
    return v;
}

static void test_tools(void **state)
{
    struct fixture *f = *state;
    char id[32], bin[32], args[256];
    store(f->sp, "one\ntwo\nthree\nfour\n", 19, id);
    store(f->sp, "\x01\x02\x00\xff", 4, bin);
    const char *allowed[] = {id, bin};
    /* definitions: five tools, each with the ids as an enum */
    json_t *defs = tg__spool_tool_defs(allowed, 2);
    assert_int_equal(json_array_size(defs), 5);
    size_t i;
    json_t *d;
    json_array_foreach(defs, i, d)
    {
        assert_true(tg__spool_is_tool(sget(d, "name")));
        json_t *schema = json_object_get(d, "input_schema");
        json_t *e = json_object_get(
            json_object_get(json_object_get(schema, "properties"), "artifact"),
            "enum");
        assert_int_equal(json_array_size(e), 2);
        assert_string_equal(json_string_value(json_array_get(e, 0)), id);
        assert_true(
            json_is_false(json_object_get(schema, "additionalProperties")));
    }
    json_decref(defs);
    defs = tg__spool_tool_defs(NULL, 0);
    assert_int_equal(json_array_size(defs), 5);
    json_decref(defs);
    assert_false(tg__spool_is_tool("read_file"));

    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"lines\":2}", id);
    json_t *r = tool(f->sp, "artifact_head", args, allowed, 2, 0, NULL);
    assert_string_equal(sget(r, "text"), "one\ntwo\n");
    assert_int_equal(iget(r, "first_line"), 1);
    assert_int_equal(iget(r, "last_line"), 2);
    assert_int_equal(iget(r, "total_lines"), 4);
    json_decref(r);
    r = tool(f->sp, "artifact_tail", args, allowed, 2, 0, NULL);
    assert_string_equal(sget(r, "text"), "three\nfour\n");
    assert_int_equal(iget(r, "first_line"), 3);
    assert_true(json_is_true(json_object_get(r, "eof")));
    json_decref(r);
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"line\":2,\"lines\":2}",
             id);
    r = tool(f->sp, "artifact_read", args, allowed, 2, 0, NULL);
    assert_string_equal(sget(r, "text"), "two\nthree\n");
    json_decref(r);
    snprintf(args, sizeof args,
             "{\"artifact\":\"%s\",\"offset\":4,\"length\":3}", id);
    r = tool(f->sp, "artifact_read", args, allowed, 2, 0, NULL);
    assert_string_equal(sget(r, "text"), "two");
    assert_int_equal(iget(r, "offset"), 4);
    assert_int_equal(iget(r, "length"), 3);
    assert_int_equal(iget(r, "total_bytes"), 19);
    json_decref(r);
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"offset\":0}", bin);
    r = tool(f->sp, "artifact_read", args, allowed, 2, 0, NULL);
    assert_string_equal(sget(r, "base64"), "AQIA/w==");
    assert_null(json_object_get(r, "text"));
    json_decref(r);
    snprintf(args, sizeof args,
             "{\"artifact\":\"%s\",\"pattern\":\"^t\",\"context\":1}", id);
    r = tool(f->sp, "artifact_grep", args, allowed, 2, 0, NULL);
    assert_int_equal(iget(r, "count"), 2);
    json_decref(r);
    snprintf(args, sizeof args, "{\"artifact\":\"%s\"}", id);
    r = tool(f->sp, "artifact_stat", args, allowed, 2, 0, NULL);
    assert_int_equal(iget(r, "bytes"), 19);
    assert_int_equal(iget(r, "lines"), 4);
    assert_string_equal(sget(r, "artifact"), id);
    assert_int_equal(strlen(sget(r, "sha256")), 64);
    json_decref(r);

    /* errors, each with its code */
    tool(f->sp, "artifact_nope", args, NULL, 0, TG_EINVAL, "UNKNOWN_TOOL");
    tool(f->sp, "artifact_stat", "[1]", NULL, 0, TG_EINVAL,
         "INVALID_ARGUMENTS");
    tool(f->sp, "artifact_stat", "{", NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    tool(f->sp, "artifact_stat", "{}", NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    tool(f->sp, "artifact_stat", "{\"artifact\":\"art_../../etc/passwd\"}",
         NULL, 0, TG_EINVAL, "INVALID_ARTIFACT_ID");
    tool(f->sp, "artifact_stat",
         "{\"artifact\":\"art_0123456789abcdef01234567\\u0000x\"}", NULL, 0,
         TG_EINVAL, "INVALID_ARTIFACT_ID");
    tool(f->sp, "artifact_stat",
         "{\"artifact\":\"art_0123456789abcdef01234567\"}", NULL, 0,
         TG_ENOTFOUND, "ARTIFACT_NOT_FOUND");
    tool(f->sp, "artifact_stat",
         "{\"artifact\":\"art_0123456789abcdef01234567\"}", allowed, 2,
         TG_EINVAL, "ARTIFACT_NOT_ALLOWED");
    tool(f->sp, "artifact_stat", args, allowed, 0, TG_EINVAL,
         "ARTIFACT_NOT_ALLOWED");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"x\":1}", id);
    tool(f->sp, "artifact_stat", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"lines\":0}", id);
    tool(f->sp, "artifact_head", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"lines\":\"3\"}", id);
    tool(f->sp, "artifact_tail", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"offset\":1,\"line\":1}",
             id);
    tool(f->sp, "artifact_read", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"length\":100000}", id);
    tool(f->sp, "artifact_read", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\"}", id);
    tool(f->sp, "artifact_grep", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
    snprintf(args, sizeof args, "{\"artifact\":\"%s\",\"pattern\":\"(\"}", id);
    tool(f->sp, "artifact_grep", args, NULL, 0, TG_EINVAL, "INVALID_PATTERN");
    snprintf(args, sizeof args,
             "{\"artifact\":\"%s\",\"pattern\":\"x\",\"context\":21}", id);
    tool(f->sp, "artifact_grep", args, NULL, 0, TG_EINVAL, "INVALID_ARGUMENTS");
}

/* A UTF-8 character cut by a byte range is dropped, not mangled. */
static void test_tool_utf8_ranges(void **state)
{
    struct fixture *f = *state;
    char id[32], args[160];
    const char *text = "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\n"; /* €€€ */
    store(f->sp, text, strlen(text), id);
    snprintf(args, sizeof args,
             "{\"artifact\":\"%s\",\"offset\":1,\"length\":5}", id);
    json_t *r = tool(f->sp, "artifact_read", args, NULL, 0, 0, NULL);
    assert_string_equal(sget(r, "text"), "\xe2\x82\xac");
    assert_int_equal(iget(r, "offset"), 3);
    assert_int_equal(iget(r, "length"), 3);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_threshold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dedupe_and_atomic, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_big_stream_bounded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_binary_detection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endless_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preview_and_handle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readers_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_reads_match_source, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_grep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grep_catastrophic, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_grep_across_blocks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_grep_giant_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_tmp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tools, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_utf8_ranges, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
