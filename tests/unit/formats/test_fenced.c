/* SPDX-License-Identifier: MIT */
/*
 * test_fenced.c - the fenced format (input only): CommonMark fence rules
 * (length, character, indentation, info strings, unclosed blocks), the
 * info-string-to-call mapping, tool_call blocks, the JSON wrappers of the
 * text, that detection never picks it, and that rendering into it fails
 * with a message naming the formats that can render.
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

static tg_turn *parse_len(const char *text, size_t len)
{
    tg_turn *turn = NULL;
    tg_error err;
    int rc = tg_turn_parse(text, len, "fenced", "answer.md", &turn, &err);
    if (rc != 0)
        fail_msg("parse failed (%s): %s", tg_err_name(rc), err.message);
    assert_string_equal(tg_turn_format(turn), "fenced");
    return turn;
}

static tg_turn *parse(const char *text)
{
    return parse_len(text, strlen(text));
}

/* The only call of text: tool and arguments JSON (NULL when none). */
static void one_call(const char *text, const char *tool, const char *args)
{
    tg_turn *turn = parse(text);
    if (tg_turn_call_count(turn) != 1)
        fail_msg("%zu calls in %s", tg_turn_call_count(turn), text);
    const tg_call *c = tg_turn_call(turn, 0);
    assert_string_equal(tg_call_id(c), "fenced-0");
    assert_string_equal(tg_call_tool(c), tool);
    if (args == NULL)
        assert_null(tg_call_args_json(c));
    else
        assert_string_equal(tg_call_args_json(c), args);
    tg_turn_free(turn);
}

static void no_call(const char *text)
{
    tg_turn *turn = parse(text);
    if (tg_turn_call_count(turn) != 0)
        fail_msg("%zu calls in %s", tg_turn_call_count(turn), text);
    tg_turn_free(turn);
}

static void test_mapping(void **state)
{
    (void)state;
    one_call("```bash\nls\n```", "bash", "{\"command\":\"ls\"}");
    one_call("```sh\nls\n```\n", "sh", "{\"command\":\"ls\"}");
    one_call("```shell\nls\n```\n", "shell", "{\"command\":\"ls\"}");
    one_call("```python\nprint(1)\n```\n", "python", "{\"code\":\"print(1)\"}");
    one_call("```_x.y-z9\nbody\n```\n", "_x.y-z9", "{\"code\":\"body\"}");
    /* not calls: examples, plain blocks, other info strings */
    no_call("```json\n{\"a\":1}\n```\n");
    no_call("```JSON\n{\"a\":1}\n```\n");
    no_call("```\nls\n```\n");
    no_call("```c++\nx\n```\n");
    no_call("```9lives\nx\n```\n");
    no_call("```bash title=x\nls\n```\n");
    no_call("plain text, `inline` and ``double``\n");
}

static void test_fence_rules(void **state)
{
    (void)state;
    /* an empty block is an empty command */
    one_call("```bash\n```\n", "bash", "{\"command\":\"\"}");
    /* blank lines inside are kept, the last newline is not */
    one_call("```bash\na\n\nb\n\n```", "bash", "{\"command\":\"a\\n\\nb\\n\"}");
    /* a shorter fence or one of the other character does not close */
    one_call("````bash\n```\n~~~\n````\n", "bash",
             "{\"command\":\"```\\n~~~\"}");
    /* a closing fence may be longer; it cannot carry an info string */
    one_call("```bash\nx\n```python\n`````\n", "bash",
             "{\"command\":\"x\\n```python\"}");
    /* indentation: up to three spaces, removed from the body as far as the
     * opening fence had it; four spaces is not a fence */
    one_call("  ```bash\n    a\n b\nc\n  ```\n", "bash",
             "{\"command\":\"  a\\nb\\nc\"}");
    no_call("    ```bash\n    ls\n    ```\n");
    /* a backtick fence's info string cannot hold a backtick */
    no_call("```bash`\nls\n```\n");
    /* tildes may */
    no_call("~~~bash`\nls\n~~~\n");
    /* CRLF line ends */
    one_call("```bash\r\nls -l\r\npwd\r\n```\r\n", "bash",
             "{\"command\":\"ls -l\\npwd\"}");
    /* info string case is kept for the tool name */
    one_call("```Bash\nls\n```\n", "Bash", "{\"command\":\"ls\"}");
}

static void test_unclosed_and_bad_text(void **state)
{
    (void)state;
    tg_turn *turn = parse("text\n```bash\nrm -rf build\n");
    assert_int_equal(tg_turn_call_count(turn), 1);
    const tg_call *c = tg_turn_call(turn, 0);
    assert_string_equal(c->pre_error_code, "MALFORMED_CALL");
    assert_non_null(strstr(c->pre_error_message, "line 2"));
    assert_non_null(strstr(c->pre_error_message, "not closed"));
    assert_int_equal(
        json_integer_value(json_object_get(tg__call_meta(c), "line")), 2);
    tg_turn_free(turn);

    /* an unclosed block that is not a call is just text */
    no_call("```\nstill open");

    /* invalid UTF-8 in a block: that call fails, the next one runs */
    turn = parse("```bash\n\xff\xfe\n```\n```sh\nok\n```\n");
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_turn_call(turn, 0)->pre_error_code,
                        "MALFORMED_ARGUMENTS");
    assert_null(tg_turn_call(turn, 1)->pre_error_code);
    assert_string_equal(tg_call_id(tg_turn_call(turn, 1)), "fenced-1");
    tg_turn_free(turn);

    /* A NUL byte does not stop the scan: the block is still one call (the
     * arguments rules decide whether "\u0000" may be in a command), and
     * the text after it is read. */
    static const char nul[] = "```bash\na\0b\n```\n```sh\nok\n```\n";
    turn = parse_len(nul, sizeof nul - 1);
    assert_int_equal(tg_turn_call_count(turn), 2);
    assert_string_equal(tg_call_tool(tg_turn_call(turn, 1)), "sh");
    assert_string_equal(tg_call_args_json(tg_turn_call(turn, 1)),
                        "{\"command\":\"ok\"}");
    tg_turn_free(turn);
}

static void test_tool_call_blocks(void **state)
{
    (void)state;
    one_call("```tool_call\n{\"tool\":\"t\",\"args\":{\"a\":[1]}}\n```\n", "t",
             "{\"a\":[1]}");
    one_call("```tool_call\n{\"name\":\"t\",\"arguments\":\"{\\\"a\\\":2}\"}\n"
             "```\n",
             "t", "{\"a\":2}");
    one_call("```tool_call\n{\"tool\":\"t\",\"args\":null}\n```\n", "t", "{}");
    /* pretty-printed over several lines */
    one_call("```tool_call\n{\n  \"tool\": \"t\",\n  \"args\": {\n    \"x\": "
             "true\n  }\n}\n```\n",
             "t", "{\"x\":true}");

    const char *bad[] = {
        "```tool_call\n[1]\n```\n",
        "```tool_call\n\"t\"\n```\n",
        "```tool_call\n{\"tool\":\"t\",\"tool\":\"u\"}\n```\n",
        "```tool_call\n{\"tool\":7}\n```\n",
        "```tool_call\n{\"tool\":\"t\",\"args\":3}\n```\n",
        "```tool_call\n{\"tool\":\"t\",\"args\":\"[]\"}\n```\n",
        "```tool_call\n```\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg_turn *turn = parse(bad[i]);
        assert_int_equal(tg_turn_call_count(turn), 1);
        if (tg_turn_call(turn, 0)->pre_error_code == NULL)
            fail_msg("no pre-error for %s", bad[i]);
        tg_turn_free(turn);
    }
}

static void test_json_wrappers(void **state)
{
    (void)state;
    one_call("\"```bash\\nls\\n```\"", "bash", "{\"command\":\"ls\"}");
    one_call("{\"role\":\"assistant\",\"content\":\"```sh\\nid\\n```\"}", "sh",
             "{\"command\":\"id\"}");
    one_call("{\"content\":\"```sh\\nid\\n```\"}", "sh",
             "{\"command\":\"id\"}");
    /* text that happens to be JSON without fences */
    no_call("42");
    no_call("null");

    tg_turn *turn = NULL;
    tg_error err;
    const char *wrong[] = {"[\"```bash\\nls\\n```\"]",
                           "{\"role\":\"user\",\"content\":\"x\"}",
                           "{\"content\":[{\"type\":\"text\"}]}"};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        int rc = tg_turn_parse(wrong[i], strlen(wrong[i]), "fenced", "a.json",
                               &turn, &err);
        assert_int_equal(rc, TG_EFORMAT);
        assert_null(turn);
        assert_non_null(strstr(err.message, "a.json"));
        assert_non_null(strstr(err.message, "expected plain assistant text"));
    }
}

static void test_never_detected(void **state)
{
    (void)state;
    tg_turn *turn = NULL;
    tg_error err;
    const char *text = "Run this:\n```bash\nls\n```\n";
    assert_int_not_equal(
        tg_turn_parse(text, strlen(text), "auto", "a.md", &turn, &err), 0);
    assert_null(turn);
    const char *str = "\"```bash\\nls\\n```\"";
    assert_int_equal(
        tg_turn_parse(str, strlen(str), "auto", "a.json", &turn, &err),
        TG_EFORMAT);
    assert_null(turn);
}

static void test_render_refused(void **state)
{
    (void)state;
    tg_turn *turn = parse("```bash\nls\n```\n");
    const tg_call *c = tg_turn_call(turn, 0);
    assert_int_equal(
        tg__turn_set_result(turn, 0, tg__result_success(c, json_string("a"))),
        0);
    char *out = (char *)1;
    size_t len = 7;
    tg_error err;
    assert_int_equal(tg_turn_render(turn, NULL, &out, &len, &err), TG_EFORMAT);
    assert_null(out);
    assert_int_equal(len, 0);
    assert_non_null(
        strstr(err.message, "fenced is an input format; choose --to"));
    /* it names the formats that can render, and not itself */
    assert_non_null(strstr(err.message, "openai-chat"));
    assert_non_null(strstr(err.message, "mcp"));
    assert_non_null(strstr(err.message, "openai-responses"));
    assert_null(strstr(err.message + strlen("fenced"), "fenced"));
    assert_int_equal(tg_turn_render(turn, "fenced", &out, NULL, &err),
                     TG_EFORMAT);
    assert_int_equal(tg_turn_render(turn, "nope", &out, NULL, &err),
                     TG_EFORMAT);
    assert_non_null(strstr(err.message, "unknown output format 'nope'"));
    assert_non_null(strstr(err.message, "toolgate"));

    /* into a format that renders, it works */
    assert_int_equal(tg_turn_render(turn, "openai-chat", &out, &len, &err), 0);
    assert_string_equal(out, "[{\"role\":\"tool\",\"tool_call_id\":"
                             "\"fenced-0\",\"content\":\"a\"}]\n");
    tg_free(out);
    tg_turn_free(turn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapping),
        cmocka_unit_test(test_fence_rules),
        cmocka_unit_test(test_unclosed_and_bad_text),
        cmocka_unit_test(test_tool_call_blocks),
        cmocka_unit_test(test_json_wrappers),
        cmocka_unit_test(test_never_detected),
        cmocka_unit_test(test_render_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
