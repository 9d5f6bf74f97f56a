/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c - the registry (lookup by name, registration order,
 * duplicates) and tool definitions: command tools from toolgate.json
 * entries, every bad member named as tools[i].field, and handler tools.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "tg_json_test.h"

static int noop(tg_handler_ctx *ctx, const char *args, size_t len, void *ud)
{
    (void)ctx, (void)args, (void)len, (void)ud;
    return 0;
}

static tg__tool *handler_tool(const char *name)
{
    tg__tool *t = NULL;
    tg_error err = {0};
    assert_int_equal(
        tg__tool_new_handler(name, "d", NULL, noop, NULL, 0, &t, &err), 0);
    return t;
}

/* ---------------------------------------------------------- registry */

static void find_and_order(void **state)
{
    (void)state;
    tg__registry *reg = tg__registry_new();
    assert_non_null(reg);
    assert_int_equal(tg__registry_count(reg), 0);
    assert_null(tg__registry_find(reg, "x"));
    assert_null(tg__registry_at(reg, 0));

    tg_error err = {0};
    const char *names[] = {"zeta", "alpha", "mid.dle", "a-b_c"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(tg__registry_add(reg, handler_tool(names[i]), &err),
                         0);
    assert_int_equal(tg__registry_count(reg), 4);
    for (size_t i = 0; i < 4; i++) {
        /* registration order, not sorted */
        assert_string_equal(tg__registry_at(reg, i)->name, names[i]);
        const tg__tool *t = tg__registry_find(reg, names[i]);
        assert_non_null(t);
        assert_ptr_equal(t, tg__registry_at(reg, i));
    }
    assert_null(tg__registry_at(reg, 4));
    assert_null(tg__registry_find(reg, "alph"));
    assert_null(tg__registry_find(reg, "alphaa"));
    assert_null(tg__registry_find(reg, NULL));
    tg__registry_free(reg);
    tg__registry_free(NULL);
}

static void duplicates(void **state)
{
    (void)state;
    tg__registry *reg = tg__registry_new();
    tg_error err = {0};
    assert_int_equal(tg__registry_add(reg, handler_tool("echo"), &err), 0);
    /* the duplicate is freed by add (ASan checks the leak) */
    assert_int_equal(tg__registry_add(reg, handler_tool("echo"), &err),
                     TG_EEXIST);
    assert_non_null(strstr(err.message, "'echo'"));
    assert_int_equal(tg__registry_count(reg), 1);
    /* names are case-sensitive */
    assert_int_equal(tg__registry_add(reg, handler_tool("Echo"), &err), 0);
    assert_int_equal(tg__registry_count(reg), 2);
    tg__registry_free(reg);
}

/* Many tools: the table grows and every name stays findable. */
static void many(void **state)
{
    (void)state;
    tg__registry *reg = tg__registry_new();
    tg_error err = {0};
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "tool_%d", i);
        assert_int_equal(tg__registry_add(reg, handler_tool(name), &err), 0);
    }
    assert_int_equal(tg__registry_count(reg), 5000);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "tool_%d", i);
        const tg__tool *t = tg__registry_find(reg, name);
        assert_non_null(t);
        assert_string_equal(t->name, name);
        assert_ptr_equal(tg__registry_at(reg, (size_t)i), t);
    }
    assert_null(tg__registry_find(reg, "tool_5000"));
    snprintf(name, sizeof name, "tool_%d", 77);
    assert_int_equal(tg__registry_add(reg, handler_tool(name), &err),
                     TG_EEXIST);
    tg__registry_free(reg);
}

/* ------------------------------------------------------ command tools */

static void command_tool(void **state)
{
    (void)state;
    json_t *entry = tg_test_json(
        "{\"name\": \"echo\", \"description\": \"Echo text\","
        " \"input_schema\": {\"type\": \"object\", \"properties\": {\"text\":"
        " {\"type\": \"string\"}}, \"required\": [\"text\"]},"
        " \"command\": [\"/bin/echo\", \"{text}\"], \"stdin\": \"{*}\","
        " \"env\": {\"LC_ALL\": \"C\"}, \"timeout_ms\": 2000,"
        " \"annotations\": {\"readOnlyHint\": true}, \"output\": \"text\"}");
    tg__tool *t = NULL;
    tg_error err = {0};
    assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err), 0);
    assert_int_equal(t->kind, TG_TOOL_KIND_COMMAND);
    assert_string_equal(t->name, "echo");
    assert_string_equal(t->description, "Echo text");
    assert_true(
        json_equal(t->input_schema, json_object_get(entry, "input_schema")));
    assert_true(json_equal(t->argv, json_object_get(entry, "command")));
    assert_string_equal(json_string_value(t->stdin_tpl), "{*}");
    assert_string_equal(json_string_value(json_object_get(t->env, "LC_ALL")),
                        "C");
    assert_int_equal(t->timeout_ms, 2000);
    assert_true(json_is_true(json_object_get(t->annotations, "readOnlyHint")));
    assert_null(t->fn);
    tg__tool_free(t);
    json_decref(entry);

    /* the hostile-caller members */
    entry =
        tg_test_json("{\"name\": \"ls\", \"command\": [\"ls\", \"{flags?}\", "
                     "\"--\", \"{path}\"], \"option_args\": [\"flags\"],"
                     " \"context_env\": {\"allow\": [\"GIT_AUTHOR_*\"],"
                     " \"deny\": [\"*\"]}}");
    assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err), 0);
    assert_int_equal(json_array_size(t->option_args), 1);
    assert_string_equal(json_string_value(json_array_get(t->option_args, 0)),
                        "flags");
    assert_string_equal(json_string_value(json_array_get(t->ctx_env_allow, 0)),
                        "GIT_AUTHOR_*");
    assert_string_equal(json_string_value(json_array_get(t->ctx_env_deny, 0)),
                        "*");
    tg__tool_free(t);
    json_decref(entry);

    /* the minimal tool: defaults */
    entry = tg_test_json("{\"name\": \"t\", \"command\": [\"true\"]}");
    assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err), 0);
    assert_string_equal(t->description, "");
    assert_string_equal(
        json_string_value(json_object_get(t->input_schema, "type")), "object");
    assert_null(t->annotations);
    assert_null(t->stdin_tpl);
    assert_null(t->env);
    assert_null(t->option_args);
    assert_null(t->ctx_env_allow);
    assert_null(t->ctx_env_deny);
    assert_int_equal(t->timeout_ms, 0);
    /* without ok_exit, 0 alone is success */
    assert_true(tg__tool_exit_ok(t, 0));
    assert_false(tg__tool_exit_ok(t, 1));
    assert_false(tg__tool_exit_ok(t, 255));
    assert_false(tg__tool_exit_ok(t, -1));
    tg__tool_free(t);
    tg__tool_free(NULL);
    json_decref(entry);
}

/* "ok_exit": the statuses that are success, as a list or a range. */
static void ok_exit_forms(void **state)
{
    (void)state;
    static const struct {
        const char *ok_exit;
        const char *ok; /* the statuses 0..255 that are success, as text */
    } cases[] = {
        {"[0, 1]", "0 1"},
        {"[1]", "1"}, /* the list is the whole set: 0 is not added */
        {"[2, 0, 2]", "0 2"},
        {"{\"min\": 0, \"max\": 1}", "0 1"},
        {"{\"min\": 3, \"max\": 3}", "3"},
        {"{\"max\": 255, \"min\": 254}", "254 255"},
        {"[255, 64, 63, 128]", "63 64 128 255"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "{\"name\": \"t\", \"command\": [\"true\"], \"ok_exit\": %s}",
                 cases[i].ok_exit);
        json_t *entry = tg_test_json(text); /* new ref */
        tg__tool *t = NULL;
        tg_error err = {0};
        assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err), 0);
        char got[256] = "";
        size_t o = 0;
        for (int st = 0; st <= 255; st++)
            if (tg__tool_exit_ok(t, st))
                o += (size_t)snprintf(got + o, sizeof got - o, "%s%d",
                                      o ? " " : "", st);
        if (strcmp(got, cases[i].ok) != 0)
            fail_msg("ok_exit %s: success for '%s', expected '%s'",
                     cases[i].ok_exit, got, cases[i].ok);
        assert_false(tg__tool_exit_ok(t, 256));
        tg__tool_free(t);
        json_decref(entry);
    }
}

typedef struct bad_tool {
    const char *entry;
    const char *message;
    const char *pointer;
} bad_tool;

static const bad_tool bad_tools[] = {
    {"[]", "tools[2] must be an object", "/tools/2"},
    {"{\"command\": [\"x\"]}", "tools[2].name must be a string",
     "/tools/2/name"},
    {"{\"name\": \"\", \"command\": [\"x\"]}", "tools[2].name",
     "/tools/2/name"},
    {"{\"name\": \"has space\", \"command\": [\"x\"]}", "tools[2].name",
     "/tools/2/name"},
    {"{\"name\": \"semi;colon\", \"command\": [\"x\"]}", "tools[2].name",
     "/tools/2/name"},
    {"{\"name\": \"x\", \"description\": 3, \"command\": [\"x\"]}",
     "tools[2].description must be a string", "/tools/2/description"},
    {"{\"name\": \"x\", \"input_schema\": [], \"command\": [\"x\"]}",
     "tools[2].input_schema must be", "/tools/2/input_schema"},
    {"{\"name\": \"x\", \"input_schema\": {\"type\": \"array\"}, "
     "\"command\": [\"x\"]}",
     "tools[2].input_schema must be", "/tools/2/input_schema"},
    {"{\"name\": \"x\", \"annotations\": true, \"command\": [\"x\"]}",
     "tools[2].annotations must be an object", "/tools/2/annotations"},
    {"{\"name\": \"x\"}", "tools[2] needs a \"command\"", "/tools/2"},
    {"{\"name\": \"x\", \"command\": []}",
     "tools[2].command must be a non-empty array of strings",
     "/tools/2/command"},
    {"{\"name\": \"x\", \"command\": \"rm -rf /\"}",
     "tools[2].command must be a non-empty array of strings",
     "/tools/2/command"},
    {"{\"name\": \"x\", \"command\": [\"ls\", 3]}",
     "tools[2].command must be a non-empty array of strings",
     "/tools/2/command"},
    {"{\"name\": \"x\", \"command\": [\"\"]}", "tools[2].command[0]",
     "/tools/2/command"},
    {"{\"name\": \"x\", \"command\": [\"{prog}\", \"a\"]}",
     "tools[2].command[0] must name the program literally", "/tools/2/command"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"stdin\": 1}",
     "tools[2].stdin must be a string", "/tools/2/stdin"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"env\": []}",
     "tools[2].env must be an object", "/tools/2/env"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"env\": {\"A\": 1}}",
     "tools[2].env: the value of 'A' must be a string", "/tools/2/env"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"env\": {\"A=B\": \"c\"}}",
     "tools[2].env: 'A=B' is not a valid", "/tools/2/env"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"timeout_ms\": 0}",
     "tools[2].timeout_ms must be an integer from 1 to 86400000",
     "/tools/2/timeout_ms"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"timeout_ms\": \"5s\"}",
     "tools[2].timeout_ms", "/tools/2/timeout_ms"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": 1}",
     "tools[2].ok_exit must be a list of exit statuses such as [0, 1] or a "
     "range such as {\"min\": 0, \"max\": 1}",
     "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": \"0-1\"}",
     "tools[2].ok_exit must be a list", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": []}",
     "tools[2].ok_exit must list at least one exit status", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": [0, 256]}",
     "tools[2].ok_exit[1] must be an exit status, an integer from 0 to 255",
     "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": [-1]}",
     "tools[2].ok_exit[0] must be an exit status", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": [\"1\"]}",
     "tools[2].ok_exit[0] must be an exit status", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": [1.5]}",
     "tools[2].ok_exit[0] must be an exit status", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": {\"min\": 0}}",
     "tools[2].ok_exit range needs both \"min\" and \"max\"",
     "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": "
     "{\"min\": 0, \"max\": 1, \"step\": 1}}",
     "tools[2].ok_exit: unknown key 'step'", "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": "
     "{\"min\": -1, \"max\": 1}}",
     "tools[2].ok_exit.min must be an exit status, an integer from 0 to 255",
     "/tools/2/ok_exit/min"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": "
     "{\"min\": 0, \"max\": 300}}",
     "tools[2].ok_exit.max must be an exit status", "/tools/2/ok_exit/max"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"ok_exit\": "
     "{\"min\": 2, \"max\": 1}}",
     "tools[2].ok_exit.min (2) must not be greater than max (1)",
     "/tools/2/ok_exit"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"shell\": true}",
     "unknown key 'shell' in tools[2]", "/tools/2/shell"},
    {"{\"name\": \"fs\", \"mcp\": {\"command\": [\"npx\"]}}",
     "tools[2] is an MCP server (a tool source)", "/tools/2"},
    {"{\"name\": \"fs\", \"mcp\": 1}", "tools[2].mcp must be an object",
     "/tools/2/mcp"},
    {"{\"name\": \"x\", \"command\": [\"x\"], \"mcp\": {}}",
     "tools[2] has both \"command\" and \"mcp\"", "/tools/2"},
    /* option_args: names of whole-element placeholders of the command */
    {"{\"name\": \"x\", \"command\": [\"x\", \"{a}\"], \"option_args\": \"a\"}",
     "tools[2].option_args must be an array of names", "/tools/2/option_args"},
    {"{\"name\": \"x\", \"command\": [\"x\", \"{a}\"], \"option_args\": [1]}",
     "tools[2].option_args[0] must be the name of a placeholder",
     "/tools/2/option_args"},
    {"{\"name\": \"x\", \"command\": [\"x\", \"{a}\"], "
     "\"option_args\": [\"a\", \"b\"]}",
     "tools[2].option_args[1]: 'b' is not a placeholder of the command",
     "/tools/2/option_args"},
    {"{\"name\": \"x\", \"command\": [\"x\", \"--b={b}\"], "
     "\"option_args\": [\"b\"]}",
     "tools[2].option_args[0]: 'b' is not a placeholder",
     "/tools/2/option_args"},
    {"{\"name\": \"x\", \"command\": [\"x\", \"{a?}\"], "
     "\"option_args\": [\"a\", \"a\"]}",
     "tools[2].option_args[1]: 'a' is listed twice", "/tools/2/option_args"},
    /* context_env: {"allow": [...], "deny": [...]} of name patterns */
    {"{\"name\": \"x\", \"command\": [\"x\"], \"context_env\": []}",
     "tools[2].context_env must be an object with \"allow\" and/or \"deny\"",
     "/tools/2/context_env"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"alow\": [\"A\"]}}",
     "tools[2].context_env: unknown key 'alow'", "/tools/2/context_env"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"allow\": \"PATH\"}}",
     "tools[2].context_env.allow must be an array",
     "/tools/2/context_env/allow"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"deny\": [\"A\", \"B=C\"]}}",
     "tools[2].context_env.deny[1] must be a variable name or a pattern",
     "/tools/2/context_env/deny"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"allow\": [\"\"]}}",
     "tools[2].context_env.allow[0] must be", "/tools/2/context_env/allow"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"allow\": [\"GIT_[A-Z]*\"]}}",
     "tools[2].context_env.allow[0] must be", "/tools/2/context_env/allow"},
    {"{\"name\": \"x\", \"command\": [\"x\"], "
     "\"context_env\": {\"allow\": [null]}}",
     "tools[2].context_env.allow[0] must be", "/tools/2/context_env/allow"},
};

static void bad_entries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_tools / sizeof bad_tools[0]; i++) {
        json_t *entry = tg_test_json(bad_tools[i].entry); /* new ref */
        tg__tool *t = (tg__tool *)1;
        tg_error err = {0};
        int rc = tg__tool_from_config(entry, "tools[2]", &t, &err);
        if (rc != TG_ECONFIG ||
            strstr(err.message, bad_tools[i].message) == NULL ||
            strcmp(err.pointer, bad_tools[i].pointer) != 0)
            fail_msg("case %zu %s: rc %d message '%s' pointer '%s'", i,
                     bad_tools[i].entry, rc, err.message, err.pointer);
        assert_null(t);
        json_decref(entry);
    }
    /* 128 characters is the longest name; 129 is refused */
    char name[130];
    memset(name, 'n', 129);
    name[129] = '\0';
    json_t *entry = json_pack("{s:s,s:[s]}", "name", name, "command", "x");
    tg__tool *t = NULL;
    tg_error err = {0};
    assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err),
                     TG_ECONFIG);
    json_object_set_new(entry, "name", json_stringn(name, 128));
    assert_int_equal(tg__tool_from_config(entry, "tools[0]", &t, &err), 0);
    tg__tool_free(t);
    json_decref(entry);
}

/* ------------------------------------------------------ handler tools */

static void handler_tools(void **state)
{
    (void)state;
    tg__tool *t = NULL;
    tg_error err = {0};
    int ud = 7;
    assert_int_equal(tg__tool_new_handler("h", NULL,
                                          "{\"type\":\"object\",\"properties\":"
                                          "{\"a\":{\"type\":\"integer\"}}}",
                                          noop, &ud, TG_TOOL_INLINE, &t, &err),
                     0);
    assert_int_equal(t->kind, TG_TOOL_KIND_HANDLER);
    assert_string_equal(t->description, "");
    assert_ptr_equal(t->fn, noop);
    assert_ptr_equal(t->user_data, &ud);
    assert_int_equal(t->flags, TG_TOOL_INLINE);
    assert_non_null(json_object_get(t->input_schema, "properties"));
    assert_null(t->argv);
    tg__tool_free(t);

    t = (tg__tool *)1;
    assert_int_equal(
        tg__tool_new_handler("h", "d", "[1]", noop, NULL, 0, &t, &err),
        TG_ESCHEMA);
    assert_null(t);
    assert_int_equal(
        tg__tool_new_handler("h", "d", "{\"type\":", noop, NULL, 0, &t, &err),
        TG_ESCHEMA);
    /* Valid JSON that is not a valid schema: refused at registration,
     * with the JSON pointer of the bad keyword. */
    t = (tg__tool *)1;
    assert_int_equal(
        tg__tool_new_handler("h", "d",
                             "{\"type\":\"object\",\"properties\":{\"n\":{"
                             "\"type\":\"integer\",\"maximum\":\"ten\"}}}",
                             noop, NULL, 0, &t, &err),
        TG_ESCHEMA);
    assert_null(t);
    assert_string_equal(err.pointer, "/properties/n/maximum");
    assert_non_null(strstr(err.message, "tool 'h'"));
    assert_non_null(strstr(err.message, "/properties/n/maximum"));
    /* A valid one is compiled once, here. */
    assert_int_equal(tg__tool_new_handler("h", "d",
                                          "{\"type\":\"object\",\"required\":"
                                          "[\"a\"]}",
                                          noop, NULL, 0, &t, &err),
                     0);
    assert_non_null(t->schema);
    tg__tool_free(t);
    assert_int_equal(
        tg__tool_new_handler("bad name", "d", NULL, noop, NULL, 0, &t, &err),
        TG_EINVAL);
    assert_int_equal(
        tg__tool_new_handler("h", "d", NULL, NULL, NULL, 0, &t, &err),
        TG_EINVAL);
}

/* Command tools from a loaded configuration register like any other. */
static void from_loaded_config(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    tg_error err = {0};
    const char *text = "{\"tools\": [{\"name\": \"a\", \"command\": [\"x\"]},"
                       " {\"name\": \"b\", \"command\": [\"y\", \"{p?}\"]}]}";
    assert_int_equal(tg_config_load(cfg, text, strlen(text), NULL, &err), 0);
    tg__registry *reg = tg__registry_new();
    size_t i;
    json_t *entry; /* borrowed */
    json_array_foreach(cfg->tools, i, entry)
    {
        tg__tool *t = NULL;
        assert_int_equal(tg__tool_from_config(entry, "tools[i]", &t, &err), 0);
        assert_int_equal(tg__registry_add(reg, t, &err), 0);
    }
    assert_int_equal(tg__registry_count(reg), 2);
    assert_non_null(tg__registry_find(reg, "b"));
    tg__registry_free(reg);
    tg_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_and_order), cmocka_unit_test(duplicates),
        cmocka_unit_test(many),           cmocka_unit_test(command_tool),
        cmocka_unit_test(ok_exit_forms),  cmocka_unit_test(bad_entries),
        cmocka_unit_test(handler_tools),  cmocka_unit_test(from_loaded_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
