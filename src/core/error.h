/* SPDX-License-Identifier: MIT */
/*
 * error.h - filling the caller's tg_error. Every failure path of the library
 * goes through these helpers so messages carry context in one consistent form
 * and errno/libuv codes are converted in exactly one place (tg__errno_to_tg).
 */
#ifndef TG_CORE_ERROR_H
#define TG_CORE_ERROR_H

#include "toolgate.h"

#if defined(__GNUC__)
#define TG__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TG__PRINTF(a, b)
#endif

/* Fills err (may be NULL) with code and a formatted message; returns code so
 * callers can `return tg__error_set(err, TG_EINVAL, "...")`. */
int tg__error_set(tg_error *err, int code, const char *fmt, ...)
    TG__PRINTF(3, 4);
/* Same, with the 1-based line and column of the input it is about. */
int tg__error_at(tg_error *err, int code, long line, long column,
                 const char *fmt, ...) TG__PRINTF(5, 6);
/* Sets the JSON pointer of the bad input (copied, truncated to fit). */
void tg__error_pointer(tg_error *err, const char *pointer);
/* Writes a printable, bounded rendering of text from outside (a call id, a
 * name) into out (size bytes, at least 8) for a message a terminal may
 * show: bytes outside printable ASCII as '?', and "..." where it was cut.
 * Returns out. */
const char *tg__text_show(const char *text, char *out, size_t size);
/* The room messages give an id shown with tg__text_show. */
#define TG__SHOWN_ID_SIZE 72
/* Clears err to "no error". */
void tg__error_clear(tg_error *err);
/* Makes e read as "no error" the way `tg_error e = {0}` does (code 0, an
 * empty message and pointer, no line or column) without zeroing its ~800
 * bytes: for the error a path taken by every call keeps on its stack in
 * case something fails (the zeroing cost ~100 instructions a site). */
static inline void tg__error_init(tg_error *e)
{
    e->code = 0;
    e->message[0] = '\0';
    e->pointer[0] = '\0';
    e->line = e->column = 0;
}
/* Maps an errno value (positive) to the closest TG_E* code. */
int tg__errno_to_tg(int errnum);

#endif
