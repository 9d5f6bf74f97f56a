/* SPDX-License-Identifier: MIT */
/*
 * config.h - the configuration (docs/configuration.md, toolgate.json):
 * workspace, journal, spool, limits, tools, policy and hooks, with the embedded
 * defaults. Loading validates every key and names the bad one (exit status 3 in
 * the CLI); tool entries are validated by the registry's rules (tool.h).
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
    char *spool_dir;          /* absolute path; NULL: spooling off */
    int64_t inline_max_bytes; /* spool.inline_max_bytes */
    int64_t
        spool_max_bytes; /* spool.max_bytes: LRU eviction past it; 0: none */
    bool envelope;       /* tool output shown to models in the trust envelope */
    int64_t timeout_ms;  /* limits.timeout_ms: default per-call deadline */
    int parallel;        /* limits.parallel */
    int64_t max_args_bytes;   /* limits.max_args_bytes */
    int64_t max_output_bytes; /* limits.max_output_bytes (cap of kept output) */
    int64_t kill_grace_ms;    /* limits.kill_grace_ms: TERM -> KILL delay */
    bool repair;              /* limits.repair: fix what models get wrong */
    json_t *builtin_tools;    /* array of names (new ref) */
    json_t *tools;            /* array of validated tool objects (new ref) */
    json_t *policy;           /* object or NULL (new ref) */
    json_t *hooks;            /* object or NULL (new ref), as written:
                                 before/after lists of argv arrays or
                                 {"command","timeout_ms"}, timeout_ms */
    unsigned char *hmac_key;  /* NULL: plain sha256 checksums */
    size_t hmac_key_len;
    /* where the configuration and the HMAC key were read from (absolute,
     * as named, symlinks not resolved), NULL: not from a file. toolgate's
     * own files: tools are kept from them (src/exec/state.c). */
    char *file;
    char *hmac_key_file;

    /* journal.* of the object form (see tg__journal_options) */
    bool journal_sync_full;     /* sync "full" (else "normal") */
    bool journal_commit_inline; /* commit "inline" (else "background") */
    int64_t journal_keep_days;  /* 0 keeps forever */
    int64_t journal_max_rows;   /* 0: no limit */

    /* sandbox.* (src/exec/sandbox.c): how command tools and `shell` run */
    int sandbox_mode;        /* TG__SANDBOX_AUTO, _BWRAP, _OFF, _WARM, _COLD */
    int64_t sandbox_idle_ms; /* sandbox.idle_ms: a warm sandbox unused this
                                long is ended */
    char *sandbox_bwrap;     /* the bubblewrap program; NULL: bwrap in PATH */
    json_t *sandbox_hide;    /* array of paths masked inside (new ref); NULL:
                                the default list (sandbox.c) */
    int64_t rlimit_cpu_s;    /* sandbox.rlimits.*; 0: not limited */
    int64_t rlimit_as_mb;
    int64_t rlimit_nofile;
    int64_t rlimit_nproc;
    int64_t rlimit_fsize_mb;

    /* limits.max_validation_steps: what checking one call's arguments
     * against its tool's schema may cost (src/schema/schema.h) */
    int64_t max_validation_steps;

    /* serve.task_after_ms: how long a tools/call that may become a task
     * (2026-07-28's tasks extension) runs before it does (src/serve) */
    int64_t serve_task_after_ms;
};

/* sandbox.mode */
enum {
    TG__SANDBOX_AUTO = 0, /* bubblewrap where it works, else rlimits (said) */
    TG__SANDBOX_BWRAP,    /* bubblewrap or the runtime does not start */
    TG__SANDBOX_OFF,      /* rlimits and the environment allowlist only */
    TG__SANDBOX_WARM,     /* bubblewrap required, kept warm per profile */
    TG__SANDBOX_COLD      /* bubblewrap required, one per call */
};

/* A deep copy of cfg; NULL on OOM. */
tg_config *tg__config_copy(const tg_config *cfg);

#endif
