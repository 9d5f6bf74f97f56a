/* SPDX-License-Identifier: MIT */
/*
 * output.h - where a running tool's output goes (output.c): memory, or the
 * spool past the inline limit, capped at limits.max_output_bytes. Used by
 * the tool sources (command.c, handler.c).
 */
#ifndef TG_EXEC_OUTPUT_H
#define TG_EXEC_OUTPUT_H

#include <stddef.h>

#include "buf.h"
#include "config.h"
#include "error.h"
#include "record.h"
#include "spool.h"

/* A running tool's output (output.c): in memory, or through a spool writer
 * that keeps spool.inline_max_bytes in memory and streams the rest to the
 * artifact store. */
typedef struct tg__output {
    tg__spool_writer *w; /* NULL: in memory */
    tg__buf mem;         /* capped at limits.max_output_bytes */
    int failed;          /* sticky: TG_ELIMIT (past the cap), TG_EIO, ... */
    tg_error e;          /* what failed */
} tg__output;

/* Starts collecting call's output under cfg's limits: spooled when spool
 * (may be NULL) is on and the call is not to an artifact tool (those are never
 * spooled again). Returns 0, or a TG_E* code with o->e filled (and kept: o is
 * then an output that lost what it was to keep, see tg__output_attach). */
int tg__output_init(tg__output *o, const tg_config *cfg, tg_spool *spool,
                    const tg_call *call);
/* Appends output. Returns 0; TG_ELIMIT past limits.max_output_bytes (what
 * fits is kept: stop the tool and report OUTPUT_LIMIT); TG_EIO when the
 * spool's file system fails (o->e says how); TG_ENOMEM. Sticky. */
int tg__output_write(tg__output *o, const char *data, size_t len);
/* Ends the output and makes the call's result. `failed` (taken, may be
 * NULL) is the result when the tool did not succeed and its output is not
 * shown (a cancel): the output kept is attached to it as its artifact when
 * spooled. With failed NULL, a success whose payload is the output, or for
 * spooled output the handle text with result->artifact. An output that
 * could not be kept (the spool failed) gives error SPOOL_FAILED. NULL on
 * out of memory. */
tg_result *tg__output_finish(tg__output *o, const tg_call *call,
                             tg_result *failed);
/* Ends the outputs of a command that did not succeed (stdout `out`, stderr
 * `err`, NULL when it wrote nothing there) and puts what they kept into
 * `failed` (taken; a fresh timeout or error result whose payload text has
 * not been asked for): each stream that was written to becomes a member
 * "stdout" / "stderr" of the error's details (made when missing) or of the
 * timeout object, holding the same "output or handle" a success's payload
 * would (the text, or the handle text when spooled), with
 * "stdout_artifact" / "stderr_artifact" the artifact descriptions of the
 * spooled ones; result->artifact is the first of those. An output that
 * could not be kept gives error SPOOL_FAILED. NULL on out of memory (failed
 * NULL included). Both outputs are ended, whatever happens. */
tg_result *tg__output_attach(tg__output *out, tg__output *err,
                             const tg_call *call, tg_result *failed);
/* Drops the output (partial spool file removed). NULL, or an output already
 * ended: no-op. */
void tg__output_abort(tg__output *o);

#endif
