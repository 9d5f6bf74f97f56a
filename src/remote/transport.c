/* SPDX-License-Identifier: MIT */
/*
 * transport.c - the calls a session makes on its transport, whichever kind
 * it is (transport.h): each goes through the transport's operations.
 */
#include "transport.h"

int tg__rtransport_send(tg__rtransport *t, const char *json, size_t len,
                        const tg__rsend *m, tg_error *err)
{
    return t->vt->send(t, json, len, m, err);
}

void tg__rtransport_drop(tg__rtransport *t, const char *id)
{
    if (t->vt->drop)
        t->vt->drop(t, id);
}

void tg__rtransport_close(tg__rtransport *t)
{
    t->vt->close(t);
}
