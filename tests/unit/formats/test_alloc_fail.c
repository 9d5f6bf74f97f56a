/* SPDX-License-Identifier: MIT */
/*
 * test_alloc_fail.c - the failing-allocation loop of docs/design.md over parse
 * and render: run the operation once counting allocations (T), then for N
 * = 1..T run it again with the N-th allocation refused. Every run must end with
 * success or an error code (never a crash), and free everything it allocated.
 *
 * Two ways to refuse allocations:
 *   - plain glibc builds: this file defines malloc/calloc/realloc/free on top
 *     of glibc's __libc_* entry points, so every allocation of the library,
 *     of jansson and of libc itself (strdup) is counted and can fail;
 *   - sanitizer builds (ASan owns malloc there): only jansson's allocations,
 *     through json_set_alloc_funcs; the leak check is then LeakSanitizer's at
 *     exit plus the balance of jansson's allocations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "record.h"
#include "turn.h"

#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif
#if !defined(TG_TEST_ASAN) && defined(__GLIBC__)
#define TG_TEST_INTERPOSE 1
#endif

/* The allocator's bookkeeping; single-threaded test. */
static struct {
    int armed;    /* count and fail only while the operation runs */
    long fail_at; /* refuse the fail_at-th allocation; 0: never */
    long count;   /* allocation attempts while armed */
    long live;    /* allocations made while armed and not yet freed */
    int refused;  /* an allocation was refused in this run */
} A;

static int refuse(void)
{
    if (!A.armed)
        return 0;
    A.count++;
    if (A.fail_at != 0 && A.count == A.fail_at) {
        A.refused = 1;
        return 1;
    }
    return 0;
}

#ifdef TG_TEST_INTERPOSE
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
    if (refuse())
        return NULL;
    void *p = __libc_malloc(n);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

void *calloc(size_t n, size_t size)
{
    if (refuse())
        return NULL;
    void *p = __libc_calloc(n, size);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

void *realloc(void *old, size_t n)
{
    if (refuse())
        return NULL;
    void *p = __libc_realloc(old, n);
    if (old == NULL && p != NULL && A.armed)
        A.live++;
    return p;
}

void free(void *p)
{
    if (p != NULL && A.armed)
        A.live--;
    __libc_free(p);
}
#else
static void *json_malloc_counted(size_t n)
{
    if (refuse())
        return NULL;
    void *p = malloc(n);
    if (p != NULL && A.armed)
        A.live++;
    return p;
}

static void json_free_counted(void *p)
{
    if (p != NULL && A.armed)
        A.live--;
    free(p);
}
#endif

/* Object arguments: the fast path steps aside after two calls. */
static const char *const openai_response =
    "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
    "\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\",\\\"n\\\":[1,2]}"
    "\"}},"
    "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":"
    "\"grep\",\"arguments\":\"{\\\"pattern\\\":\"}},"
    "{\"id\":\"call_3\",\"type\":\"function\",\"function\":{\"name\":"
    "\"list_dir\",\"arguments\":{\"path\":\".\"}}}]},"
    "\"finish_reason\":\"tool_calls\"}]}";

/* Read by the fast path from start to end. */
static const char *const openai_fast =
    "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion\",\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
    "\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\",\\\"n\\\":[1,2."
    "5]}\"}},"
    "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":"
    "\"grep\",\"arguments\":\"{\\\"pattern\\\":\"}},"
    "{\"id\":\"call_\\u00e9\",\"type\":\"function\",\"function\":{\"name\":"
    "\"list_dir\",\"arguments\":\"\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"total_tokens\":9}}";

static const char *const openai_messages =
    "[{\"role\":\"user\",\"content\":\"hi\"},"
    "{\"role\":\"assistant\",\"tool_calls\":["
    "{\"id\":\"x1\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},"
    "{\"id\":\"x2\",\"function\":{\"name\":\"b\",\"arguments\":\"\"}},"
    "{\"id\":\"x1\",\"function\":{\"name\":\"c\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"x2\",\"content\":\"ok\"}]";

static const char *const native_lines =
    "{\"id\":\"n1\",\"tool\":\"read_file\",\"args\":{\"path\":\"README\"},"
    "\"context\":{\"cwd\":\"/tmp\"},\"skills\":[\"s\"],\"caller_id\":\"u\"}\n"
    "\n"
    "{\"id\":\"n2\",\"tool\":\"now\",\"args\":\"\",\"created_at\":"
    "\"2026-01-02T03:04:05Z\"}\n"
    "{\"id\":\"n3\",\"tool\":\"grep\",\"args\":\"{\\\"p\\\":\\\"x\\\"}\","
    "\"checksum\":\"sha256:00\"}\n";

static const char *const anthropic_messages =
    "[{\"role\":\"user\",\"content\":\"hi\"},"
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
    "\"x\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"a\",\"input\":"
    "{\"p\":[1,2.5,\"\\u00e9\"]}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"b\",\"input\":"
    "\"{}\"},"
    "{\"type\":\"tool_use\",\"name\":\"c\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_4\",\"name\":\"d\",\"input\":"
    "{}}]},"
    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
    "\"tool_use_id\":\"toolu_4\",\"content\":\"ok\"}]}]";

/* Calls without ids (hashed), answered by id and by name. */
static const char *const gemini_contents =
    "[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},"
    "{\"role\":\"model\",\"parts\":["
    "{\"functionCall\":{\"name\":\"a\",\"args\":{\"p\":[1,2.5]}}},"
    "{\"functionCall\":{\"id\":\"f1\",\"name\":\"b\",\"args\":{}}},"
    "{\"functionCall\":{\"name\":\"c\",\"args\":[]}},"
    "{\"functionCall\":{\"id\":\"f3\",\"name\":\"d\"}},"
    "{\"functionCall\":{\"name\":\"e\"}}]},"
    "{\"role\":\"user\",\"parts\":["
    "{\"functionResponse\":{\"id\":\"f3\",\"name\":\"d\",\"response\":{}}},"
    "{\"functionResponse\":{\"name\":\"e\",\"response\":{}}}]}]";

/* Answered and unanswered calls, an item id missing, string and object
 * arguments. */
static const char *const responses_items =
    "[{\"role\":\"user\",\"content\":\"hi\"},"
    "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c1\","
    "\"name\":\"a\",\"arguments\":\"{\\\"p\\\":[1,2.5]}\"},"
    "{\"type\":\"function_call\",\"call_id\":\"c2\",\"name\":\"b\","
    "\"arguments\":{\"x\":\"\\u00e9\"}},"
    "{\"type\":\"function_call\",\"id\":\"fc_3\",\"name\":\"c\"},"
    "{\"type\":\"function_call\",\"id\":\"fc_4\",\"call_id\":\"c4\","
    "\"name\":\"d\",\"arguments\":\"\"},"
    "{\"type\":\"function_call_output\",\"call_id\":\"c4\",\"output\":"
    "\"ok\"}]";

/* A batch: both id types, a progress token, a notification, JSON-RPC
 * errors. */
static const char *const mcp_batch =
    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"a\",\"arguments\":{\"p\":[1,2.5]},\"_meta\":"
    "{\"progressToken\":\"t\"}}},"
    "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/call\","
    "\"params\":{\"name\":\"b\"}},"
    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"c\",\"arguments\":{}}},"
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"},"
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
    "{\"name\":\"d\",\"arguments\":[1]}},"
    "7]";

static const char *const fenced_text =
    "Running:\n```bash\nls -la\n```\n"
    "```tool_call\n{\"tool\":\"read_file\",\"args\":{\"path\":\"a\"}}\n```\n"
    "```tool_call\n{\"tool\":\"grep\",\"args\":\"{\\\"p\\\":1}\"}\n```\n"
    "```json\n{}\n```\n"
    "```python\nprint(1)\n";

/* Arguments holding bytes no tool gets, bad_strings.c: calls without ids
 * (hashed from a document jansson cannot write), a bad key, a bad value
 * deep inside, an unpaired surrogate and a NUL. */
static const char *const gemini_bad_strings =
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
    "{\"functionCall\":{\"name\":\"a\",\"args\":{\"p\":\"ok\"}}},"
    "{\"functionCall\":{\"name\":\"b\",\"args\":{\"k\\udc00\":1}}},"
    "{\"functionCall\":{\"id\":\"f3\",\"name\":\"c\",\"args\":{\"d\":"
    "[{\"e\":\"x\\u0000\"}]}}},"
    "{\"functionCall\":{\"name\":\"d\",\"args\":{}}}]}}]}";

/* The same in JSON Lines, object and string arguments, a line with a bad
 * tool name (the input is refused). */
static const char *const lines_bad_strings =
    "{\"id\":\"c1\",\"tool\":\"a\",\"args\":{\"p\":\"\\ud800\"}}\n"
    "{\"id\":\"c2\",\"tool\":\"b\",\"args\":\"{\\\"p\\\":\\\"\\u0000\\\"}\"}\n"
    "{\"id\":\"c3\",\"tool\":\"c\",\"args\":{\"p\":1}}\n";

/* Parse, give every call a result, render to both formats, free. Returns 0
 * or the first error; *out (when not NULL) receives the openai-chat text. */
static int operation(const char *text, const char *format, char **out)
{
    static const char *const targets[] = {"openai-chat",      "toolgate",
                                          "anthropic",        "gemini",
                                          "openai-responses", "mcp"};
    tg_turn *turn = NULL;
    tg_error err;
    int rc = tg_turn_parse(text, strlen(text), format, "in", &turn, &err);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < turn->n; i++) {
        const tg_call *c = turn->calls[i];
        tg_result *r;
        if (c->pre_error_code != NULL)
            r = tg__result_error(
                c, TG_EXECUTION_NOT_STARTED, c->pre_error_code, NULL, "%s",
                c->pre_error_message ? c->pre_error_message : "");
        else if (i % 3 == 1) {
            /* a failed command's output, rendered as text in the envelope */
            json_t *d =
                json_pack("{s:i, s:s, s:s}", "exit_status", 1, "stdout",
                          "FAILED t.py\n", "stderr", "warning\n"); /* new ref */
            r = d ? tg__result_error(c, TG_EXECUTION_FINISHED, "EXIT_STATUS", d,
                                     "command exited with status 1")
                  : NULL;
            if (r != NULL)
                r->untrusted = true;
        } else if (i % 2 == 0)
            r = tg__result_success(c, json_pack("{s:i, s:s}", "ok", (int)i,
                                                "text", "line\n\"q\""));
        else
            r = tg__result_success(c, json_string("plain text result"));
        if (r == NULL) {
            rc = TG_ENOMEM;
            goto done;
        }
        if ((rc = tg__turn_set_result(turn, i, r)) != 0)
            goto done;
    }
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
        char *s = NULL;
        size_t len = 0;
        if ((rc = tg_turn_render(turn, targets[k], &s, &len, &err)) != 0)
            goto done;
        assert_int_equal(strlen(s), len);
        if (k == 0 && out != NULL)
            *out = s;
        else
            tg_free(s);
    }
done:
    tg_turn_free(turn);
    return rc;
}

/* A run that completed despite a refused allocation may differ from the
 * clean run only where an allocation failure is indistinguishable from bad
 * input: jansson reports some out-of-memory conditions inside an arguments
 * string as a syntax error (the call becomes MALFORMED_ARGUMENTS), and a
 * pre-error whose message could not be copied keeps its code with an empty
 * message. Returns 1 (a degraded run), or fails the test. */
static int check_degraded(const char *clean, const char *out, long n)
{
    json_error_t jerr;
    json_t *want = json_loads(clean, 0, &jerr); /* new ref */
    json_t *got = json_loads(out, 0, &jerr);    /* new ref */
    assert_non_null(want);
    if (got == NULL || json_array_size(got) != json_array_size(want))
        fail_msg("allocation %ld: output changed shape:\n%s", n, out);
    for (size_t i = 0; i < json_array_size(got); i++) {
        const json_t *w = json_array_get(want, i); /* borrowed */
        const json_t *g = json_array_get(got, i);  /* borrowed */
        if (json_equal(w, g))
            continue;
        const char *content = json_string_value(json_object_get(g, "content"));
        int ok = json_equal(json_object_get(w, "tool_call_id"),
                            json_object_get(g, "tool_call_id")) &&
                 content != NULL &&
                 (strstr(content, "\"MALFORMED_ARGUMENTS\"") != NULL ||
                  strstr(content, "{\"error\":{\"message\":\"\",") != NULL);
        if (!ok)
            fail_msg("allocation %ld: result %zu differs:\n%s\nclean:\n%s", n,
                     i, out, clean);
    }
    json_decref(want);
    json_decref(got);
    return 1;
}

static void arm(long fail_at)
{
    A.count = 0;
    A.live = 0;
    A.refused = 0;
    A.fail_at = fail_at;
    A.armed = 1;
}

static void failing_loop(const char *text, const char *format)
{
#ifndef TG_TEST_INTERPOSE
    json_set_alloc_funcs(json_malloc_counted, json_free_counted);
#endif
    /* Warm-up outside the count: one-time initialisation (jansson's hash
     * seed) must not look like a leak. */
    char *clean = NULL;
    assert_int_equal(operation(text, format, &clean), 0);

    arm(0);
    int rc = operation(text, format, NULL);
    A.armed = 0;
    assert_int_equal(rc, 0);
    long total = A.count;
    assert_true(total > 10);
    assert_int_equal(A.live, 0);

    long ok = 0, enomem = 0, other = 0, degraded = 0;
    for (long n = 1; n <= total; n++) {
        arm(n);
        char *out = NULL;
        rc = operation(text, format, &out);
        if (rc == 0 && strcmp(out, clean) != 0)
            degraded += check_degraded(clean, out, n);
        tg_free(out);
        A.armed = 0;
        if (A.live != 0)
            fail_msg("%s: refusing allocation %ld of %ld leaks %ld "
                     "allocation(s) (rc %s)",
                     format, n, total, A.live, tg_err_name(rc));
        assert_true(A.refused);
        if (rc == 0)
            ok++;
        else if (rc == TG_ENOMEM)
            enomem++;
        else {
            /* jansson's lexer reports some allocation failures as syntax
             * errors; anything but TG_EPARSE would be a wrong code. */
            if (rc != TG_EPARSE)
                fail_msg("%s: refusing allocation %ld gave %s", format, n,
                         tg_err_name(rc));
            other++;
        }
    }
    print_message("[ alloc    ] %s: %ld allocations; refused one at a time: "
                  "%ld ENOMEM, %ld EPARSE, %ld completed (%ld of them with a "
                  "call turned into an error)\n",
                  format, total, enomem, other, ok, degraded);
    assert_true(enomem > 0);
    tg_free(clean);
#ifndef TG_TEST_INTERPOSE
    json_set_alloc_funcs(malloc, free);
#endif
}

static void test_openai_response(void **state)
{
    (void)state;
    failing_loop(openai_response, "auto");
}

static void test_openai_fast(void **state)
{
    (void)state;
    tg_turn *t = tg__turn_new("openai-chat");
    assert_int_equal(
        tg__format_openai_chat.parse_fast(t, openai_fast, strlen(openai_fast)),
        1);
    assert_int_equal(t->n, 3);
    tg_turn_free(t);
    failing_loop(openai_fast, "auto");
}

static void test_openai_messages(void **state)
{
    (void)state;
    failing_loop(openai_messages, "openai-chat");
}

static void test_native_lines(void **state)
{
    (void)state;
    failing_loop(native_lines, "auto");
}

static void test_anthropic_messages(void **state)
{
    (void)state;
    failing_loop(anthropic_messages, "auto");
}

static void test_gemini_contents(void **state)
{
    (void)state;
    failing_loop(gemini_contents, "auto");
}

static void test_responses_items(void **state)
{
    (void)state;
    failing_loop(responses_items, "auto");
}

static void test_mcp_batch(void **state)
{
    (void)state;
    failing_loop(mcp_batch, "auto");
}

static void test_fenced_text(void **state)
{
    (void)state;
    failing_loop(fenced_text, "fenced");
}

static void test_bad_strings(void **state)
{
    (void)state;
    failing_loop(gemini_bad_strings, "auto");
    failing_loop(lines_bad_strings, "auto");
}

static const char *const anthropic_fast =
    "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
    "\"content\":[{\"type\":\"text\",\"text\":\"x\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_\\u00e9\",\"name\":\"a\",\"input\":"
    "{\"p\":[1,2,\"\xc3\xa9\"],\"q\":{\"r\":null}}},"
    "{\"type\":\"server_tool_use\",\"id\":\"s\",\"name\":\"w\",\"input\":"
    "{\"k\":\"v\"}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"b\",\"input\":null},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_3\",\"name\":\"c\",\"input\":{}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":1}}";

static const char *const responses_fast =
    "{\"id\":\"resp_1\",\"object\":\"response\",\"output\":["
    "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]},"
    "{\"type\":\"function_call\",\"id\":\"fc_\\u00e9\",\"call_id\":\"c1\","
    "\"name\":\"a\",\"arguments\":\"{\\\"p\\\":[1,2.5]}\"},"
    "{\"type\":\"function_call\",\"call_id\":\"c\\u00e92\",\"name\":\"b\","
    "\"arguments\":\"{bad\"},"
    "{\"type\":\"function_call\",\"id\":\"fc_3\",\"call_id\":\"c3\","
    "\"name\":\"c\",\"arguments\":\"\"}],\"usage\":{\"x\":1}}";

static void test_anthropic_fast(void **state)
{
    (void)state;
    tg_turn *t = tg__turn_new("anthropic");
    assert_int_equal(tg__format_anthropic.parse_fast(t, anthropic_fast,
                                                     strlen(anthropic_fast)),
                     1);
    assert_int_equal(t->n, 3);
    tg_turn_free(t);
    failing_loop(anthropic_fast, "auto");
}

static void test_responses_fast(void **state)
{
    (void)state;
    tg_turn *t = tg__turn_new("openai-responses");
    assert_int_equal(tg__format_openai_responses.parse_fast(
                         t, responses_fast, strlen(responses_fast)),
                     1);
    assert_int_equal(t->n, 3);
    tg_turn_free(t);
    failing_loop(responses_fast, "auto");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_anthropic_fast),
        cmocka_unit_test(test_responses_fast),
        cmocka_unit_test(test_openai_fast),
        cmocka_unit_test(test_openai_response),
        cmocka_unit_test(test_openai_messages),
        cmocka_unit_test(test_native_lines),
        cmocka_unit_test(test_anthropic_messages),
        cmocka_unit_test(test_gemini_contents),
        cmocka_unit_test(test_responses_items),
        cmocka_unit_test(test_mcp_batch),
        cmocka_unit_test(test_fenced_text),
        cmocka_unit_test(test_bad_strings),
    };
#ifdef TG_TEST_INTERPOSE
    print_message(
        "[ alloc    ] every allocation can fail (malloc interposed)\n");
#else
    print_message("[ alloc    ] sanitizer build: jansson allocations fail\n");
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
