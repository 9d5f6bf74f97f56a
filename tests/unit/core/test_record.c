/* SPDX-License-Identifier: MIT */
/*
 * test_record.c - the call and result records (record.c) and the turn
 * container (turn.c): payload shapes of docs/records.md for every outcome,
 * JSON round trips, forward-compatible outcome names, argument decoding
 * (MALFORMED_ARGUMENTS, "" as {}, duplicate keys, bytes no tool gets),
 * duplicate call ids, the limits on ids, tool names and caller ids, and the
 * public getters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jtape.h"
#include "record.h"
#include "toolgate.h"
#include "turn.h"

static json_t *load(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    return v;
}

/* Asserts that v (borrowed) equals the JSON text want. */
static void assert_json(const json_t *v, const char *want)
{
    json_t *w = load(want); /* new ref */
    if (!json_equal((json_t *)v, w)) {
        char *got =
            json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(w);
        fail_msg("got %s, want %s", got ? got : "(null)", want);
    }
    json_decref(w);
}

static tg_call *new_call(const char *id, const char *tool, const char *args)
{
    tg_call *c = tg__call_new(id, tool, "toolgate");
    assert_non_null(c);
    if (args != NULL)
        assert_int_equal(tg__call_set_args_text(c, args, strlen(args)), 0);
    return c;
}

/* ------------------------------------------------------------ payloads */

static void test_success_payload(void **state)
{
    (void)state;
    tg_call *c = new_call("call_1", "read_file", "{\"path\":\"a\"}");
    tg_result *r = tg__result_success(c, load("{\"text\":\"hi\",\"n\":[1]}"));
    assert_non_null(r);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_SUCCESS);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_FINISHED);
    assert_json(tg__result_payload(r), "{\"text\":\"hi\",\"n\":[1]}");
    assert_string_equal(tg_result_id(r), "call_1");
    assert_string_equal(tg_result_tool(r), "read_file");
    assert_int_equal(tg_result_succeeded(r), 1);
    assert_int_equal(tg_result_is_error(r), 0);
    assert_string_equal(tg_result_data_json(r), tg_result_payload_json(r));
    json_t *data = load(tg_result_data_json(r)); /* new ref */
    assert_json(data, "{\"n\":[1],\"text\":\"hi\"}");
    json_decref(data);
    assert_null(tg_result_error_message(r));
    assert_null(tg_result_error_code(r));
    assert_int_equal(tg_result_exit_status(r), -1);
    assert_int_equal(tg_result_replayed(r), 0);
    assert_true(r->completed_at > 0);
    tg__result_free(r);

    /* Any JSON value is a success payload, a scalar too. */
    r = tg__result_success(c, json_string("plain"));
    assert_string_equal(tg_result_payload_json(r), "\"plain\"");
    assert_string_equal(tg_result_data_json(r), "\"plain\"");
    tg__result_free(r);
    /* NULL payload (failed allocation upstream) is NULL, not a crash. */
    assert_null(tg__result_success(c, NULL));
    tg__call_free(c);
}

static void test_error_payload(void **state)
{
    (void)state;
    tg_call *c = new_call("c", "t", NULL);
    tg_result *r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, "UNKNOWN_TOOL",
                                    NULL, "no tool '%s'", "t");
    assert_non_null(r);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_ERROR);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    assert_json(tg__result_payload(r),
                "{\"error\":{\"message\":\"no tool 't'\",\"code\":"
                "\"UNKNOWN_TOOL\"}}");
    assert_int_equal(tg_result_succeeded(r), 0);
    assert_int_equal(tg_result_is_error(r), 1);
    assert_null(tg_result_data_json(r));
    assert_string_equal(tg_result_error_message(r), "no tool 't'");
    assert_string_equal(tg_result_error_code(r), "UNKNOWN_TOOL");
    assert_string_equal(tg__result_code(r), "UNKNOWN_TOOL");
    tg__result_free(r);

    json_t *details = load("[{\"path\":\"/a\",\"keyword\":\"type\","
                           "\"message\":\"must be string\"}]"); /* new ref */
    r = tg__result_error(c, TG_EXECUTION_NOT_STARTED, "INVALID_ARGUMENTS",
                         details, "bad");
    assert_json(
        tg__result_payload(r),
        "{\"error\":{\"message\":\"bad\",\"code\":\"INVALID_ARGUMENTS\","
        "\"details\":[{\"path\":\"/a\",\"keyword\":\"type\","
        "\"message\":\"must be string\"}]}}");
    tg__result_free(r);

    /* No code: INTERNAL. */
    r = tg__result_error(c, TG_EXECUTION_STARTED, NULL, NULL, "boom");
    assert_string_equal(tg_result_error_code(r), "INTERNAL");
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
    tg__result_free(r);
    tg__call_free(c);
}

static void test_canceled_timeout_denied_payloads(void **state)
{
    (void)state;
    tg_call *c = new_call("c", "shell", NULL);

    tg_result *r =
        tg__result_canceled(c, TG_EXECUTION_STARTED, "policy", "hook vetoed");
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_CANCELED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
    assert_json(
        tg__result_payload(r),
        "{\"canceled\":{\"reason\":\"hook vetoed\",\"by\":\"policy\"}}");
    assert_string_equal(tg_result_error_message(r), "hook vetoed");
    assert_null(tg_result_error_code(r));
    assert_null(tg_result_data_json(r));
    assert_int_equal(tg_result_is_error(r), 1);
    tg__result_free(r);

    r = tg__result_canceled(c, TG_EXECUTION_NOT_STARTED, NULL, NULL);
    assert_json(tg__result_payload(r),
                "{\"canceled\":{\"reason\":\"canceled\",\"by\":\"user\"}}");
    tg__result_free(r);

    r = tg__result_timeout(c, 1500);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_TIMEOUT);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_STARTED);
    assert_json(tg__result_payload(r), "{\"timeout\":{\"durationMs\":1500}}");
    assert_string_equal(tg_result_error_message(r), "timed out after 1500 ms");
    assert_null(tg_result_error_code(r));
    tg__result_free(r);

    r = tg__result_denied(c, "not allowed");
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_DENIED);
    assert_int_equal(tg_result_execution(r), TG_EXECUTION_NOT_STARTED);
    assert_json(tg__result_payload(r),
                "{\"denied\":{\"tool\":\"shell\",\"reason\":\"not allowed\"}}");
    assert_string_equal(tg_result_error_message(r), "not allowed");
    tg__result_free(r);
    tg__call_free(c);
}

static void test_outcome_names(void **state)
{
    (void)state;
    static const char *names[] = {"success", "error", "canceled", "timeout",
                                  "denied"};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(tg_outcome_name(i), names[i]);
        assert_int_equal(tg_outcome_from_name(names[i]), i);
    }
    assert_string_equal(tg_outcome_name(99), "error");
    assert_int_equal(tg_outcome_from_name("exploded"), TG_OUTCOME_ERROR);
    assert_int_equal(tg_outcome_from_name(NULL), TG_OUTCOME_ERROR);
    assert_string_equal(tg_execution_name(0), "not_started");
    assert_string_equal(tg_execution_name(1), "started");
    assert_string_equal(tg_execution_name(2), "finished");
}

/* ------------------------------------------------------------ result JSON */

static void test_result_round_trip(void **state)
{
    (void)state;
    tg_call *c = new_call("call_9", "cmd", "{}");
    tg_result *r = tg__result_error(c, TG_EXECUTION_FINISHED, "EXIT_STATUS",
                                    NULL, "exited with status 3");
    r->duration_ms = 12.5;
    r->exit_status = 3;
    r->completed_at = 1795321029123LL;
    r->replayed = true;
    r->content = load("[{\"type\":\"text\",\"text\":\"out\"}]");
    r->artifact = load("{\"id\":\"art_1\",\"bytes\":10}");

    /* The record's text, byte for byte: members in docs/records.md's order. */
    char *text = tg_result_to_json(r);
    assert_non_null(text);
    assert_string_equal(
        text, "{\"id\":\"call_9\",\"tool\":\"cmd\",\"outcome\":\"error\","
              "\"execution\":\"finished\",\"payload\":{\"error\":{"
              "\"message\":\"exited with status 3\",\"code\":"
              "\"EXIT_STATUS\"}},\"content\":[{\"type\":\"text\","
              "\"text\":\"out\"}],\"artifact\":{\"id\":\"art_1\","
              "\"bytes\":10},\"duration_ms\":12.5,\"exit_status\":3,"
              "\"completed_at\":\"2026-11-22T04:17:09.123Z\","
              "\"replayed\":true}");
    json_t *j = load(text); /* new ref */
    tg_free(text);

    tg_result *back = NULL;
    tg_error err = {0};
    assert_int_equal(tg__result_from_json(j, &back, &err), 0);
    assert_string_equal(back->id, "call_9");
    assert_string_equal(back->tool, "cmd");
    assert_int_equal(back->outcome, TG_OUTCOME_ERROR);
    assert_int_equal(back->execution, TG_EXECUTION_FINISHED);
    assert_true(json_equal(tg__result_payload(back), tg__result_payload(r)));
    assert_true(json_equal(back->content, r->content));
    assert_true(json_equal(back->artifact, r->artifact));
    assert_true(back->duration_ms == 12.5);
    assert_int_equal(back->exit_status, 3);
    assert_int_equal(back->completed_at, 1795321029123LL);
    assert_true(back->replayed);
    text = tg_result_to_json(back);
    json_t *again = load(text); /* new ref */
    tg_free(text);
    assert_true(json_equal(j, again));
    json_decref(again);
    json_decref(j);
    tg__result_free(back);
    tg__result_free(r);

    /* A success without exit status writes nulls. */
    r = tg__result_success(c, json_integer(5));
    text = tg_result_to_json(r);
    j = load(text);
    tg_free(text);
    assert_true(json_is_null(json_object_get(j, "exit_status")));
    assert_true(json_is_null(json_object_get(j, "content")));
    assert_true(json_is_null(json_object_get(j, "artifact")));
    assert_null(json_object_get(j, "replayed"));
    assert_int_equal(tg__result_from_json(j, &back, &err), 0);
    assert_int_equal(back->exit_status, -1);
    assert_int_equal(back->outcome, TG_OUTCOME_SUCCESS);
    assert_null(back->content);
    tg__result_free(back);
    json_decref(j);
    tg__result_free(r);
    tg__call_free(c);
}

static void test_result_unknown_outcome(void **state)
{
    (void)state;
    json_t *j = load("{\"id\":\"a\",\"tool\":\"t\",\"outcome\":\"exploded\","
                     "\"payload\":{\"exploded\":{}}}"); /* new ref */
    tg_result *r = NULL;
    tg_error err = {0};
    assert_int_equal(tg__result_from_json(j, &r, &err), 0);
    assert_int_equal(tg_result_outcome(r), TG_OUTCOME_ERROR);
    assert_int_equal(tg_result_is_error(r), 1);
    assert_non_null(tg_result_error_message(r));
    tg__result_free(r);
    json_decref(j);

    /* Missing fields are a parse error, not a crash. */
    static const char *bad[] = {"{\"tool\":\"t\",\"payload\":1}",
                                "{\"id\":\"a\",\"payload\":1}",
                                "{\"id\":\"a\",\"tool\":\"t\"}", "[]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = load(bad[i]);
        r = (tg_result *)&err; /* must be reset */
        assert_int_equal(tg__result_from_json(j, &r, &err), TG_EPARSE);
        assert_null(r);
        assert_int_equal(err.code, TG_EPARSE);
        json_decref(j);
    }
}

/* ------------------------------------------------------------ calls */

static void test_args_decoding(void **state)
{
    (void)state;
    static const char *malformed[] = {"[1,2]",      "{bad", "42",
                                      "\"s\"",      "null", "{\"a\":1,\"a\":2}",
                                      "{\"a\":1} x"};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        tg_call *c = new_call("c1", "t", malformed[i]);
        if (c->pre_error_code == NULL ||
            strcmp(c->pre_error_code, "MALFORMED_ARGUMENTS") != 0)
            fail_msg("'%s' not MALFORMED_ARGUMENTS", malformed[i]);
        assert_non_null(c->pre_error_message);
        assert_non_null(strstr(c->pre_error_message, "c1"));
        assert_null(tg__call_args(c));
        assert_null(tg_call_args_json(c));
        assert_null(tg_call_checksum(c));
        assert_string_equal(tg_call_args_raw(c), malformed[i]);
        tg__call_free(c);
    }
    /* The parser's position is in the message. */
    tg_call *c = new_call("c2", "t", "{\"a\":\n  bad}");
    assert_non_null(strstr(c->pre_error_message, "line 2"));
    tg__call_free(c);

    /* "" and white space mean no parameters: {}. */
    static const char *empty[] = {"", "  ", "\n\t"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        c = new_call("c3", "t", empty[i]);
        assert_null(c->pre_error_code);
        assert_string_equal(tg_call_args_json(c), "{}");
        assert_string_equal(tg_call_args_raw(c), empty[i]);
        tg__call_free(c);
    }

    /* An object decodes; its checksum is the JCS one. */
    c = new_call("c4", "x", "{\"a\":1}");
    assert_null(c->pre_error_code);
    assert_string_equal(tg_call_args_json(c), "{\"a\":1}");
    assert_string_equal(
        tg_call_checksum(c),
        "sha256:"
        "20ff7b26c0b6d9c21dc8f5c74534c134f70bddb01d06af882818d219ebba7d30");
    assert_int_equal(tg__call_args_size(c), 7);
    tg__call_free(c);

    /* Objects set directly: a non-object is malformed too. */
    c = new_call("c5", "t", NULL);
    json_t *arr = load("[1]"); /* new ref */
    assert_int_equal(tg__call_set_args(c, arr), 0);
    assert_string_equal(c->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_null(tg_call_args_raw(c));
    json_decref(arr);
    tg__call_free(c);
}

static void test_call_getters_and_defaults(void **state)
{
    (void)state;
    tg_call *c = tg__call_new(NULL, NULL, NULL);
    assert_string_equal(tg_call_id(c), "");
    assert_string_equal(tg_call_tool(c), "");
    assert_string_equal(tg_call_format(c), "toolgate");
    assert_true(c->inline_output);
    assert_true(c->created_at > 0);
    assert_null(tg_call_caller_id(c));
    assert_null(tg_call_args_json(c));
    tg__call_free(c);
    tg__call_free(NULL);
    tg__result_free(NULL);
}

static void test_call_round_trip(void **state)
{
    (void)state;
    tg_call *c = new_call("call_7", "grep", "{\"pattern\":\"x\",\"n\":2}");
    c->caller_id = strdup("alice");
    c->context = load("{\"cwd\":\"/tmp\",\"env\":{\"A\":\"1\"}}");
    c->skills = load("[\"search\"]");
    c->meta = load("{\"rpc_id\":7}");
    c->created_at = 1795321029123LL;
    c->updated_at = 1795321029124LL;
    c->completed_at = 0;
    c->inline_output = false;
    c->from_artifact_tool = true;
    c->index = 3;

    json_t *j = tg__call_to_json(c); /* new ref */
    assert_non_null(j);
    assert_json(j,
                "{\"id\":\"call_7\",\"tool\":\"grep\",\"args\":{\"pattern\":"
                "\"x\",\"n\":2},\"args_raw\":\"{\\\"pattern\\\":\\\"x\\\","
                "\\\"n\\\":2}\",\"checksum\":\"sha256:"
                "e0c7921149ee04d817361c29950a4051eb85110958bb4a9d1466d3f1c3b018"
                "1e\",\"caller_id\":\"alice\",\"context\":{\"cwd\":\"/tmp\","
                "\"env\":{\"A\":\"1\"}},\"skills\":[\"search\"],\"format\":"
                "\"toolgate\",\"index\":3,\"created_at\":"
                "\"2026-11-22T04:17:09.123Z\",\"updated_at\":"
                "\"2026-11-22T04:17:09.124Z\",\"completed_at\":null,"
                "\"inline\":false,\"from_artifact_tool\":true,\"meta\":{"
                "\"rpc_id\":7}}");

    tg_call *back = NULL;
    tg_error err = {0};
    assert_int_equal(tg__call_from_json(j, "toolgate", &back, &err), 0);
    json_t *again = tg__call_to_json(back); /* new ref */
    if (!json_equal(j, again)) {
        char *a = json_dumps(j, JSON_SORT_KEYS);
        char *b = json_dumps(again, JSON_SORT_KEYS);
        fail_msg("round trip differs:\n%s\n%s", a, b);
    }
    /* The checksum read back is the one the call arrived with. */
    assert_string_equal(back->checksum_in, tg_call_checksum(c));
    json_decref(again);
    json_decref(j);
    tg__call_free(back);
    tg__call_free(c);

    /* A malformed call keeps its raw text and its error across the trip. */
    c = new_call("call_8", "t", "{bad");
    j = tg__call_to_json(c);
    assert_true(json_is_null(json_object_get(j, "args")));
    assert_true(json_is_null(json_object_get(j, "checksum")));
    assert_int_equal(tg__call_from_json(j, "toolgate", &back, &err), 0);
    assert_string_equal(tg_call_args_raw(back), "{bad");
    assert_string_equal(back->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(back->pre_error_message, "not valid JSON"));
    again = tg__call_to_json(back);
    assert_true(json_equal(j, again));
    json_decref(again);
    json_decref(j);
    tg__call_free(back);
    tg__call_free(c);
}

static void test_call_from_json_inputs(void **state)
{
    (void)state;
    tg_call *c = NULL;
    tg_error err = {0};
    /* Numeric id, args as a string, times as numbers, "arguments" alias. */
    json_t *j = load("{\"id\":17,\"tool\":\"t\",\"args\":\"{\\\"a\\\":1}\","
                     "\"created_at\":1700000000,\"updated_at\":1700000000500}");
    assert_int_equal(tg__call_from_json(j, "native", &c, &err), 0);
    assert_string_equal(tg_call_id(c), "17");
    assert_string_equal(tg_call_args_json(c), "{\"a\":1}");
    assert_string_equal(tg_call_args_raw(c), "{\"a\":1}");
    assert_string_equal(tg_call_format(c), "native");
    assert_int_equal(c->created_at, 1700000000000LL);
    assert_int_equal(c->updated_at, 1700000000500LL);
    tg__call_free(c);
    json_decref(j);

    j = load("{\"id\":\"x\",\"tool\":\"t\",\"arguments\":{\"b\":2}}");
    assert_int_equal(tg__call_from_json(j, NULL, &c, &err), 0);
    assert_string_equal(tg_call_args_json(c), "{\"b\":2}");
    tg__call_free(c);
    json_decref(j);

    /* No args at all: {}. */
    j = load("{\"id\":\"x\",\"tool\":\"t\"}");
    assert_int_equal(tg__call_from_json(j, NULL, &c, &err), 0);
    assert_string_equal(tg_call_args_json(c), "{}");
    tg__call_free(c);
    json_decref(j);

    static const struct {
        const char *json, *pointer;
    } bad[] = {
        {"{\"tool\":\"t\"}", "/id"},
        {"{\"id\":\"\",\"tool\":\"t\"}", "/id"},
        {"{\"id\":\"a\"}", "/tool"},
        {"{\"id\":\"a\",\"tool\":5}", "/tool"},
        {"{\"id\":\"a\",\"tool\":\"t\",\"context\":[]}", "/context"},
        {"{\"id\":\"a\",\"tool\":\"t\",\"skills\":{}}", "/skills"},
        {"{\"id\":\"a\",\"tool\":\"t\",\"created_at\":\"2026-02-30T00:00:"
         "00Z\"}",
         "/created_at"},
        {"{\"id\":\"a\",\"tool\":\"t\",\"args_raw\":5}", "/args_raw"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg_error e = {0};
        j = load(bad[i].json);
        c = (tg_call *)&e;
        assert_int_equal(tg__call_from_json(j, NULL, &c, &e), TG_EPARSE);
        assert_null(c);
        assert_string_equal(e.pointer, bad[i].pointer);
        json_decref(j);
    }
    j = load("[]");
    assert_int_equal(tg__call_from_json(j, NULL, &c, &err), TG_EPARSE);
    json_decref(j);
}

/* ------------------------------------------------------------ turns */

/* Arguments are kept as text and tape: the text is the wire's, the object
 * is built on demand, the one-allocation constructor agrees with the
 * general path, copies are deep. */
static void test_args_text_and_tape(void **state)
{
    (void)state;
    const char *wire = "{ \"b\": [1, 2.50], \"a\": \"\\u00e9\" }";
    tg_call *c = new_call("c1", "t", wire);
    /* The wire's own text, not serialised again. */
    assert_string_equal(tg_call_args_json(c), wire);
    assert_string_equal(tg_call_args_raw(c), wire);
    assert_ptr_equal(tg_call_args_json(c), tg_call_args_raw(c));
    assert_null(c->args_dom);
    json_t *o = tg__call_args(c); /* borrowed */
    assert_non_null(o);
    assert_ptr_equal(tg__call_args(c), o); /* built once */
    assert_json(o, "{\"b\":[1,2.5],\"a\":\"\xc3\xa9\"}");
    /* The checksum does not depend on the spelling. */
    tg_call *d = new_call("c2", "t", "{\"a\":\"\xc3\xa9\",\"b\":[1,2.5]}");
    assert_string_equal(tg_call_checksum(c), tg_call_checksum(d));
    assert_int_equal(tg__call_args_size(c), strlen(wire));

    /* One allocation for record and arguments; same result as above. */
    tg_call *n = tg__call_new_args("c1", "t", "toolgate", wire, strlen(wire));
    assert_non_null(n);
    assert_null(n->args_tape.mem); /* inside the record's allocation */
    assert_string_equal(tg_call_args_json(n), wire);
    assert_string_equal(tg_call_checksum(n), tg_call_checksum(c));
    assert_json(tg__call_args(n), "{\"b\":[1,2.5],\"a\":\"\xc3\xa9\"}");
    /* Copies are deep: the original may go first. */
    tg_call *copy = tg__call_new("c1", "t", "toolgate");
    assert_int_equal(tg__call_copy_args(copy, n), 0);
    tg__call_free(n);
    assert_string_equal(tg_call_args_json(copy), wire);
    assert_string_equal(tg_call_args_raw(copy), wire);
    assert_string_equal(tg_call_checksum(copy), tg_call_checksum(c));
    tg__call_free(copy);
    /* Setting the arguments again replaces all of it. */
    assert_int_equal(tg__call_set_args_text(c, "[]", 2), 0);
    assert_null(tg_call_args_json(c));
    assert_null(tg__call_args(c));
    assert_string_equal(c->pre_error_code, "MALFORMED_ARGUMENTS");
    tg__call_free(c);
    tg__call_free(d);

    /* The general path's answers from the one-allocation constructor. */
    static const char *others[] = {
        "", " ", "[1]", "{bad", "{\"a\":1,\"a\":2}", "null"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        tg_call *x = tg__call_new_args("x", "t", "toolgate", others[i],
                                       strlen(others[i]));
        tg_call *y = new_call("x", "t", others[i]);
        assert_non_null(x);
        if ((x->pre_error_message == NULL) != (y->pre_error_message == NULL) ||
            (x->pre_error_message &&
             strcmp(x->pre_error_message, y->pre_error_message) != 0))
            fail_msg("'%s': pre-errors differ", others[i]);
        assert_string_equal(tg_call_args_raw(x), others[i]);
        if (tg_call_args_json(y) != NULL)
            assert_string_equal(tg_call_args_json(x), tg_call_args_json(y));
        else
            assert_null(tg_call_args_json(x));
        tg__call_free(x);
        tg__call_free(y);
    }

    /* An object's wire text: taken only in jansson's compact form, and
     * then the call equals one made from the decoded object. */
    static const char *compact[] = {"{}", "{\"a\":[1,{\"b\":null}]}",
                                    "{\"s\":\"\\n\\u0001\xc3\xa9\"}"};
    for (size_t i = 0; i < sizeof compact / sizeof compact[0]; i++) {
        tg_call *x = NULL;
        assert_int_equal(tg__call_new_args_object("x", "t", "anthropic",
                                                  compact[i],
                                                  strlen(compact[i]), &x),
                         0);
        json_t *obj_i = load(compact[i]); /* new ref */
        tg_call *y = tg__call_new("x", "t", "anthropic");
        assert_int_equal(tg__call_set_args(y, obj_i), 0);
        json_decref(obj_i);
        assert_string_equal(tg_call_args_json(x), tg_call_args_json(y));
        assert_string_equal(tg_call_checksum(x), tg_call_checksum(y));
        assert_null(tg_call_args_raw(x)); /* it did not arrive as a string */
        assert_null(x->pre_error_code);
        assert_null(x->args_tape.mem); /* one allocation */
        tg__call_free(x);
        tg__call_free(y);
    }
    static const char *not_compact[] = {
        "{ }", "{\"a\":1.5}",     "{\"a\":1,\"a\":2}", "[]", "{\"a\":1",
        "",    "{\"a\":\"\\/\"}", "{\"a\":-0}"};
    for (size_t i = 0; i < sizeof not_compact / sizeof not_compact[0]; i++) {
        tg_call *x = (tg_call *)1;
        if (tg__call_new_args_object("x", "t", "anthropic", not_compact[i],
                                     strlen(not_compact[i]), &x) != 1)
            fail_msg("took '%s'", not_compact[i]);
        assert_null(x);
    }

    /* A NUL byte would end the text as a C string, for a tool too: even
     * where jansson lets it pass (after a number) it is MALFORMED_ARGUMENTS,
     * final, and the raw string keeps U+FFFD in its place. */
    const char nul[] = "{\"a\":1\0}";
    tg_call *z = tg__call_new_args("z", "t", "toolgate", nul, sizeof nul - 1);
    assert_non_null(z);
    assert_string_equal(z->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_non_null(strstr(z->pre_error_message, "U+0000 (NUL) at byte 6"));
    assert_true(z->args_unrepairable);
    assert_null(tg_call_args_json(z));
    assert_string_equal(tg_call_args_raw(z), "{\"a\":1\xEF\xBF\xBD}");
    tg__call_free(z);

    /* From an object: the text is its compact form, the object is kept. */
    json_t *obj = load("{\"x\": {\"y\": [true, null]}}"); /* new ref */
    tg_call *w = tg__call_new("w", "t", "toolgate");
    assert_int_equal(tg__call_set_args(w, obj), 0);
    assert_string_equal(tg_call_args_json(w), "{\"x\":{\"y\":[true,null]}}");
    assert_null(tg_call_args_raw(w));
    assert_ptr_equal(tg__call_args(w), obj);
    json_decref(obj);
    /* An object that JSON text cannot carry through a parser. */
    json_t *bad = json_pack("{s:s%}", "k", "a\0b", (size_t)3); /* new ref */
    assert_int_equal(tg__call_set_args(w, bad), 0);
    assert_string_equal(w->pre_error_code, "MALFORMED_ARGUMENTS");
    assert_null(tg_call_args_json(w));
    json_decref(bad);
    tg__call_free(w);
}

/* An object read with TG_JTAPE_BAD_STRINGS (new ref). */
static json_t *load_bad(const char *text)
{
    tg__jtape t;
    assert_int_equal(
        tg__jtape_parse(text, strlen(text), TG_JTAPE_BAD_STRINGS, &t, NULL), 0);
    json_t *v = tg__jtape_to_json(&t, 0); /* new ref */
    tg__jtape_free(&t);
    assert_non_null(v);
    return v;
}

/* Arguments holding bytes no tool gets - U+0000, unpaired surrogates
 * (high, low, reversed), bytes that are not UTF-8 - in keys and values,
 * nested deep, as an object or as the string form: MALFORMED_ARGUMENTS
 * naming what and where, final (limits.repair leaves them), the value kept
 * for the document's check, and text in the raw string. */
static void test_bad_bytes_in_args(void **state)
{
    (void)state;
    static const struct {
        const char *json, *what, *where;
    } objects[] = {
        {"{\"a\":\"x\\u0000y\"}", "U+0000 (NUL)", "the string at /a"},
        {"{\"ok\":\"\\ud83d\\ude00\",\"a\":{\"b\":[\"ok\",\"\\ud800\"]}}",
         "an unpaired surrogate \\uD800", "the string at /a/b/1"},
        {"{\"k\\udc00\":1}", "an unpaired surrogate \\uDC00",
         "the key at /k\\uDC00"},
        {"{\"a\":\"\\udc00\\ud800\"}", "an unpaired surrogate \\uDC00",
         "the string at /a"},
        {"{\"a\":\"\\ud800x\"}", "an unpaired surrogate \\uD800",
         "the string at /a"},
        {"{\"a/b~\":{\"\\u0000\":true}}", "U+0000 (NUL)",
         "the key at /a~1b~0/\\u0000"},
        {"{\"a\":\"caf\xff\"}", "the byte 0xFF, which is not UTF-8",
         "the string at /a"},
        /* jansson's dump passes over this key and writes {"a":1,":2,":3},
         * which parses: the keys are looked at first */
        {"{\"a\":1,\"\xb2\":2,\"\":3}", "the byte 0xB2, which is not UTF-8",
         "the key at /\\xB2"},
        {"{\"d\":[[[[[[[[[[{\"e\":[\"\\ud800\\u0041\"]}]]]]]]]]]]}",
         "an unpaired surrogate \\uD800",
         "the string at /d/0/0/0/0/0/0/0/0/0/0/e/0"},
    };
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
        json_t *v = load_bad(objects[i].json); /* new ref */
        tg_call *c = tg__call_new("c", "t", "anthropic");
        assert_int_equal(tg__call_set_args(c, v), 0);
        assert_string_equal(c->pre_error_code, "MALFORMED_ARGUMENTS");
        char want[256];
        snprintf(want, sizeof want, "hold %s in %s;", objects[i].what,
                 objects[i].where);
        if (strstr(c->pre_error_message, want) == NULL)
            fail_msg("'%s': message '%s' lacks '%s'", objects[i].json,
                     c->pre_error_message, want);
        assert_true(c->args_unrepairable);
        assert_ptr_equal(c->bad_args_src, v);
        assert_null(tg_call_args_json(c));
        assert_null(tg_call_checksum(c));
        tg__call_free(c);
        json_decref(v);
    }
    /* The string form: a JSON string whose text holds them. */
    static const struct {
        const char *json, *what, *raw;
    } strings[] = {
        {"\"{\\\"a\\\":\\\"x\\u0000y\\\"}\"", "U+0000 (NUL) at byte 7",
         "{\"a\":\"x\xEF\xBF\xBDy\"}"},
        {"\"{\\\"a\\\":1\\u0000}\"", "U+0000 (NUL) at byte 6",
         "{\"a\":1\xEF\xBF\xBD}"},
        {"\"{\\\"a\\\":\\\"\\udfff\\\"}\"",
         "an unpaired surrogate \\uDFFF at byte 6", "{\"a\":\"\xEF\xBF\xBD\"}"},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        json_t *v = load_bad(strings[i].json); /* new ref */
        tg_call *c = tg__call_new("c", "t", "openai-chat");
        assert_int_equal(tg__call_set_args_value(c, v), 0);
        assert_string_equal(c->pre_error_code, "MALFORMED_ARGUMENTS");
        if (strstr(c->pre_error_message, strings[i].what) == NULL)
            fail_msg("message '%s' lacks '%s'", c->pre_error_message,
                     strings[i].what);
        assert_true(c->args_unrepairable);
        assert_ptr_equal(c->bad_args_src, v);
        assert_string_equal(tg_call_args_raw(c), strings[i].raw);
        tg__call_free(c);
        json_decref(v);
    }
    /* A surrogate pair is a character; setting good arguments again
     * forgets the bad ones. */
    json_t *good = load_bad("{\"e\":\"\\ud83d\\ude00\"}"); /* new ref */
    json_t *bad = load_bad("{\"e\":\"\\ud83d\"}");         /* new ref */
    tg_call *c = tg__call_new("c", "t", "gemini");
    assert_int_equal(tg__call_set_args(c, bad), 0);
    assert_non_null(c->bad_args_src);
    assert_int_equal(tg__call_set_args(c, good), 0);
    assert_null(c->bad_args_src);
    assert_false(c->args_unrepairable);
    assert_string_equal(tg_call_args_json(c), "{\"e\":\"\xF0\x9F\x98\x80\"}");
    tg__call_free(c);
    json_decref(good);
    json_decref(bad);
}

/* A result made from its payload's text: the text in its own allocation,
 * the value built only when asked for. */
static void test_result_with_text(void **state)
{
    (void)state;
    tg_call *c = new_call("call_1", "t", "{}");
    tg_result *r = tg__result_success_text(c, "{\"ok\":true}", 11);
    assert_non_null(r);
    tg__call_free(c); /* the result outlives its call */
    assert_true(r->payload_json_inline);
    assert_null(r->payload_dom);
    assert_string_equal(tg_result_payload_json(r), "{\"ok\":true}");
    assert_string_equal(tg_result_data_json(r), "{\"ok\":true}");
    assert_null(tg_result_error_message(r));
    assert_null(tg_result_error_code(r));
    assert_null(r->payload_dom); /* none of that needed the value */
    assert_string_equal(tg_result_id(r), "call_1");
    assert_string_equal(tg_result_tool(r), "t");
    char *rec = tg_result_to_json(r);
    assert_non_null(strstr(rec, "\"payload\":{\"ok\":true}"));
    tg_free(rec);
    json_t *p = tg__result_payload(r); /* borrowed */
    assert_json(p, "{\"ok\":true}");
    assert_ptr_equal(tg__result_payload(r), p); /* built once */
    tg__result_free(r);

    /* A string payload. */
    c = new_call("call_2", "t", "{}");
    r = tg__result_success_text(c, "\"a\\nb\"", 6);
    tg__call_free(c);
    assert_string_equal(tg_result_payload_json(r), "\"a\\nb\"");
    assert_string_equal(json_string_value(tg__result_payload(r)), "a\nb");
    tg__result_free(r);
}

static void test_turn_duplicates(void **state)
{
    (void)state;
    tg_turn *t = tg__turn_new("toolgate");
    static const char *ids[] = {"b", "a", "b", "c", "a", "b", "d"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        assert_int_equal(tg__turn_add_call(t, new_call(ids[i], "t", "{}")), 0);
    tg__turn_mark_duplicates(t);
    static const int dup[] = {0, 0, 1, 0, 1, 1, 0};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const tg_call *c = tg_turn_call(t, i);
        assert_int_equal(tg_call_index(c), i);
        if (dup[i]) {
            assert_non_null(c->pre_error_code);
            assert_string_equal(c->pre_error_code, "DUPLICATE_CALL_ID");
            assert_non_null(strstr(c->pre_error_message, ids[i]));
        } else {
            assert_null(c->pre_error_code);
        }
    }
    tg_turn_free(t);

    /* Many calls (the hashed path, with collisions and wrap-around): the
     * same marks as a pairwise comparison. */
    t = tg__turn_new("toolgate");
    enum { MANY = 3000 };
    char id[32];
    for (int i = 0; i < MANY; i++) {
        snprintf(id, sizeof id, "id-%d", i % 7 == 3 ? i / 3 : i);
        assert_int_equal(tg__turn_add_call(t, new_call(id, "t", "{}")), 0);
    }
    tg__turn_mark_duplicates(t);
    for (size_t i = 0; i < MANY; i++) {
        int want = 0;
        for (size_t j = 0; j < i && !want; j++)
            want = strcmp(t->calls[i]->id, t->calls[j]->id) == 0;
        if (want != (t->calls[i]->pre_error_code != NULL))
            fail_msg("call %zu (%s) marked wrongly", i, t->calls[i]->id);
    }
    tg_turn_free(t);

    /* One call, or none: nothing to mark. */
    t = tg__turn_new("toolgate");
    tg__turn_mark_duplicates(t);
    assert_int_equal(tg__turn_add_call(t, new_call("a", "t", "{}")), 0);
    tg__turn_mark_duplicates(t);
    assert_null(tg_turn_call(t, 0)->pre_error_code);
    tg_turn_free(t);
}

/* A string of n copies of c (caller frees). */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_name_limits(void **state)
{
    (void)state;
    char *at_limit = repeat('a', TG_CALL_ID_MAX);
    char *long_id = repeat('i', TG_CALL_ID_MAX + 1);
    char *huge_tool = repeat('t', 10u << 20);
    char *long_caller = repeat('c', TG_CALLER_ID_MAX + 40);
    tg_turn *t = tg__turn_new("toolgate");
    assert_int_equal(tg__turn_add_call(t, new_call(at_limit, "ok", "{}")), 0);
    assert_int_equal(tg__turn_add_call(t, new_call(long_id, "ok", "{}")), 0);
    assert_int_equal(tg__turn_add_call(t, new_call("c2", huge_tool, "{}")), 0);
    tg_call *c3 = new_call("c3", "ok", "{}");
    c3->caller_id = strdup(long_caller);
    assert_int_equal(tg__turn_add_call(t, c3), 0);
    /* a multi-byte character across the limit is left out whole */
    char *utf = repeat('u', TG_TOOL_NAME_MAX - 1);
    char *utf_long = malloc(TG_TOOL_NAME_MAX + 8);
    snprintf(utf_long, TG_TOOL_NAME_MAX + 8, "%s\xE6\x97\xA5xx", utf);
    assert_int_equal(tg__turn_add_call(t, new_call("c4", utf_long, "{}")), 0);
    tg__turn_check_calls(t);

    /* at the limit: nothing to say */
    assert_null(t->calls[0]->pre_error_code);
    assert_string_equal(t->calls[0]->id, at_limit);
    /* over it: MALFORMED_CALL, the message quoting a bounded prefix with
     * the size, and the field cut to the limit */
    static const char *const field[] = {"call id", "tool name", "caller id"};
    static const size_t size[] = {TG_CALL_ID_MAX + 1, 10u << 20,
                                  TG_CALLER_ID_MAX + 40};
    for (size_t i = 1; i <= 3; i++) {
        const tg_call *c = t->calls[i];
        assert_non_null(c->pre_error_code);
        assert_string_equal(c->pre_error_code, "MALFORMED_CALL");
        assert_non_null(strstr(c->pre_error_message, field[i - 1]));
        char sz[64];
        snprintf(sz, sizeof sz, "(%zu bytes)", size[i - 1]);
        assert_non_null(strstr(c->pre_error_message, sz));
        assert_true(strlen(c->pre_error_message) < 300);
    }
    assert_int_equal(strlen(t->calls[1]->id), TG_CALL_ID_MAX);
    assert_int_equal(strlen(t->calls[2]->tool), TG_TOOL_NAME_MAX);
    assert_int_equal(strlen(t->calls[3]->caller_id), TG_CALLER_ID_MAX);
    assert_string_equal(t->calls[4]->tool, utf);
    assert_string_equal(t->calls[4]->pre_error_code, "MALFORMED_CALL");
    /* two ids alike in their first 256 bytes are duplicates once cut: the
     * first says it was too long, the second is the duplicate */
    tg_turn_free(t);
    t = tg__turn_new("toolgate");
    char *other = repeat('i', TG_CALL_ID_MAX + 9);
    assert_int_equal(tg__turn_add_call(t, new_call(long_id, "ok", "{}")), 0);
    assert_int_equal(tg__turn_add_call(t, new_call(other, "ok", "{}")), 0);
    tg__turn_check_calls(t);
    assert_string_equal(t->calls[0]->pre_error_code, "MALFORMED_CALL");
    assert_string_equal(t->calls[1]->pre_error_code, "DUPLICATE_CALL_ID");
    /* --caller over the limit is refused, not cut */
    tg_error err = {0};
    assert_int_equal(tg_turn_set_caller(t, long_caller, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "caller id"));
    assert_null(t->calls[0]->caller_id);
    tg_turn_free(t);
    free(other);
    free(utf);
    free(utf_long);
    free(at_limit);
    free(long_id);
    free(huge_tool);
    free(long_caller);
}

static void test_turn_container(void **state)
{
    (void)state;
    tg_turn *t = tg__turn_new("openai-chat");
    assert_string_equal(tg_turn_format(t), "openai-chat");
    /* Growth past the first capacity. */
    for (int i = 0; i < 20; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%d", i);
        assert_int_equal(tg__turn_add_call(t, new_call(id, "t", "{}")), 0);
    }
    assert_int_equal(tg_turn_call_count(t), 20);
    assert_null(tg_turn_call(t, 20));
    assert_null(tg_turn_result(t, 0));
    assert_string_equal(tg_call_id(tg_turn_call(t, 19)), "c19");

    tg_result *r = tg__result_success(t->calls[4], json_true());
    assert_int_equal(tg__turn_set_result(t, 4, r), 0);
    assert_ptr_equal(tg_turn_result(t, 4), r);
    /* Replacing frees the earlier one (ASan would see a leak otherwise). */
    r = tg__result_denied(t->calls[4], "no");
    assert_int_equal(tg__turn_set_result(t, 4, r), 0);
    assert_int_equal(tg_result_outcome(tg_turn_result(t, 4)),
                     TG_OUTCOME_DENIED);
    /* Out of range: freed, refused. */
    r = tg__result_success(t->calls[0], json_true());
    assert_int_equal(tg__turn_set_result(t, 20, r), TG_EINVAL);
    assert_null(tg_turn_result(t, 20));

    t->calls[2]->caller_id = strdup("bob");
    tg_error err = {0};
    assert_int_equal(tg_turn_set_caller(t, "alice", &err), 0);
    assert_string_equal(tg_call_caller_id(tg_turn_call(t, 0)), "alice");
    assert_string_equal(tg_call_caller_id(tg_turn_call(t, 2)), "bob");
    /* skills: set on calls without any, kept on one that has its own, in
     * the record; an empty name is refused */
    const char *names[] = {"cite", "french"};
    const char *bad[] = {"cite", ""};
    t->calls[2]->skills = json_pack("[s]", "own");
    assert_int_equal(tg_turn_set_skills(t, bad, 2, &err), TG_EINVAL);
    assert_null(t->calls[0]->skills);
    assert_int_equal(tg_turn_set_skills(t, names, 2, &err), 0);
    char *rec = tg_call_to_json(tg_turn_call(t, 0));
    assert_non_null(strstr(rec, "\"skills\":[\"cite\",\"french\"]"));
    tg_free(rec);
    rec = tg_call_to_json(tg_turn_call(t, 2));
    assert_non_null(strstr(rec, "\"skills\":[\"own\"]"));
    tg_free(rec);
    tg_turn_free(t);
    tg_turn_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_payload),
        cmocka_unit_test(test_error_payload),
        cmocka_unit_test(test_canceled_timeout_denied_payloads),
        cmocka_unit_test(test_outcome_names),
        cmocka_unit_test(test_result_round_trip),
        cmocka_unit_test(test_result_unknown_outcome),
        cmocka_unit_test(test_args_decoding),
        cmocka_unit_test(test_call_getters_and_defaults),
        cmocka_unit_test(test_call_round_trip),
        cmocka_unit_test(test_call_from_json_inputs),
        cmocka_unit_test(test_args_text_and_tape),
        cmocka_unit_test(test_bad_bytes_in_args),
        cmocka_unit_test(test_result_with_text),
        cmocka_unit_test(test_turn_duplicates),
        cmocka_unit_test(test_name_limits),
        cmocka_unit_test(test_turn_container),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
