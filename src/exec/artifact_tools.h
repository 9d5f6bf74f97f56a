/* SPDX-License-Identifier: MIT */
/*
 * artifact_tools.h - the artifact tools (artifact_tools.c): in-process
 * tools over the spool, added to the runtime's registry when it has one.
 */
#ifndef TG_EXEC_ARTIFACT_TOOLS_H
#define TG_EXEC_ARTIFACT_TOOLS_H

#include "config.h"
#include "registry.h"
#include "spool.h"

/* Adds artifact_read, _head, _tail, _grep and _stat to reg as thread-pool
 * handlers over spool (borrowed: it must outlive reg's use). TG_ECONFIG
 * naming the entry when a tool of cfg's "tools" has one of their names;
 * TG_ENOMEM. */
int tg__artifact_tools_add(tg__registry *reg, const tg_config *cfg,
                           tg_spool *spool, tg_error *err);

#endif
