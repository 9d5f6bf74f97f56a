/* SPDX-License-Identifier: MIT */
/*
 * curl_uv.h - libcurl's multi interface driven by a libuv loop: curl tells
 * which sockets to watch (CURLMOPT_SOCKETFUNCTION, one uv_poll_t each) and
 * when to wake it (CURLMOPT_TIMERFUNCTION, one uv_timer_t), the loop calls
 * curl_multi_socket_action when either fires, and every finished transfer
 * is handed to the owner's `done` callback. No threads, no blocking, no
 * curl_multi_perform loop.
 *
 * libcurl refuses multi calls made from inside its own callbacks
 * (CURLM_RECURSIVE_API_CALL): the owner calls tg__curl_uv_add and
 * tg__curl_uv_remove only from the loop's callbacks or from `done` (which
 * runs after curl returned), never from a write or header callback.
 */
#ifndef TG_REMOTE_CURL_UV_H
#define TG_REMOTE_CURL_UV_H

#include <curl/curl.h>
#include <uv.h>

#include "error.h"

/* A transfer ended: result is curl's code for it (CURLE_OK, or why it
 * failed). The easy handle is still in the multi: `done` removes it with
 * tg__curl_uv_remove (and may add others). */
typedef void (*tg__curl_uv_done_fn)(void *ud, CURL *easy, CURLcode result);

typedef struct tg__curl_uv_sock tg__curl_uv_sock;

/* Caller-owned (embed it); every member is private. */
typedef struct tg__curl_uv {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    tg__curl_uv_sock *socks; /* the sockets watched, for the close */
    tg__curl_uv_done_fn done;
    void *ud;
    int open;    /* handles not closed yet: the timer and closing polls */
    int closing; /* tg__curl_uv_close ran */
    void (*closed)(void *ud);
} tg__curl_uv;

/* Prepares c on loop: a multi handle and its timer. `done` (with ud) hears
 * of every finished transfer. 0, or TG_ENOMEM / TG_EIO with err filled
 * and nothing left to close. */
int tg__curl_uv_init(tg__curl_uv *c, uv_loop_t *loop, tg__curl_uv_done_fn done,
                     void *ud, tg_error *err);
/* Starts the transfer of easy (configured, not in any multi): it runs on
 * the loop from now on. 0, or TG_ENOMEM / TG_EIO with err filled (easy is
 * then not added and still the caller's). */
int tg__curl_uv_add(tg__curl_uv *c, CURL *easy, tg_error *err);
/* Takes easy out of the multi, ending its transfer if it still runs (its
 * connection is closed then, not reused). The caller still owns easy. */
void tg__curl_uv_remove(tg__curl_uv *c, CURL *easy);
/* Ends c: every easy must have been removed. The multi handle is cleaned
 * up, every uv handle closed; `closed(ud)` is called from the loop once the
 * last one is, after which the caller may free the memory holding c. */
void tg__curl_uv_close(tg__curl_uv *c, void (*closed)(void *ud));

#endif
