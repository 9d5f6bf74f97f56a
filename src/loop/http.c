/* SPDX-License-Identifier: MIT */
/*
 * http.c - the loop's HTTP exchanges with a model API on libcurl's multi
 * interface, in one loop with the runtime: while a request is in flight
 * curl_multi_poll also watches tg_runtime_fd, so calls started earlier
 * keep running, and every wait is cut at 100 ms to see the cancel flag
 * (which a signal handler may raise).
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "loop_int.h"

#define SLICE_MS 100

struct sink {
    tg__http_reply *reply;
    size_t max_body;
    int over; /* the body passed max_body */
    CURL *easy;
    tg__http_data_fn on_data; /* a 2xx answer's bytes, as they come */
    void *data_ud;
    int data_failed;
};

int tg__http_init(tg__http *h, tg_runtime *rt, atomic_int *cancel,
                  int with_curl, tg_error *err)
{
    memset(h, 0, sizeof *h);
    h->rt = rt;
    h->cancel = cancel;
    if (!with_curl)
        return 0; /* an in-process model: the waits only */
    h->multi = curl_multi_init();
    h->easy = curl_easy_init();
    if (h->multi == NULL || h->easy == NULL) {
        tg__http_cleanup(h);
        return tg__loop_fail(err, TG_ENOMEM, "cannot set up libcurl");
    }
    return 0;
}

void tg__http_cleanup(tg__http *h)
{
    if (h->easy != NULL)
        curl_easy_cleanup(h->easy);
    if (h->multi != NULL)
        curl_multi_cleanup(h->multi);
    h->easy = NULL;
    h->multi = NULL;
}

void tg__http_reply_cleanup(tg__http_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    struct sink *s = ud;
    tg__http_reply *r = s->reply;
    size_t len = size * n;
    if (s->on_data != NULL) {
        long status = 0;
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
        const char *type = NULL;
        curl_easy_getinfo(s->easy, CURLINFO_CONTENT_TYPE, &type);
        /* A server that answers a streamed request whole (JSON) is read
         * as a whole answer: its bytes are kept in the body. */
        int whole =
            type != NULL && strncasecmp(type, "application/json", 16) == 0;
        if (status >= 200 && status < 300 && !whole) {
            if (s->on_data(s->data_ud, data, len) != 0) {
                s->data_failed = 1;
                return 0;
            }
            return len;
        }
    }
    if (r->len + len > s->max_body) {
        s->over = 1;
        return 0; /* curl ends the transfer: CURLE_WRITE_ERROR */
    }
    char *grown = realloc(r->body, r->len + len + 1);
    if (grown == NULL)
        return 0;
    memcpy(grown + r->len, data, len);
    r->len += len;
    grown[r->len] = '\0';
    r->body = grown;
    return len;
}

/* Keeps Retry-After (seconds or a date), retry-after-ms (OpenAI's) and
 * the providers' rate-limit headers. */
static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    struct sink *s = ud;
    size_t len = size * n;
    char line[256];
    if (len >= sizeof line)
        return len;
    memcpy(line, data, len);
    line[len] = '\0';
    if (strncasecmp(line, "HTTP/", 5) == 0) {
        s->reply->retry_after_ms = -1; /* a new answer (after a 100) */
        tg__ratelimit_clear(s->reply);
    } else if (tg__ratelimit_header(s->reply, line, (long long)time(NULL))) {
        /* kept */
    } else if (strncasecmp(line, "retry-after-ms:", 15) == 0) {
        char *end;
        long ms = strtol(line + 15, &end, 10);
        if (end != line + 15 && ms >= 0)
            s->reply->retry_after_ms = ms;
    } else if (strncasecmp(line, "retry-after:", 12) == 0 &&
               s->reply->retry_after_ms < 0) {
        s->reply->retry_after_ms =
            tg__retry_after_parse(line + 12, (long long)time(NULL));
    }
    return len;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether the loop must stop now: the cancel flag, or the deadline passed
 * (the flag is then raised to TG__CANCEL_BUDGET). */
static int stopped(tg__http *h)
{
    if (*h->cancel)
        return 1;
    if (h->deadline_ms > 0 && now_ms() >= h->deadline_ms) {
        *h->cancel = TG__CANCEL_BUDGET;
        return 1;
    }
    return 0;
}

/* One wait of the shared loop: curl's sockets and the runtime's
 * descriptor, at most SLICE_MS, then a step of the runtime when it has
 * turns, its descriptor is ready or its timeout passed (tg_runtime_fd's
 * contract). A runtime without turns is stepped too when it asks to be:
 * left unstepped, its timeout stays 0 (what its last turn left to close)
 * and every wait until the answer came was a poll that returned at once. */
static void wait_slice(tg__http *h, long max_ms, int with_curl)
{
    int t = tg_runtime_timeout(h->rt);
    long ms = max_ms < SLICE_MS ? max_ms : SLICE_MS;
    if (t >= 0 && t < ms)
        ms = t;
    if (ms < 0)
        ms = 0;
    int ready;
    if (with_curl) {
        struct curl_waitfd fd = {.fd = tg_runtime_fd(h->rt),
                                 .events = CURL_WAIT_POLLIN};
        (void)curl_multi_poll(h->multi, &fd, 1, (int)ms, NULL);
        ready = fd.revents != 0;
    } else {
        struct pollfd p = {.fd = tg_runtime_fd(h->rt), .events = POLLIN};
        ready = poll(&p, 1, (int)ms) > 0;
    }
    if (ready || (t >= 0 && t <= ms) || tg_runtime_pending(h->rt) > 0)
        tg_runtime_step(h->rt);
}

int tg__http_post(tg__http *h, const char *url,
                  const struct curl_slist *headers, const char *body,
                  size_t len, long timeout_ms, size_t max_body,
                  tg__http_data_fn on_data, void *data_ud,
                  tg__http_reply *reply, tg_error *err)
{
    memset(reply, 0, sizeof *reply);
    reply->retry_after_ms = -1;
    tg__ratelimit_clear(reply);
    CURL *e = h->easy;
    struct sink sink = {.reply = reply,
                        .max_body = max_body,
                        .easy = e,
                        .on_data = on_data,
                        .data_ud = data_ud};
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, reply->curl_msg);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK)
        return tg__loop_fail(err, TG_ENOMEM, "cannot start a request");
    int rc = 0, done = 0;
    while (!done) {
        if (stopped(h)) {
            rc = tg__loop_fail(err, TG_ECANCELED,
                               *h->cancel == TG__CANCEL_BUDGET
                                   ? "the time budget ran out while waiting "
                                     "for the model"
                                   : "canceled while waiting for the model");
            break;
        }
        int running = 0;
        (void)curl_multi_perform(h->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(h->multi, &left)) != NULL)
            if (m->msg == CURLMSG_DONE && m->easy_handle == e) {
                reply->curl_code = (int)m->data.result;
                done = 1;
            }
        if (!done)
            wait_slice(h, SLICE_MS, 1);
    }
    curl_multi_remove_handle(h->multi, e);
    if (rc != 0)
        return rc;
    if (sink.over)
        return tg__loop_fail(err, TG_ELIMIT,
                             "the model's answer passed %zu bytes", max_body);
    reply->data_failed = sink.data_failed;
    if (reply->curl_code == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &reply->status);
    else {
        reply->status = 0;
        if (reply->curl_msg[0] == '\0')
            snprintf(reply->curl_msg, sizeof reply->curl_msg, "%s",
                     curl_easy_strerror((CURLcode)reply->curl_code));
    }
    if (reply->body == NULL && (reply->body = calloc(1, 1)) == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    return 0;
}

int tg__http_wait(tg__http *h, long ms)
{
    long long end = now_ms() + ms;
    for (;;) {
        if (stopped(h))
            return TG_ECANCELED;
        long long left = end - now_ms();
        if (left <= 0)
            return 0;
        wait_slice(h, (long)left, 0);
    }
}

int tg__runtime_drain(tg__http *h)
{
    int canceled = 0;
    tg_runtime_flush(h->rt);
    while (tg_runtime_pending(h->rt) > 0) {
        if (stopped(h) && !canceled) {
            canceled = 1;
            if (*h->cancel == TG__CANCEL_BUDGET)
                (void)tg_runtime_cancel(h->rt, NULL, "system",
                                        "the agent loop's time budget ran out",
                                        NULL);
            else
                (void)tg_runtime_cancel(h->rt, NULL, "user",
                                        "the agent loop was interrupted", NULL);
        }
        if (tg_runtime_step(h->rt) == 0)
            break;
        wait_slice(h, SLICE_MS, 0);
    }
    return canceled || *h->cancel;
}
