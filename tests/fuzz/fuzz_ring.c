/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ring.c - libFuzzer target for the reader of a dead process's ring
 * file (src/journal/ring.c: tg__ring_open_existing, tg__ring_scan), an
 * untrusted file: the input is written to a file and opened. Whatever the
 * bytes, the open refuses them (TG_EPARSE) or the scan reads only inside
 * the mapping (ASan), ends, and hands over records in sequence, each
 * inside the file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

static char dir[64];
static char path[96];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

struct walk {
    uint64_t last, count, sum;
};

static int visit(void *ud, uint64_t seq, const void *data, size_t len)
{
    struct walk *w = ud;
    if (w->count > 0 && seq != w->last + 1)
        abort();
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) /* every byte, for ASan */
        w->sum += b[i];
    w->last = seq;
    w->count++;
    return 0;
}

static int stop_at_two(void *ud, uint64_t seq, const void *data, size_t len)
{
    (void)seq;
    (void)data;
    (void)len;
    return ++*(int *)ud == 2 ? 7 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (path[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/tg_fuzz_ring.XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
        snprintf(path, sizeof path, "%s/ring", dir);
        atexit(cleanup);
    }
    /* a new file each time: ext4 flushes a file truncated to 0 when it is
     * closed (auto_da_alloc), a wait for the disk per input */
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            abort();
        done += (size_t)n;
    }
    close(fd);
    tg__ring *r = NULL;
    tg_error err = {0};
    int rc = tg__ring_open_existing(path, &r, &err);
    if (rc != 0) {
        if (rc != TG_EPARSE || r != NULL || err.message[0] == '\0')
            abort();
        return 0;
    }
    int64_t pid, start;
    const char *boot;
    tg__ring_owner(r, &pid, &start, &boot);
    if (strlen(boot) >= TG__RING_BOOT_SIZE)
        abort();
    size_t max = tg__ring_max_record(r);
    if (max == 0 || max > size)
        abort();
    struct walk w = {0};
    if (tg__ring_scan(r, 0, visit, &w) != 0)
        abort();
    /* again, past the first record: the ones after it, the same way */
    if (w.count > 0) {
        struct walk again = {0};
        if (tg__ring_scan(r, w.last - w.count + 1, visit, &again) != 0 ||
            again.count != w.count - 1 || again.sum > w.sum)
            abort();
    }
    /* fn's non-zero return stops the scan and is returned */
    int calls = 0;
    rc = tg__ring_scan(r, 0, stop_at_two, &calls);
    if (w.count >= 2 ? rc != 7 || calls != 2 : rc != 0 || calls != (int)w.count)
        abort();
    tg__ring_close(r, false);
    return 0;
}
