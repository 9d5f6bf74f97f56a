/* SPDX-License-Identifier: MIT */
/*
 * test_source_config.c - "tools" entries that are MCP servers
 * (source_config.c): defaults, every option read, and each mistake named
 * with its member and JSON pointer, through tg_config_load too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "config.h"
#include "source_config.h"

/* Parses text (one entry); returns the code, *out the config or NULL. */
static int parse(const char *text, tg__source_cfg **out, tg_error *err)
{
    json_error_t je;
    json_t *e = json_loads(text, 0, &je); /* new ref */
    assert_non_null(e);
    memset(err, 0, sizeof *err);
    int rc = tg__source_cfg_parse(e, "tools[0]", out, err);
    json_decref(e);
    return rc;
}

static void defaults(void **state)
{
    (void)state;
    tg__source_cfg *c = NULL;
    tg_error err;
    assert_int_equal(
        parse("{\"name\":\"fs\",\"mcp\":{\"command\":[\"srv\",\"-x\"]}}", &c,
              &err),
        0);
    assert_string_equal(c->name, "fs");
    assert_string_equal(c->sep, "__");
    assert_false(c->trusted);
    assert_int_equal(c->pin, TG__PIN_ON);
    assert_false(c->eager);
    assert_int_equal(json_array_size(c->command), 2);
    assert_null(c->roots);
    assert_null(c->url);
    assert_int_equal(c->timeout_ms, 0);
    assert_int_equal(c->max_tools, TG__SOURCE_DEFAULT_MAX_TOOLS);
    assert_true(c->sandbox);
    tg__source_cfg_free(c);
}

static void every_option(void **state)
{
    (void)state;
    tg__source_cfg *c = NULL;
    tg_error err;
    assert_int_equal(
        parse("{\"name\":\"fs\",\"mcp\":{\"command\":[\"srv\"],"
              "\"env\":{\"A\":\"1\"},\"cwd\":\"/tmp\",\"env_pass\":[\"HOME\"],"
              "\"network\":false,\"sandbox\":false,\"separator\":\".\","
              "\"trusted\":true,\"pin\":\"strict\",\"start\":\"eager\","
              "\"roots\":[\"data\",\"file:///srv/x\"],\"timeout_ms\":500,"
              "\"max_timeout_ms\":9000,\"connect_ms\":1000,"
              "\"max_tools\":5}}",
              &c, &err),
        0);
    assert_string_equal(c->sep, ".");
    assert_true(c->trusted);
    assert_int_equal(c->pin, TG__PIN_STRICT);
    assert_true(c->eager);
    assert_false(c->network);
    assert_false(c->sandbox);
    assert_string_equal(c->cwd, "/tmp");
    assert_int_equal(json_array_size(c->roots), 2);
    assert_int_equal(c->timeout_ms, 500);
    assert_int_equal(c->max_timeout_ms, 9000);
    assert_int_equal(c->connect_ms, 1000);
    assert_int_equal(c->max_tools, 5);
    tg__source_cfg_free(c);

    assert_int_equal(parse("{\"name\":\"docs\",\"mcp\":{\"url\":\"https://"
                           "example.com/mcp\",\"headers\":{\"X-A\":\"b\"},"
                           "\"token_env\":\"DOCS_TOKEN\",\"pin\":\"off\"}}",
                           &c, &err),
                     0);
    assert_string_equal(c->url, "https://example.com/mcp");
    assert_string_equal(c->token_env, "DOCS_TOKEN");
    assert_int_equal(c->pin, TG__PIN_OFF);
    assert_null(c->command);
    tg__source_cfg_free(c);
}

/* Each bad entry fails with TG_ECONFIG, its message holding `says` and
 * its pointer `ptr`. */
static void bad_entries(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says, *ptr;
    } cases[] = {
        {"{\"name\":\"fs\",\"mcp\":{}}", "needs exactly one of",
         "/tools/0/mcp"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"url\":\"http://x\"}}",
         "needs exactly one of", "/tools/0/mcp"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[]}}",
         "tools[0].mcp.command must be a non-empty array",
         "/tools/0/mcp/command"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[1]}}", "[0] must be",
         "/tools/0/mcp/command"},
        {"{\"name\":\"fs\",\"mcp\":[]}", "tools[0].mcp must be an object",
         "/tools/0/mcp"},
        {"{\"name\":\"f s\",\"mcp\":{\"command\":[\"a\"]}}", "tools[0].name",
         "/tools/0/name"},
        {"{\"name\":\"fs\",\"command\":[\"a\"],\"mcp\":{\"command\":[\"a\"]}}",
         "tools[0].command is not a member of an MCP source",
         "/tools/0/command"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"pin\":\"yes\"}}",
         "tools[0].mcp.pin must be", "/tools/0/mcp/pin"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"start\":1}}",
         "tools[0].mcp.start must be", "/tools/0/mcp/start"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"trusted\":\"y\"}}",
         "tools[0].mcp.trusted must be true or false", "/tools/0/mcp/trusted"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"roots\":[\"/\"]}}",
         "must not be '/'", "/tools/0/mcp/roots"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"roots\":"
         "[\"file:///\"]}}",
         "must not be '/'", "/tools/0/mcp/roots"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"roots\":"
         "[\"a/../b\"]}}",
         "'..' segment", "/tools/0/mcp/roots"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"roots\":"
         "[\"http://x/\"]}}",
         "must be a path or a file:// URI", "/tools/0/mcp/roots"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"separator\":\"\"}}",
         "tools[0].mcp.separator must be", "/tools/0/mcp/separator"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"timeout_ms\":0}}",
         "tools[0].mcp.timeout_ms must be an integer",
         "/tools/0/mcp/timeout_ms"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"timeout_ms\":900,"
         "\"max_timeout_ms\":10}}",
         "must not be less than mcp.timeout_ms", "/tools/0/mcp/max_timeout_ms"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"max_tools\":10001}}",
         "from 1 to 10000", "/tools/0/mcp/max_tools"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"cwd\":\"rel\"}}",
         "tools[0].mcp.cwd must be an absolute path", "/tools/0/mcp/cwd"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"env\":{\"A\":1}}}",
         "'A' must be a string", "/tools/0/mcp/env"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"env_pass\":"
         "[\"A-B\"]}}",
         "env_pass[0] must be an environment variable name",
         "/tools/0/mcp/env_pass"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"headers\":{}}}",
         "has \"headers\", which only a server reached over HTTP has",
         "/tools/0/mcp"},
        {"{\"name\":\"fs\",\"mcp\":{\"url\":\"http://x\",\"cwd\":\"/\"}}",
         "has \"cwd\", which only a server run over stdio has", "/tools/0/mcp"},
        {"{\"name\":\"fs\",\"mcp\":{\"url\":\"file:///x\"}}",
         "tools[0].mcp.url must be an http:// or https:// URL",
         "/tools/0/mcp/url"},
        {"{\"name\":\"fs\",\"mcp\":{\"url\":\"http://x\",\"token_env\":\"1\"}}",
         "tools[0].mcp.token_env must be the name", "/tools/0/mcp/token_env"},
        {"{\"name\":\"fs\",\"mcp\":{\"command\":[\"a\"],\"bogus\":1}}",
         "has an unknown member 'bogus'", "/tools/0/mcp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg__source_cfg *c = NULL;
        tg_error err;
        int rc = parse(cases[i].text, &c, &err);
        if (rc != TG_ECONFIG || strstr(err.message, cases[i].says) == NULL ||
            strcmp(err.pointer, cases[i].ptr) != 0)
            fail_msg("case %zu (%s): rc %d, '%s' at '%s'", i, cases[i].text, rc,
                     err.message, err.pointer);
        assert_null(c);
    }
}

/* Through the configuration: a source entry loads beside command tools, a
 * bad one fails the load naming it. */
static void through_config(void **state)
{
    (void)state;
    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    tg_error err = {0};
    const char *ok = "{\"tools\":[{\"name\":\"e\",\"command\":[\"echo\"]},"
                     "{\"name\":\"fs\",\"mcp\":{\"command\":[\"srv\"]}}]}";
    assert_int_equal(tg_config_load(cfg, ok, strlen(ok), NULL, &err), 0);
    assert_int_equal(json_array_size(cfg->tools), 2);
    const char *bad = "{\"tools\":[{\"name\":\"fs\",\"mcp\":{\"command\":"
                      "[\"srv\"],\"pin\":1}}]}";
    assert_int_equal(tg_config_load(cfg, bad, strlen(bad), NULL, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, "tools[0].mcp.pin"));
    const char *twice = "{\"tools\":[{\"name\":\"fs\",\"mcp\":{\"command\":"
                        "[\"a\"]}},{\"name\":\"fs\",\"mcp\":{\"url\":"
                        "\"http://x\"}}]}";
    assert_int_equal(tg_config_load(cfg, twice, strlen(twice), NULL, &err),
                     TG_ECONFIG);
    assert_non_null(strstr(err.message, "already used"));
    tg_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(every_option),
        cmocka_unit_test(bad_entries),
        cmocka_unit_test(through_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
