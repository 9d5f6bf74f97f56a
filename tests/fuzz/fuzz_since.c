/* SPDX-License-Identifier: MIT */
/*
 * fuzz_since.c - libFuzzer target for the --since reader of the journal
 * queries (tg_journal_history and tg_journal_stats over a real, empty
 * journal): whatever the text, the answer is a list or TG_EINVAL with a
 * message of bounded length, never a failure of the journal or out of
 * memory (99999999999999999999 was "out of memory").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolgate.h"

static char dir[64];
static char path[96];

static void cleanup(void)
{
    char side[128];
    static const char *const tails[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", path, tails[i]);
        unlink(side);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (path[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/tg_fuzz_since.XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
        snprintf(path, sizeof path, "%s/journal.db", dir);
        atexit(cleanup);
    }
    char *since = malloc(size + 1);
    if (since == NULL)
        return 0;
    memcpy(since, data, size);
    since[size] = '\0';
    tg_history_query q = {.since = since, .limit = 1};
    for (int stats = 0; stats < 2; stats++) {
        char *out = NULL;
        tg_error err = {0};
        int rc = stats ? tg_journal_stats(path, &q, &out, &err)
                       : tg_journal_history(path, &q, &out, &err);
        if (rc != 0 && rc != TG_EINVAL)
            abort();
        if (rc == 0 && (out == NULL || out[0] != '['))
            abort();
        /* the message quotes a bounded prefix of the input */
        if (rc == TG_EINVAL && strlen(err.message) > 400)
            abort();
        tg_free(out);
    }
    free(since);
    return 0;
}
