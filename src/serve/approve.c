/* SPDX-License-Identifier: MIT */
/*
 * approve.c - a policy `ask` put to the MCP client's user. The runtime
 * asks asynchronously (tg_runtime_set_ask) and the call waits, holding no
 * slot:
 *   - 2025-06-18 / 2025-11-25, a client that declared `elicitation`: an
 *     elicitation/create request on the call's own stream (else the
 *     session's); accept runs the call (with "always" checked, every call
 *     of the tool for this caller), decline or cancel denies it;
 *   - 2026-07-28, a request whose clientCapabilities has `elicitation`:
 *     the call is answered with an InputRequiredResult carrying the
 *     question and a requestState - the caller, tool, arguments and an
 *     expiry under an HMAC keyed by this server - and the client's retry,
 *     with inputResponses and that state, runs the call once the state
 *     checks out (a tampered or stale state is -32602);
 *   - any other client: the call ends denied, saying approval was needed
 *     and that the client cannot ask its user.
 * An approval is bound to the call's checksum (or to the tool, "always")
 * and to its caller, as at the terminal (src/exec/approval.c).
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hex.h"
#include "server.h"
#include "tasks.h"

#define INPUT_KEY "toolgate_approval"
#define ARGS_SHOWN 2000

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

srv_req *srv_req_by_call(tg__srv *srv, const char *call_id)
{
    for (srv_session *s = srv->sessions; s != NULL; s = s->next)
        for (srv_req *r = s->reqs; r != NULL; r = r->snext)
            if (strcmp(r->call_id, call_id) == 0)
                return r;
    return NULL;
}

static bool can_elicit(const json_t *caps)
{
    return json_is_object(json_object_get(caps, "elicitation"));
}

/* The question and the form of an elicitation about call. New ref. */
static json_t *question(const tg_call *call, const char *reason)
{
    const char *args = tg_call_args_json(call);
    char msg[ARGS_SHOWN + 1024];
    size_t al = args != NULL ? strlen(args) : 0;
    snprintf(msg, sizeof msg,
             "toolgate's policy asks before the tool '%s' runs (%s). "
             "Arguments: %.*s%s. Accept to run it; check \"always\" to "
             "allow every call of this tool from this client.",
             tg_call_tool(call), reason != NULL ? reason : "ask",
             (int)(al > ARGS_SHOWN ? ARGS_SHOWN : al),
             args != NULL ? args : "{}", al > ARGS_SHOWN ? "..." : "");
    /* a cut in the middle of a character is no text */
    json_t *m = json_string(msg);
    if (m == NULL)
        m = json_string("toolgate's policy asks before this tool runs.");
    return json_pack(
        "{s:o,s:{s:s,s:{s:{s:s,s:s,s:s,s:b}}}}", "message", m,
        "requestedSchema", "type", "object", "properties", "always", "type",
        "boolean", "title", "Always", "description",
        "Allow every call of this tool from this client", "default", 0);
}

/* The answer in an ElicitResult: YES, ALWAYS, NO; -1 when it is none. */
static int decision(const json_t *result, const char **detail)
{
    const char *action = json_string_value(json_object_get(result, "action"));
    if (action == NULL)
        return -1;
    if (strcmp(action, "accept") == 0) {
        *detail = "approved by the MCP client's user";
        return json_is_true(json_object_get(json_object_get(result, "content"),
                                            "always"))
                   ? TG_APPROVAL_ALWAYS
                   : TG_APPROVAL_YES;
    }
    if (strcmp(action, "decline") == 0 || strcmp(action, "cancel") == 0) {
        *detail = strcmp(action, "decline") == 0
                      ? "the MCP client's user declined"
                      : "the MCP client's user canceled the question";
        return TG_APPROVAL_NO;
    }
    return -1;
}

int srv_req_send_request(srv_req *r, const char *text)
{
    if (srv_send(r->srv, r->out, r->version, NULL, SRV_MSG_REQUEST, text,
                 strlen(text)) == 0)
        return 0;
    return srv_send(r->srv, r->s->notify, r->version, NULL, SRV_MSG_REQUEST,
                    text, strlen(text));
}

static void on_ask(void *ud, tg_ask *ask, const tg_call *call,
                   const char *reason)
{
    tg__srv *srv = ud;
    srv_req *r = srv_req_by_call(srv, tg_call_id(call));
    if (r == NULL)
        r = srv_task_req_by_call(srv, tg_call_id(call));
    if (r == NULL) {
        tg_ask_answer(ask, TG_APPROVAL_NO, "no MCP client to ask", NULL);
        return;
    }
    if (r->retry_answer >= 0) {
        tg_ask_answer(ask, (tg_approval)r->retry_answer,
                      r->retry_answer == TG_APPROVAL_NO
                          ? "the MCP client's user declined"
                          : "approved by the MCP client's user",
                      NULL);
        return;
    }
    if (!can_elicit(r->caps)) {
        tg_ask_answer(ask, TG_APPROVAL_NO,
                      "the MCP client cannot ask its user (it declared no "
                      "elicitation capability)",
                      NULL);
        return;
    }
    if (r->detached && r->version == TG_MCP_V2026_07_28) {
        /* its request was answered with the task: no retry can come */
        tg_ask_answer(ask, TG_APPROVAL_NO,
                      "the call runs as a task, and under 2026-07-28 only "
                      "its request could have asked the MCP client's user",
                      NULL);
        return;
    }
    json_t *q = question(call, reason);
    if (r->version == TG_MCP_V2026_07_28) {
        /* No server request in 2026-07-28: the call is answered with the
         * question, and the client's retry brings the answer. */
        r->input_required = true;
        json_decref(r->input);
        r->input = q;
        tg_ask_answer(ask, TG_APPROVAL_NO,
                      "asked the MCP client's user (input required)", NULL);
        return;
    }
    char id[48];
    snprintf(id, sizeof id, "tg-ask-%llu",
             (unsigned long long)++srv->nrequests);
    if (r->detached && q != NULL)
        /* a task's question names its task (2025-11-25) */
        json_object_set_new(q, "_meta",
                            json_pack("{s:{s:s}}",
                                      "io.modelcontextprotocol/related-task",
                                      "taskId", srv_task_id(r)));
    json_t *msg = json_pack("{s:s,s:s,s:s,s:o}", "jsonrpc", "2.0", "id", id,
                            "method", "elicitation/create", "params", q);
    char *text = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
    json_decref(msg);
    if (r->detached) {
        /* The task's request was answered: the question waits with the
         * task, for its session and its tasks/result. */
        r->ask = ask;
        r->ask_id = json_string(id);
        if (text == NULL || r->ask_id == NULL || srv_task_ask(r, text) != 0) {
            r->ask = NULL;
            json_decref(r->ask_id);
            r->ask_id = NULL;
            tg_ask_answer(ask, TG_APPROVAL_NO,
                          "the MCP client's user could not be asked", NULL);
        }
        free(text);
        return;
    }
    int sent = text != NULL ? srv_req_send_request(r, text) : -1;
    free(text);
    if (sent != 0) {
        tg_ask_answer(ask, TG_APPROVAL_NO,
                      "the MCP client's user could not be reached", NULL);
        return;
    }
    r->ask = ask;
    r->ask_id = json_string(id);
}

void srv_client_response(tg__srv *srv, srv_session *s, const json_t *id,
                         const json_t *result, bool is_error)
{
    if (srv_elicit_response(s, id, result, is_error))
        return; /* a source's question, forwarded (elicit.c) */
    srv_req *r = NULL;
    for (r = s->reqs; id != NULL && r != NULL; r = r->snext)
        if (r->ask != NULL && json_equal(r->ask_id, id))
            break;
    if (r == NULL && id != NULL) {
        /* a task's question: answered by a session of its caller */
        r = srv_task_req_by_ask(srv, id);
        if (r != NULL && (r->ask == NULL || strcmp(srv_session_caller(r->s),
                                                   srv_session_caller(s)) != 0))
            r = NULL;
    }
    if (r != NULL) {
        const char *detail = "the MCP client answered the question with an "
                             "error";
        int d = is_error ? TG_APPROVAL_NO : decision(result, &detail);
        if (d < 0) {
            d = TG_APPROVAL_NO;
            detail = "the MCP client's answer was not an ElicitResult";
        }
        tg_ask_answer(r->ask, (tg_approval)d, detail, NULL);
        r->ask = NULL;
        json_decref(r->ask_id);
        r->ask_id = NULL;
        srv_kick(r->srv);
    }
}

void srv_approval_drop(srv_req *r)
{
    if (r->ask != NULL)
        tg_ask_answer(r->ask, TG_APPROVAL_NO, "the request ended", NULL);
    r->ask = NULL;
    json_decref(r->ask_id);
    r->ask_id = NULL;
}

/* ------------------------------------------------------------ MRTR */

/* The HMAC of the state's parts, as 64 hex digits in out[65]. */
static void state_mac(const tg__srv *srv, const char *caller, const char *tool,
                      const char *args, const char *park, long long expiry,
                      char *out)
{
    /* one-shot HMAC() over "expiry\ncaller\0tool\0park\0args" */
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    tg__buf b;
    tg__buf_init(&b, 0);
    if (tg__buf_printf(&b, "%lld\n", expiry) == 0 &&
        tg__buf_append(&b, caller, strlen(caller) + 1) == 0 &&
        tg__buf_append(&b, tool, strlen(tool) + 1) == 0 &&
        tg__buf_append(&b, park, strlen(park) + 1) == 0 &&
        tg__buf_append(&b, args, strlen(args)) == 0 &&
        HMAC(EVP_sha256(), srv->state_key, (int)sizeof srv->state_key,
             (const unsigned char *)b.data, b.len, mac, &ml) == NULL)
        ml = 0;
    tg__buf_cleanup(&b);
    if (ml < 32) /* HMAC failed: a MAC nothing matches */
        memset(mac, 0, 32);
    tg__hex_encode(mac, 32, out);
}

void srv_state_make(const srv_req *r, const char *park, long long expiry,
                    char *out, size_t cap)
{
    const tg_call *call = tg_turn_call(r->turn, 0);
    const char *args = tg_call_args_json(call);
    json_t *parsed = args != NULL ? json_loads(args, 0, NULL) : NULL;
    char *canon = parsed != NULL
                      ? json_dumps(parsed, JSON_COMPACT | JSON_SORT_KEYS)
                      : NULL;
    json_decref(parsed);
    char mac[65];
    state_mac(r->srv, srv_session_caller(r->s), tg_call_tool(call),
              canon != NULL ? canon : "{}", park, expiry, mac);
    free(canon);
    if (*park != '\0')
        snprintf(out, cap, "%lld.%s.%s", expiry, park, mac);
    else
        snprintf(out, cap, "%lld.%s", expiry, mac);
}

long long srv_wall_ms(void)
{
    return wall_ms();
}

/* The arguments of a tools/call as compact JSON (caller frees). */
static char *args_text(const json_t *params)
{
    const json_t *a = json_object_get(params, "arguments");
    if (a == NULL)
        return strdup("{}");
    return json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
}

/* Reads a state: "<expiry>.<mac>" or "<expiry>.<park>.<mac>" (park: 32
 * hex digits into park[33], else ""), nothing after the MAC. */
static bool state_parse(const char *st, long long *expiry, char *park,
                        char *mac)
{
    int end = 0, pend = 0;
    park[0] = '\0';
    if (st == NULL || sscanf(st, "%lld.%n", expiry, &end) != 1 || end == 0)
        return false;
    const char *rest = st + end;
    if (sscanf(rest, "%32[0-9a-f].%n", park, &pend) == 1 && pend == 33 &&
        strlen(park) == SRV_PARK_LEN)
        rest += pend;
    else
        park[0] = '\0';
    end = 0;
    return sscanf(rest, "%64[0-9a-f]%n", mac, &end) == 1 && end == 64 &&
           rest[end] == '\0';
}

int srv_approval_retry(srv_ctx *c, srv_req *r)
{
    r->retry_answer = -1;
    r->retry_park[0] = '\0';
    const json_t *state = json_object_get(srv_params(c), "requestState");
    const json_t *inputs = json_object_get(srv_params(c), "inputResponses");
    if (inputs != NULL && !json_is_object(inputs)) {
        srv_send_error(
            c->srv, c->out, c->version, c->method, c->id, TG_RPC_INVALID_PARAMS,
            "Invalid params: inputResponses must be an object", NULL);
        return -1;
    }
    /* Answers without the state this server made bind to no question: the
     * call is asked again (SEP-2322 re-requests what is missing). */
    if (state == NULL)
        return 0;
    long long expiry = 0;
    char mac[65], want[65], park[SRV_PARK_LEN + 1];
    const char *tool =
        json_string_value(json_object_get(srv_params(c), "name"));
    char *args = args_text(srv_params(c));
    bool ok = tool != NULL && args != NULL &&
              state_parse(json_string_value(state), &expiry, park, mac);
    if (ok) {
        state_mac(c->srv, srv_session_caller(c->s), tool, args, park, expiry,
                  want);
        ok = CRYPTO_memcmp(mac, want, 64) == 0 && expiry >= wall_ms();
    }
    free(args);
    if (!ok) {
        srv_send_error(c->srv, c->out, c->version, c->method, c->id,
                       TG_RPC_INVALID_PARAMS,
                       "Invalid params: requestState is not one this server "
                       "made for this caller, tool and arguments, or it has "
                       "expired",
                       NULL);
        return -1;
    }
    if (park[0] != '\0') {
        /* a call parked on a source's question (elicit.c): the retry
         * re-attaches to it; it was approved already, if asked */
        memcpy(r->retry_park, park, sizeof park);
        return 0;
    }
    const char *detail = NULL;
    const json_t *answer = json_object_get(inputs, INPUT_KEY);
    r->retry_answer = json_is_object(answer) ? decision(answer, &detail) : -1;
    return 0;
}

void srv_approval_input_required(srv_req *r)
{
    char state[192];
    srv_state_make(r, "", wall_ms() + SRV_STATE_TTL_MS, state, sizeof state);
    json_t *res =
        json_pack("{s:s,s:{s:{s:s,s:O}},s:s}", "resultType", "input_required",
                  "inputRequests", INPUT_KEY, "method", "elicitation/create",
                  "params", r->input, "requestState", state);
    srv_send_result(r->srv, r->out, r->version, "tools/call", r->id, res);
}

void srv_approvals_init(tg__srv *srv)
{
    srv_random_bytes(srv->state_key, sizeof srv->state_key);
    tg_runtime_set_ask(srv->rt, on_ask, srv);
    srv_elicits_init(srv);
}
