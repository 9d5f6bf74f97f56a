/* SPDX-License-Identifier: MIT */
/*
 * progress.h - the live status on a terminal's stderr while `run` works: one
 * line per running call (tool, id, elapsed time, bytes of output), redrawn
 * on every runtime event, and with --verbose the calls' streamed output.
 */
#ifndef TG_CLI_PROGRESS_H
#define TG_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#include "toolgate.h"

typedef struct progress progress;

/* A progress display on `out` (borrowed). live: draw the status block (only
 * on a terminal); verbose: copy output chunks. NULL on OOM. */
progress *progress_new(FILE *out, bool live, bool verbose, size_t calls);
void progress_free(progress *p);
/* Event callbacks for tg_runtime_set_events, with the progress as ud. */
extern const tg_events progress_events;
/* Erases the status block (before results are printed). */
void progress_clear(progress *p);

#endif
