/* SPDX-License-Identifier: MIT */
/*
 * curl_uv.c - the glue of curl_uv.h between libcurl's multi socket API and
 * libuv: one uv_poll_t per socket curl asks to watch (allocated on its
 * first use, freed in its close callback), one uv_timer_t for curl's
 * timeouts, and after every curl_multi_socket_action the finished
 * transfers handed to the owner.
 *
 * A socket curl closes may get the same descriptor number back at once:
 * each watch is its own allocation, closed with uv_close (which takes the
 * descriptor out of the loop's poller at once), so the next watch on that
 * number starts clean.
 */
#include "curl_uv.h"

#include <stdlib.h>
#include <string.h>

struct tg__curl_uv_sock {
    uv_poll_t poll;
    curl_socket_t fd;
    tg__curl_uv *c;
    tg__curl_uv_sock *prev, *next;
};

/* One handle of c closed: the last one ends c. */
static void handle_closed(tg__curl_uv *c)
{
    if (--c->open == 0 && c->closing && c->closed != NULL)
        c->closed(c->ud);
}

static void sock_closed(uv_handle_t *h)
{
    tg__curl_uv_sock *s = h->data;
    tg__curl_uv *c = s->c;
    free(s);
    handle_closed(c);
}

static void sock_unwatch(tg__curl_uv_sock *s)
{
    tg__curl_uv *c = s->c;
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        c->socks = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, sock_closed);
}

/* Hands every finished transfer to the owner. The message is copied out
 * first: removing its handle (which `done` does) invalidates it. */
static void check_done(tg__curl_uv *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode result = msg->data.result;
        c->done(c->ud, easy, result);
    }
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    tg__curl_uv_sock *s = p->data;
    tg__curl_uv *c = s->c;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    int running;
    curl_multi_socket_action(c->multi, s->fd, flags, &running);
    check_done(c);
}

static void on_timer(uv_timer_t *t)
{
    tg__curl_uv *c = t->data;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd for `what`, or stop watching it. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp,
                     void *socketp)
{
    (void)easy;
    tg__curl_uv *c = userp;
    tg__curl_uv_sock *s = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL)
            sock_unwatch(s);
        return 0;
    }
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL)
            return -1; /* curl fails the transfer */
        if (uv_poll_init_socket(c->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->fd = fd;
        s->c = c;
        s->poll.data = s;
        s->next = c->socks;
        if (c->socks != NULL)
            c->socks->prev = s;
        c->socks = s;
        c->open++;
        curl_multi_assign(c->multi, fd, s);
    }
    int events = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        events |= UV_READABLE;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        events |= UV_WRITABLE;
    return uv_poll_start(&s->poll, events, on_poll) == 0 ? 0 : -1;
}

/* CURLMOPT_TIMERFUNCTION: wake curl after timeout_ms, or never (-1). */
static int on_timeout(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    tg__curl_uv *c = userp;
    if (timeout_ms < 0)
        return uv_timer_stop(&c->timer) == 0 ? 0 : -1;
    /* Even 0 goes through the loop: curl must not be called back from
     * inside itself. */
    return uv_timer_start(&c->timer, on_timer, (uint64_t)timeout_ms, 0) == 0
               ? 0
               : -1;
}

int tg__curl_uv_init(tg__curl_uv *c, uv_loop_t *loop, tg__curl_uv_done_fn done,
                     void *ud, tg_error *err)
{
    memset(c, 0, sizeof *c);
    c->loop = loop;
    c->done = done;
    c->ud = ud;
    c->multi = curl_multi_init();
    if (c->multi == NULL)
        return tg__error_set(err, TG_ENOMEM, "cannot make a curl multi handle");
    int rc = uv_timer_init(loop, &c->timer);
    if (rc != 0) {
        curl_multi_cleanup(c->multi);
        return tg__error_set(err, TG_EIO, "cannot make a timer: %s",
                             uv_strerror(rc));
    }
    c->timer.data = c;
    c->open = 1;
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timeout);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    return 0;
}

int tg__curl_uv_add(tg__curl_uv *c, CURL *easy, tg_error *err)
{
    CURLMcode mc = curl_multi_add_handle(c->multi, easy);
    if (mc == CURLM_OK)
        return 0;
    return tg__error_set(err, mc == CURLM_OUT_OF_MEMORY ? TG_ENOMEM : TG_EIO,
                         "cannot start a transfer: %s",
                         curl_multi_strerror(mc));
}

void tg__curl_uv_remove(tg__curl_uv *c, CURL *easy)
{
    curl_multi_remove_handle(c->multi, easy);
}

static void timer_closed(uv_handle_t *h)
{
    handle_closed(h->data);
}

void tg__curl_uv_close(tg__curl_uv *c, void (*closed)(void *ud))
{
    c->closing = 1;
    c->closed = closed;
    /* The cleanup closes the cached connections, telling on_socket to stop
     * watching their sockets. */
    curl_multi_cleanup(c->multi);
    c->multi = NULL;
    while (c->socks != NULL)
        sock_unwatch(c->socks);
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, timer_closed);
}
