/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c - libFuzzer target for the configuration parser
 * (tg_config_load): any bytes end in success or a TG_ECONFIG/TG_ENOMEM error
 * with a message, never a crash; a load that fails leaves the earlier
 * settings untouched (loading the defaults' journal path compares equal).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_config *cfg = tg_config_new();
    if (cfg == NULL)
        return 0;
    const char *before = tg_config_journal(cfg);
    char *saved = before ? strdup(before) : NULL;
    tg_error err = {0};
    int rc = tg_config_load(cfg, (const char *)data, size, "/tmp", &err);
    if (rc != 0) {
        if (err.message[0] == '\0')
            abort(); /* every failure explains itself */
        const char *after = tg_config_journal(cfg);
        if ((saved == NULL) != (after == NULL) ||
            (saved && strcmp(saved, after) != 0))
            abort(); /* a failed load changed the configuration */
    }
    free(saved);
    tg_config_free(cfg);
    return 0;
}
