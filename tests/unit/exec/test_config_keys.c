/* SPDX-License-Identifier: MIT */
/*
 * test_config_keys.c - the table of configuration keys
 * (src/registry/config_keys.c) against the loaders: every key the table
 * lists (and docs/configuration.md documents) is read and checked by a
 * loader, so a value of the wrong kind is refused naming that key, never
 * ignored and never called unknown; a key the table does not list is
 * refused as unknown in every section. The policy's rules are checked by
 * the policy compiler too, so both are run. Here (exec) because the test
 * needs the registry and the policy layers together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_keys.h"
#include "policy.h"

/* For each section: a configuration holding one object of it, and the
 * JSON pointer of that object. */
static const struct {
    const char *id;
    const char *base;
    const char *at;
} bases[] = {
    {"", "{}", ""},
    {"journal", "{\"journal\":{}}", "/journal"},
    {"spool", "{\"spool\":{}}", "/spool"},
    {"limits", "{\"limits\":{}}", "/limits"},
    {"serve", "{\"serve\":{}}", "/serve"},
    {"policy", "{\"policy\":{}}", "/policy"},
    {"policy.rules[]", "{\"policy\":{\"rules\":[{\"decision\":\"allow\"}]}}",
     "/policy/rules/0"},
    {"hooks", "{\"hooks\":{}}", "/hooks"},
    {"hooks.before[]", "{\"hooks\":{\"before\":[{\"command\":[\"true\"]}]}}",
     "/hooks/before/0"},
    {"sandbox", "{\"sandbox\":{}}", "/sandbox"},
    {"sandbox.rlimits", "{\"sandbox\":{\"rlimits\":{}}}", "/sandbox/rlimits"},
    {"tools[]", "{\"tools\":[{\"name\":\"t\",\"command\":[\"true\"]}]}",
     "/tools/0"},
    {"tools[].ok_exit",
     "{\"tools\":[{\"name\":\"t\",\"command\":[\"true\"],"
     "\"ok_exit\":{\"min\":0,\"max\":1}}]}",
     "/tools/0/ok_exit"},
    {"tools[].context_env",
     "{\"tools\":[{\"name\":\"t\",\"command\":[\"true\"],"
     "\"context_env\":{}}]}",
     "/tools/0/context_env"},
    {"tools[] (MCP source)",
     "{\"tools\":[{\"name\":\"s\",\"mcp\":{\"command\":[\"true\"]}}]}",
     "/tools/0"},
    {"tools[].mcp",
     "{\"tools\":[{\"name\":\"s\",\"mcp\":{\"command\":[\"true\"]}}]}",
     "/tools/0/mcp"},
};

static const char *base_of(const char *id, const char **at)
{
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
        if (strcmp(bases[i].id, id) == 0) {
            *at = bases[i].at;
            return bases[i].base;
        }
    return NULL;
}

/* Loads the section's base configuration with member `name` set to
 * `value` (JSON text), then compiles its policy as a runtime would.
 * Returns the first failure's code and message (0 when all passed). */
static int load_with(const char *id, const char *name, const char *value,
                     tg_error *err)
{
    const char *at = NULL;
    const char *text = base_of(id, &at);
    if (text == NULL)
        fail_msg("section '%s' has no base configuration in this test", id);
    json_t *root = json_loads(text, 0, NULL); /* new ref */
    assert_non_null(root);
    /* walk the pointer: object members and one-digit array indexes */
    json_t *obj = root; /* borrowed */
    for (const char *p = at; obj != NULL && *p == '/';) {
        const char *seg = p + 1;
        size_t len = strcspn(seg, "/");
        char name_buf[32];
        snprintf(name_buf, sizeof name_buf, "%.*s", (int)len, seg);
        obj = json_is_array(obj) ? json_array_get(obj, (size_t)(seg[0] - '0'))
                                 : json_object_get(obj, name_buf);
        p = seg + len;
    }
    assert_non_null(obj);
    json_t *v = json_loads(value, JSON_DECODE_ANY, NULL); /* new ref */
    assert_non_null(v);
    assert_int_equal(json_object_set_new(obj, name, v), 0);
    char *doc = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    assert_non_null(doc);

    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    memset(err, 0, sizeof *err);
    int rc = tg_config_load(cfg, doc, strlen(doc), ".", err);
    if (rc == 0 && cfg->policy != NULL) {
        tg__policy *p = NULL;
        rc = tg__policy_compile(cfg->policy, &p, err);
        tg__policy_free(p);
    }
    tg_config_free(cfg);
    free(doc);
    return rc;
}

static bool says_unknown(const char *m)
{
    return strstr(m, "unknown") || strstr(m, "not a member") ||
           strstr(m, "not a known key");
}

/* Every base configuration loads: the failures below are the probe's. */
static void test_bases_load(void **state)
{
    (void)state;
    for (const tg__config_section *s = tg__config_sections; s->id; s++) {
        tg_error err;
        const char *at = NULL;
        const char *text = base_of(s->id, &at);
        if (text == NULL)
            fail_msg("section '%s' has no base configuration in this test",
                     s->id);
        tg_config *cfg = tg_config_new();
        assert_non_null(cfg);
        memset(&err, 0, sizeof err);
        int rc = tg_config_load(cfg, text, strlen(text), ".", &err);
        tg_config_free(cfg);
        if (rc != 0)
            fail_msg("base of section '%s' does not load: %s", s->id,
                     err.message);
    }
}

/* A documented key is read: a value of the wrong kind is refused, naming
 * the key, not called unknown. */
static void test_every_key_is_read(void **state)
{
    (void)state;
    size_t n = 0;
    for (const tg__config_key *k = tg__config_keys; k->section; k++, n++) {
        tg_error err;
        int rc = load_with(k->section, k->name, "[[[{}]]]", &err);
        if (rc == 0)
            fail_msg("key '%s' of section '%s' is documented but a value of "
                     "the wrong kind was accepted: no loader reads it",
                     k->name, k->section);
        if (says_unknown(err.message))
            fail_msg("key '%s' of section '%s' is documented but refused "
                     "as unknown: %s",
                     k->name, k->section, err.message);
        if (strstr(err.message, k->name) == NULL)
            fail_msg("the error for key '%s' of section '%s' does not name "
                     "it: %s",
                     k->name, k->section, err.message);
    }
    assert_true(n > 50);
}

/* A key the table does not list is refused as unknown, in every section:
 * what a loader accepts is what the table (and the reference) lists. */
static void test_unlisted_key_is_unknown(void **state)
{
    (void)state;
    for (const tg__config_section *s = tg__config_sections; s->id; s++) {
        tg_error err;
        int rc = load_with(s->id, "not_a_documented_key", "1", &err);
        if (rc == 0 || !says_unknown(err.message) ||
            strstr(err.message, "not_a_documented_key") == NULL)
            fail_msg("section '%s': an undocumented key was not refused as "
                     "unknown (rc %d): %s",
                     s->id, rc, err.message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bases_load),
        cmocka_unit_test(test_every_key_is_read),
        cmocka_unit_test(test_unlisted_key_is_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
