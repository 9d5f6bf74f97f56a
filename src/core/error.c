/* SPDX-License-Identifier: MIT */
/*
 * error.c - error codes and names (generated from TG_ERRNO_MAP) and the
 * helpers that fill a caller's tg_error.
 */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tg_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define TG__ERRNO_TEXT(name, value, text)                                      \
    case value:                                                                \
        return text;
        TG_ERRNO_MAP(TG__ERRNO_TEXT)
#undef TG__ERRNO_TEXT
    default:
        return "unknown error";
    }
}

const char *tg_err_name(int code)
{
    switch (code) {
    case 0:
        return "TG_OK";
#define TG__ERRNO_NAME(name, value, text)                                      \
    case value:                                                                \
        return #name;
        TG_ERRNO_MAP(TG__ERRNO_NAME)
#undef TG__ERRNO_NAME
    default:
        return "TG_EUNKNOWN";
    }
}

void tg_free(void *p)
{
    free(p);
}

static void vset(tg_error *err, int code, const char *fmt, va_list ap)
{
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

int tg__error_set(tg_error *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int tg__error_at(tg_error *err, int code, long line, long column,
                 const char *fmt, ...)
{
    if (err == NULL)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, fmt, ap);
    va_end(ap);
    err->line = line;
    err->column = column;
    return code;
}

const char *tg__text_show(const char *text, char *out, size_t size)
{
    size_t n = 0, room = size - 4; /* "..." and the NUL */
    if (text == NULL)
        text = "(none)";
    for (; text[n] != '\0' && n < room; n++) {
        unsigned char c = (unsigned char)text[n];
        out[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (text[n] != '\0') {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

void tg__error_pointer(tg_error *err, const char *pointer)
{
    if (err == NULL)
        return;
    snprintf(err->pointer, sizeof err->pointer, "%s", pointer ? pointer : "");
}

void tg__error_clear(tg_error *err)
{
    if (err == NULL)
        return;
    memset(err, 0, sizeof *err);
}

int tg__errno_to_tg(int errnum)
{
    switch (errnum) {
    case 0:
        return 0;
    case ENOMEM:
        return TG_ENOMEM;
    case ENOENT:
    case ENOTDIR:
        return TG_ENOTFOUND;
    case EEXIST:
        return TG_EEXIST;
    case EINVAL:
        return TG_EINVAL;
    case ECANCELED:
        return TG_ECANCELED;
    case E2BIG:
    case EFBIG:
    case ENOSPC:
    case EMFILE:
    case ENFILE:
        return TG_ELIMIT;
    default:
        return TG_EIO;
    }
}
