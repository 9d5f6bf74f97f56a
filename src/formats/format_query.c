/* SPDX-License-Identifier: MIT */
/* format_query.c - public questions about the formats table. */
#include "format.h"

int tg_format_renders(const char *name)
{
    const tg__format *f = name ? tg__format_find(name) : NULL;
    return f != NULL && f->render != NULL;
}
