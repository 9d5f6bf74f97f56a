/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the journal's crash-safe log of records (src/journal/ring.c)
 * on real files: append, read and release in order; many laps of varying
 * sizes; a full ring and the longest record; a producer and a consumer
 * thread; a child appending until SIGKILL, whose file the parent reads
 * back; corrupted, torn, truncated and garbage files. It also logs what an
 * append of 300 bytes costs (no assertion: see bench/RESULTS.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring.h"
#include "tg_test.h"

#define RING_PATH_MAX (PATH_MAX + 32)

static int setup(void **state)
{
    return tg_test_dir_setup(state, PATH_MAX, "tg_ring_");
}

static int teardown(void **state)
{
    return tg_test_dir_teardown(state);
}

static void ring_path(void **state, const char *name, char *out)
{
    snprintf(out, RING_PATH_MAX, "%s/%s", (const char *)*state, name);
}

/* The bytes of record `seq`: a pattern that depends on seq and the index. */
static void fill(unsigned char *buf, size_t len, uint64_t seq)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seq * 31 + i * 7 + (i >> 8));
}

static int body_ok(const void *data, size_t len, uint64_t seq)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++)
        if (b[i] != (unsigned char)(seq * 31 + i * 7 + (i >> 8)))
            return 0;
    return 1;
}

/* Appends record seq of len bytes, in up to three pieces. */
static int append_pattern(tg__ring *r, size_t len, uint64_t want_seq)
{
    static unsigned char buf[1 << 20];
    fill(buf, len, want_seq);
    size_t a = len / 3, b = len / 2;
    struct iovec iov[3] = {{buf, a}, {buf + a, b - a}, {buf + b, len - b}};
    uint64_t seq = 0;
    tg_error err = {0};
    int rc = tg__ring_appendv(r, iov, 3, &seq, &err);
    if (rc == 0)
        assert_int_equal(seq, want_seq);
    return rc;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void test_crc32c(void **state)
{
    (void)state;
    /* the check value of CRC-32C */
    for (int impl = 0; impl < 3; impl++) {
        assert_int_equal(tg__ring_crc32c(0, "123456789", 9, impl), 0xE3069283u);
        uint32_t c = tg__ring_crc32c(0, "1234", 4, impl);
        assert_int_equal(tg__ring_crc32c(c, "56789", 5, impl), 0xE3069283u);
    }
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)rnd();
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += 13)
            assert_int_equal(tg__ring_crc32c(7, buf + off, n, 1),
                             tg__ring_crc32c(7, buf + off, n, 2));
}

static void test_order(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg__ring_create(path, 10000, 42, 4242, "boot-id", &r, &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* a second ring on the same path is refused, the first one intact */
    tg__ring *r2 = NULL;
    assert_int_equal(tg__ring_create(path, 10000, 1, 1, "", &r2, &err),
                     TG_EEXIST);
    assert_null(r2);
    assert_true(tg__ring_max_record(r) >= 4000);
    const void *data;
    size_t len;
    uint64_t seq;
    assert_int_equal(tg__ring_next(r, 0, &data, &len, &seq), 0);
    assert_int_equal(tg__ring_pending(r), 0);
    for (uint64_t s = 1; s <= 3; s++)
        assert_int_equal(append_pattern(r, (size_t)(s * 10), s), 0);
    assert_int_equal(tg__ring_pending(r), 3);
    uint64_t after = 0;
    for (uint64_t s = 1; s <= 3; s++) {
        assert_int_equal(tg__ring_next(r, after, &data, &len, &seq), 1);
        assert_int_equal(seq, s);
        assert_int_equal(len, s * 10);
        assert_true(body_ok(data, len, s));
        after = seq;
    }
    assert_int_equal(tg__ring_next(r, 3, &data, &len, &seq), 0);
    /* out of order: the record after 1, from anywhere */
    assert_int_equal(tg__ring_next(r, 1, &data, &len, &seq), 1);
    assert_int_equal(seq, 2);
    tg__ring_release(r, 2);
    assert_int_equal(tg__ring_pending(r), 1);
    assert_int_equal(tg__ring_next(r, 0, &data, &len, &seq), 1);
    assert_int_equal(seq, 3);
    /* an empty record */
    struct iovec none = {NULL, 0};
    assert_int_equal(tg__ring_appendv(r, &none, 1, &seq, &err), 0);
    assert_int_equal(seq, 4);
    assert_int_equal(tg__ring_next(r, 3, &data, &len, &seq), 1);
    assert_int_equal(seq, 4);
    assert_int_equal(len, 0);
    /* release clamps to what was appended */
    tg__ring_release(r, 1000);
    assert_int_equal(tg__ring_pending(r), 0);
    assert_int_equal(tg__ring_next(r, 0, &data, &len, &seq), 0);
    assert_int_equal(append_pattern(r, 5, 5), 0);
    assert_int_equal(tg__ring_next(r, 0, &data, &len, &seq), 1);
    assert_int_equal(seq, 5);
    tg__ring_close(r, true);
    assert_int_not_equal(stat(path, &st), 0);
    tg__ring_close(NULL, true);
}

/* fn of tg__ring_scan: checks each record and counts it. */
struct seen {
    uint64_t first, last, count;
    int bad;
};

static int see(void *ud, uint64_t seq, const void *data, size_t len)
{
    struct seen *s = ud;
    if (s->count == 0)
        s->first = seq;
    else if (seq != s->last + 1)
        s->bad = 1;
    if (!body_ok(data, len, seq))
        s->bad = 1;
    s->last = seq;
    s->count++;
    return 0;
}

static void test_wrap_many(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 4096, 1, 2, NULL, &r, &err), 0);
    size_t max = tg__ring_max_record(r);
    uint64_t next = 1, done = 0, bytes = 0;
    const void *data;
    size_t len;
    uint64_t seq;
    while (bytes < 400 * 4096) {
        size_t want = rnd() % 4 == 0 ? (size_t)(rnd() % (max + 1))
                                     : (size_t)(rnd() % 200);
        int rc = append_pattern(r, want, next);
        if (rc == TG__RING_FULL) {
            /* read a few, verify, release them */
            uint64_t k = 1 + rnd() % 5;
            for (uint64_t i = 0; i < k; i++) {
                if (tg__ring_next(r, done, &data, &len, &seq) == 0)
                    break;
                assert_int_equal(seq, done + 1);
                assert_true(body_ok(data, len, seq));
                done = seq;
            }
            assert_true(done > 0);
            tg__ring_release(r, done);
            if (rnd() % 8 == 0) {
                /* a scan of the live records sees exactly them */
                struct seen s = {0};
                assert_int_equal(tg__ring_scan(r, 0, see, &s), 0);
                assert_false(s.bad);
                assert_int_equal(s.count, next - 1 - done);
                if (s.count > 0)
                    assert_int_equal(s.first, done + 1);
            }
            continue;
        }
        assert_int_equal(rc, 0);
        bytes += want + 16;
        next++;
    }
    assert_int_equal(tg__ring_pending(r), next - 1 - done);
    tg__ring_close(r, true);
}

static void test_full_and_max(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 100, 1, 2, NULL, &r, &err), 0);
    size_t max = tg__ring_max_record(r);
    assert_int_equal(max, 4096 / 2 - 16); /* one page */
    uint64_t next = 1;
    while (append_pattern(r, 100, next) == 0)
        next++;
    uint64_t n = next - 1;
    assert_true(n >= 4096 / 120 - 1);
    tg_error e2;
    tg__error_init(&e2);
    uint64_t seq;
    unsigned char one = 1;
    struct iovec iov = {&one, 1};
    assert_int_equal(tg__ring_appendv(r, &iov, 1, &seq, &e2), TG__RING_FULL);
    assert_int_equal(e2.code, 0);
    assert_int_equal(tg__ring_pending(r), n);
    tg__ring_release(r, 1);
    assert_int_equal(append_pattern(r, 100, next), 0);
    next++;
    /* the longest record fits at any write position once all is released */
    for (int shift = 0; shift < 60; shift++) {
        tg__ring_release(r, next - 1);
        assert_int_equal(tg__ring_pending(r), 0);
        assert_int_equal(append_pattern(r, max, next), 0);
        next++;
        tg__ring_release(r, next - 1);
        assert_int_equal(append_pattern(r, (size_t)shift * 37 % 700, next), 0);
        next++;
    }
    /* longer can never fit, whether in one piece or many */
    static unsigned char big[4096];
    struct iovec over = {big, max + 1};
    assert_int_equal(tg__ring_appendv(r, &over, 1, &seq, &err), TG_EINVAL);
    struct iovec halves[2] = {{big, max / 2 + 1}, {big, max / 2 + 1}};
    assert_int_equal(tg__ring_appendv(r, halves, 2, &seq, &err), TG_EINVAL);
    struct iovec huge[2] = {{big, SIZE_MAX / 2 + 1}, {big, SIZE_MAX / 2 + 1}};
    assert_int_equal(tg__ring_appendv(r, huge, 2, &seq, &err), TG_EINVAL);
    assert_int_equal(tg__ring_appendv(r, &iov, -1, &seq, &err), TG_EINVAL);
    tg__ring_close(r, true);
}

/* ---------------------------------------------------- two threads */

enum { THREAD_RECORDS = 200000 };

static size_t thread_len(uint64_t seq)
{
    return (size_t)((seq * 2654435761u) % 701);
}

static void *producer(void *arg)
{
    tg__ring *r = arg;
    unsigned char buf[701];
    for (uint64_t s = 1; s <= THREAD_RECORDS; s++) {
        size_t len = thread_len(s);
        fill(buf, len, s);
        struct iovec iov[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
        uint64_t seq;
        int rc;
        while ((rc = tg__ring_appendv(r, iov, 2, &seq, NULL)) == TG__RING_FULL)
            sched_yield();
        if (rc != 0 || seq != s)
            return (void *)1;
    }
    return NULL;
}

static void test_two_threads(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 16384, 1, 2, NULL, &r, &err), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, producer, r), 0);
    uint64_t done = 0, read = 0;
    int bad = 0;
    while (done < THREAD_RECORDS) {
        const void *data;
        size_t len;
        uint64_t seq;
        if (tg__ring_next(r, read, &data, &len, &seq) == 0) {
            if (read > done) {
                tg__ring_release(r, read);
                done = read;
            }
            sched_yield();
            continue;
        }
        if (seq != read + 1 || len != thread_len(seq) ||
            !body_ok(data, len, seq))
            bad++;
        read = seq;
        /* release in batches of a few */
        if (seq % 7 == 0) {
            tg__ring_release(r, seq);
            done = seq;
        }
    }
    void *res;
    assert_int_equal(pthread_join(t, &res), 0);
    assert_null(res);
    assert_int_equal(bad, 0);
    assert_int_equal(done, THREAD_RECORDS);
    assert_int_equal(tg__ring_pending(r), 0);
    tg__ring_close(r, true);
}

/* ---------------------------------------------------- kill -9 */

/* The child: appends records of varying length forever, releasing all but
 * the last ~20 (so the ring wraps), and reports on `fd` the seq of every
 * 16th append once it returned. */
static void child_append(const char *path, int fd)
{
    tg__ring *r = NULL;
    if (tg__ring_create(path, 65536, (int64_t)getpid(), 777, "b00t", &r,
                        NULL) != 0)
        _exit(3);
    unsigned char buf[1000];
    for (uint64_t s = 1;; s++) {
        size_t len = (size_t)((s * 40503u) % 600);
        fill(buf, len, s);
        struct iovec iov = {buf, len};
        uint64_t seq;
        if (tg__ring_appendv(r, &iov, 1, &seq, NULL) != 0 || seq != s)
            _exit(4);
        if (s > 20 && s % 4 == 0)
            tg__ring_release(r, s - 20);
        if (s % 16 == 0 && write(fd, &s, sizeof s) != (ssize_t)sizeof s)
            _exit(5);
    }
}

static void test_kill_mid_append(void **state)
{
    for (int round = 0; round < 12; round++) {
        char path[RING_PATH_MAX], name[32];
        snprintf(name, sizeof name, "k%d", round);
        ring_path(state, name, path);
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child_append(path, p[1]);
        }
        close(p[1]);
        /* wait for some progress, then a little more, then kill */
        uint64_t reported = 0, s;
        while (reported < 2000 && read(p[0], &s, sizeof s) == (ssize_t)sizeof s)
            reported = s;
        assert_true(reported >= 2000);
        struct timespec ts = {0, (long)(rnd() % 3000000)};
        nanosleep(&ts, NULL);
        assert_int_equal(kill(pid, SIGKILL), 0);
        while (read(p[0], &s, sizeof s) == (ssize_t)sizeof s)
            reported = s;
        close(p[0]);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        tg__ring *r = NULL;
        tg_error err = {0};
        assert_int_equal(tg__ring_open_existing(path, &r, &err), 0);
        int64_t opid, start;
        const char *boot;
        tg__ring_owner(r, &opid, &start, &boot);
        assert_int_equal(opid, pid);
        assert_int_equal(start, 777);
        assert_string_equal(boot, "b00t");
        struct seen seen = {0};
        assert_int_equal(tg__ring_scan(r, 0, see, &seen), 0);
        assert_false(seen.bad);
        assert_true(seen.count > 0);
        assert_true(seen.last >= reported);
        /* and at most the one record the child may have published and not
         * yet counted in the header's head_seq (offset 136) */
        uint64_t head_seq = 0;
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, &head_seq, 8, 136), 8);
        close(fd);
        assert_true(seen.last == head_seq || seen.last == head_seq + 1);
        /* the child kept ~20 unreleased: the scan starts near the end */
        assert_true(seen.first + 40 >= seen.last);
        /* records up to `after` are skipped */
        struct seen tail = {0};
        assert_int_equal(tg__ring_scan(r, seen.last - 2, see, &tail), 0);
        assert_int_equal(tail.count, 2);
        assert_int_equal(tail.first, seen.last - 1);
        tg__ring_close(r, true);
    }
}

/* ---------------------------------------------------- damaged files */

/* Makes a ring of one page with `n` records of 40 bytes (none released),
 * and closes it. */
static void make_ring(const char *path, int n)
{
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 4096, 9, 9, "x", &r, &err), 0);
    for (int s = 1; s <= n; s++)
        assert_int_equal(append_pattern(r, 40, (uint64_t)s), 0);
    tg__ring_close(r, false);
}

/* Makes a ring of one page whose records have wrapped: 60 records of
 * 40-200 bytes, all but the last 8 released. */
static void make_wrapped(const char *path)
{
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 4096, 9, 9, "x", &r, &err), 0);
    for (int s = 1; s <= 60; s++) {
        assert_int_equal(
            append_pattern(r, 40 + (size_t)s * 37 % 160, (uint64_t)s), 0);
        if (s > 8)
            tg__ring_release(r, (uint64_t)s - 8);
    }
    tg__ring_close(r, false);
}

static off_t body_offset(int k)
{
    return 4096 + (off_t)(k - 1) * (16 + 40) + 16;
}

static void poke(const char *path, off_t at, unsigned char byte)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &byte, 1, at), 1);
    close(fd);
}

static struct seen scan_file(const char *path, int *rc)
{
    struct seen s = {0};
    tg__ring *r = NULL;
    tg_error err = {0};
    *rc = tg__ring_open_existing(path, &r, &err);
    if (*rc == 0) {
        assert_int_equal(tg__ring_scan(r, 0, see, &s), 0);
        tg__ring_close(r, false);
    } else {
        assert_true(err.message[0] != '\0');
    }
    return s;
}

static void test_corrupt(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    int rc;
    make_ring(path, 10);
    struct seen s = scan_file(path, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.count, 10);
    /* a changed byte in record 5's body: the scan ends before it */
    poke(path, body_offset(5) + 17, 0xEE);
    s = scan_file(path, &rc);
    assert_int_equal(s.count, 4);
    assert_int_equal(s.last, 4);
    assert_false(s.bad);
    /* a torn record 3 (its sequence number never written) */
    poke(path, body_offset(3) - 16, 0);
    s = scan_file(path, &rc);
    assert_int_equal(s.count, 2);
    /* a length beyond the area in record 1 */
    poke(path, body_offset(1) - 8 + 3, 0x7f);
    s = scan_file(path, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.count, 0);
    unlink(path);

    /* a changed checksum */
    make_ring(path, 3);
    poke(path, body_offset(2) - 4, 0x55);
    s = scan_file(path, &rc);
    assert_int_equal(s.count, 1);
    unlink(path);

    /* a process dead between storing the tail and the tail's seq: the
     * scan starts at the new tail all the same */
    {
        tg__ring *r = NULL;
        tg_error err = {0};
        assert_int_equal(tg__ring_create(path, 4096, 9, 9, "x", &r, &err), 0);
        for (int k = 1; k <= 10; k++)
            assert_int_equal(append_pattern(r, 40, (uint64_t)k), 0);
        tg__ring_release(r, 4);
        tg__ring_close(r, false);
    }
    poke(path, 192 + 8, 2); /* tail_seq: 4 -> 2 */
    s = scan_file(path, &rc);
    assert_int_equal(s.count, 6);
    assert_int_equal(s.first, 5);
    unlink(path);

    /* a header that does not fit, a wrong version, a truncated file */
    make_ring(path, 3);
    poke(path, 8, 2); /* version */
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_EPARSE);
    poke(path, 8, 1);
    poke(path, 16 + 5, 0x10); /* capacity: 1 TiB */
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_EPARSE);
    poke(path, 16 + 5, 0);
    s = scan_file(path, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.count, 3);
    assert_int_equal(truncate(path, 8191), 0);
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_EPARSE);
    assert_int_equal(truncate(path, 100), 0);
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_EPARSE);
    assert_int_equal(truncate(path, 0), 0);
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_EPARSE);
    unlink(path);
    s = scan_file(path, &rc);
    assert_int_equal(rc, TG_ENOTFOUND);
}

/* A ring whose records are random bytes, and random mutations of a valid
 * ring: refused, or scanned without reading outside the mapping (ASan) and
 * with every record seen intact (see: the pattern) or none. */
static void test_garbage(void **state)
{
    char path[RING_PATH_MAX], good[RING_PATH_MAX];
    ring_path(state, "r", path);
    ring_path(state, "good", good);
    make_wrapped(good);
    size_t len;
    char *orig = tg_test_read_file(good, &len);
    assert_non_null(orig);
    assert_int_equal(len, 8192);
    int rc;
    struct seen whole = scan_file(good, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(whole.count, 8);
    assert_int_equal(whole.last, 60);
    for (int round = 0; round < 2000; round++) {
        unsigned char *buf = malloc(len);
        assert_non_null(buf);
        memcpy(buf, orig, len);
        int k = 1 + (int)(rnd() % 8);
        for (int i = 0; i < k; i++) {
            size_t at =
                rnd() % 4 == 0 ? (size_t)(rnd() % 256) : (size_t)(rnd() % len);
            buf[at] = (unsigned char)rnd();
        }
        if (round % 10 == 0)
            for (size_t i = 4096; i < len; i++)
                buf[i] = (unsigned char)rnd();
        size_t cut = round % 7 == 0 ? (size_t)(rnd() % len) : len;
        /* a new file each time: ext4 flushes a file truncated to 0 when
         * it is closed (auto_da_alloc), a wait for the disk per round */
        unlink(path);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, cut), (ssize_t)cut);
        close(fd);
        free(buf);
        struct seen s = scan_file(path, &rc);
        assert_true(rc == 0 || rc == TG_EPARSE);
        if (rc == 0 && s.count > 0 && round % 10 != 0)
            assert_false(s.bad);
    }
    free(orig);
    unlink(path);
    unlink(good);
}

static void test_create_errors(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 10, 1, 1, NULL, &r, &err),
                     TG_EINVAL);
    assert_int_equal(
        tg__ring_create(path, TG__RING_MAX_CAPACITY + 1, 1, 1, NULL, &r, &err),
        TG_EINVAL);
    assert_int_equal(tg__ring_create(path, 4096, 1, 1,
                                     "0123456789012345678901234567890123456789",
                                     &r, &err),
                     TG_EINVAL);
    assert_null(r);
    /* 39 bytes are fine */
    assert_int_equal(tg__ring_create(path, 4096, 1, 1,
                                     "012345678901234567890123456789012345678",
                                     &r, &err),
                     0);
    tg__ring *o = NULL;
    assert_int_equal(tg__ring_open_existing(path, &o, &err), 0);
    const char *boot;
    tg__ring_owner(o, NULL, NULL, &boot);
    assert_string_equal(boot, "012345678901234567890123456789012345678");
    /* a ring opened for recovery takes no appends and has no consumer */
    uint64_t seq;
    struct iovec iov = {"x", 1};
    assert_int_equal(tg__ring_appendv(o, &iov, 1, &seq, &err), TG_EINVAL);
    const void *data;
    size_t len;
    assert_int_equal(tg__ring_next(o, 0, &data, &len, &seq), 0);
    tg__ring_close(o, false);
    tg__ring_close(r, true);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);

    /* no room for the file (a file size limit stands in for a full disk,
     * in a child so the limit stays there): an error, no file left */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {65536, 65536};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        tg_error e = {0};
        tg__ring *x = NULL;
        int rc = tg__ring_create(path, 1 << 20, 1, 1, NULL, &x, &e);
        if (rc != TG_EJOURNAL || x != NULL ||
            strstr(e.message, "no room on disk") == NULL)
            _exit(3);
        _exit(stat(path, &st) == 0 ? 4 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Logs what appending (and releasing) a 300-byte record costs, in two
 * pieces, the way the journal's call path would. */
static void test_append_cost(void **state)
{
    char path[RING_PATH_MAX];
    ring_path(state, "r", path);
    tg__ring *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__ring_create(path, 1 << 20, 1, 2, NULL, &r, &err), 0);
    unsigned char buf[300];
    fill(buf, sizeof buf, 1);
    struct iovec iov[2] = {{buf, 60}, {buf + 60, 240}};
    enum { N = 1000000 };
    uint64_t seq = 0;
    double t0 = tg_test_now_ms();
    for (int i = 0; i < N; i++) {
        assert_int_equal(tg__ring_appendv(r, iov, 2, &seq, &err), 0);
        if (seq % 64 == 0)
            tg__ring_release(r, seq);
    }
    double ms = tg_test_now_ms() - t0;
    assert_int_equal(seq, N);
    fprintf(stderr,
            "ring: %d appends of 300 bytes (released every 64): %.1f ns "
            "each\n",
            N, ms * 1e6 / N);
    tg__ring_close(r, true);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test_setup_teardown(test_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrap_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_and_max, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_mid_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_append_cost, setup, teardown),
    };
    if (argc == 2)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
