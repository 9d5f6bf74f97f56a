/* SPDX-License-Identifier: MIT */
/*
 * config.h - the configuration (spec/cli.md, toolgate.json): workspace,
 * journal, spool, limits, tools, policy and hooks, with the embedded defaults.
 * Loading validates every key and names the bad one (exit status 3 in the
 * CLI); tool entries are validated by the registry's rules (tool.h).
 */
#ifndef TG_REGISTRY_CONFIG_H
#define TG_REGISTRY_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "toolgate.h"

struct tg_config {
    char *workspace;          /* absolute path */
    char *cwd;                /* default cwd of calls; NULL: the workspace */
    char *journal;            /* absolute path, NULL when off */
    char *spool_dir;          /* absolute path */
    int64_t inline_max_bytes; /* spool.inline_max_bytes */
    int64_t timeout_ms;       /* limits.timeout_ms: default per-call deadline */
    int parallel;             /* limits.parallel */
    int64_t max_args_bytes;   /* limits.max_args_bytes */
    int64_t max_output_bytes; /* limits.max_output_bytes (cap of kept output) */
    int64_t kill_grace_ms;    /* limits.kill_grace_ms: TERM -> KILL delay */
    bool repair;              /* limits.repair: fix what models get wrong */
    json_t *builtin_tools;    /* array of names (new ref) */
    json_t *tools;            /* array of validated tool objects (new ref) */
    json_t *policy;           /* object or NULL (new ref) */
    json_t *hooks;            /* object or NULL (new ref) */
    unsigned char *hmac_key;  /* NULL: plain sha256 checksums */
    size_t hmac_key_len;

    /* journal.* of the object form (see tg_journal_options) */
    bool journal_sync_full;    /* sync "full" (else "normal") */
    int64_t journal_keep_days; /* 0 keeps forever */
    int64_t journal_max_rows;  /* 0: no limit */
};

/* A deep copy of cfg; NULL on OOM. */
tg_config *tg__config_copy(const tg_config *cfg);

#endif
