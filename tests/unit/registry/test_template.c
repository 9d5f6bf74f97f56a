/* SPDX-License-Identifier: MIT */
/*
 * test_template.c - argv and stdin templates of command tools: whole-element
 * placeholders, optional ones, values written as strings or compact JSON,
 * injection attempts that must stay one literal argv element, missing
 * arguments and NUL bytes refused with the argument named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "template.h"

static json_t *parse(const char *text)
{
    json_error_t jerr;
    /* JSON_ALLOW_NUL: arguments from a model may carry "\u0000" */
    json_t *v = json_loads(text, JSON_ALLOW_NUL, &jerr); /* new ref */
    if (v == NULL)
        fail_msg("bad test JSON %s: %s", text, jerr.text);
    return v;
}

/* Expands tpl with args and checks the result against want (NULL-ended). */
static void expect_argv(const char *tpl_text, const char *args_text,
                        const char *const *want)
{
    json_t *tpl = parse(tpl_text);   /* new ref */
    json_t *args = parse(args_text); /* new ref */
    char **argv = NULL;
    tg_error err = {0};
    int rc = tg__argv_expand(tpl, args, &argv, &err);
    if (rc != 0)
        fail_msg("%s with %s: %s", tpl_text, args_text, err.message);
    size_t i = 0;
    for (; want[i]; i++) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], want[i]);
    }
    assert_null(argv[i]);
    tg__argv_free(argv);
    json_decref(tpl);
    json_decref(args);
}

static void placeholders(void **state)
{
    (void)state;
    expect_argv("[\"/bin/echo\", \"{text}\"]", "{\"text\": \"hello world\"}",
                (const char *const[]){"/bin/echo", "hello world", NULL});
    /* no word splitting, no partial substitution, literals untouched */
    expect_argv("[\"cmd\", \"--name={text}\", \"{text}.txt\", \"{text}\", "
                "\"{ text }\", \"{}\", \"{print $1}\", \"{{text}}\"]",
                "{\"text\": \"a b\"}",
                (const char *const[]){"cmd", "--name={text}", "{text}.txt",
                                      "a b", "{ text }", "{}", "{print $1}",
                                      "{{text}}", NULL});
    /* a value that looks like a placeholder is not expanded again */
    expect_argv("[\"cmd\", \"{a}\", \"{b}\"]", "{\"a\": \"{b}\", \"b\": \"B\"}",
                (const char *const[]){"cmd", "{b}", "B", NULL});
    /* names may hold '.', '-' and '_' */
    expect_argv("[\"cmd\", \"{file.name}\", \"{x-y_z}\"]",
                "{\"file.name\": \"f\", \"x-y_z\": \"v\"}",
                (const char *const[]){"cmd", "f", "v", NULL});
}

static void injection_stays_literal(void **state)
{
    (void)state;
    static const char *const attempts[] = {
        "; rm -rf /", "$(id)",          "`id`",        "a\nb\nc", "--opt=x",
        "-rf",        "x && curl evil", "| sh",        "' \" \\", "${HOME}",
        "*",          "> /etc/passwd",  "\t--verbose", "",
    };
    for (size_t i = 0; i < sizeof attempts / sizeof attempts[0]; i++) {
        json_t *tpl =
            parse("[\"/bin/echo\", \"--\", \"{text}\"]");      /* new ref */
        json_t *args = json_pack("{ss}", "text", attempts[i]); /* new ref */
        char **argv = NULL;
        tg_error err = {0};
        assert_int_equal(tg__argv_expand(tpl, args, &argv, &err), 0);
        assert_string_equal(argv[0], "/bin/echo");
        assert_string_equal(argv[1], "--");
        assert_string_equal(argv[2], attempts[i]);
        assert_null(argv[3]);
        tg__argv_free(argv);
        json_decref(tpl);
        json_decref(args);
    }
}

static void json_values(void **state)
{
    (void)state;
    expect_argv("[\"c\", \"{n}\", \"{f}\", \"{t}\", \"{o}\", \"{a}\", "
                "\"{big}\", \"{neg}\", \"{e}\"]",
                "{\"n\": 42, \"f\": 0.1, \"t\": true, "
                "\"o\": {\"z\": [1, 2.5, \"x\\\"y\\n\"], \"a\": null}, "
                "\"a\": [false, {}], \"big\": 9007199254740993, "
                "\"neg\": -7, \"e\": 1e21}",
                (const char *const[]){
                    "c", "42", "0.1", "true",
                    "{\"z\":[1,2.5,\"x\\\"y\\n\"],\"a\":null}", "[false,{}]",
                    "9007199254740993", "-7", "1e+21", NULL});
    /* {*} is the whole arguments object */
    expect_argv("[\"c\", \"{*}\"]", "{\"b\": 1, \"a\": \"x\"}",
                (const char *const[]){"c", "{\"b\":1,\"a\":\"x\"}", NULL});
}

static void optional(void **state)
{
    (void)state;
    const char *tpl = "[\"ls\", \"{flags?}\", \"{dir}\"]";
    expect_argv(tpl, "{\"dir\": \"/tmp\"}",
                (const char *const[]){"ls", "/tmp", NULL});
    expect_argv(tpl, "{\"dir\": \"/tmp\", \"flags\": null}",
                (const char *const[]){"ls", "/tmp", NULL});
    expect_argv(tpl, "{\"dir\": \"/tmp\", \"flags\": \"-l\"}",
                (const char *const[]){"ls", "-l", "/tmp", NULL});
    /* an empty string is a value, not an absence */
    expect_argv(tpl, "{\"dir\": \"/tmp\", \"flags\": \"\"}",
                (const char *const[]){"ls", "", "/tmp", NULL});
}

static void missing_and_nul(void **state)
{
    (void)state;
    json_t *tpl = parse("[\"/bin/echo\", \"{text}\"]"); /* new ref */
    char **argv = (char **)1;
    tg_error err = {0};

    json_t *args = parse("{\"other\": 1}"); /* new ref */
    assert_int_equal(tg__argv_expand(tpl, args, &argv, &err), TG_EINVAL);
    assert_null(argv);
    assert_string_equal(err.message,
                        "missing argument 'text' (needed by the command line)");
    assert_string_equal(err.pointer, "/text");
    json_decref(args);

    /* null counts as missing for a required placeholder */
    args = parse("{\"text\": null}");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__argv_expand(tpl, args, &argv, &err), TG_EINVAL);
    assert_string_equal(err.pointer, "/text");
    json_decref(args);

    /* NULL arguments: every placeholder is absent */
    assert_int_equal(tg__argv_expand(tpl, NULL, &argv, &err), TG_EINVAL);

    /* a NUL byte would silently cut the argv element: refused */
    args = parse("{\"text\": \"safe\\u0000; rm -rf /\"}");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__argv_expand(tpl, args, &argv, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "'text'"));
    assert_non_null(strstr(err.message, "NUL"));
    assert_string_equal(err.pointer, "/text");
    json_decref(args);

    /* inside JSON values NUL is escaped, so it is fine there */
    json_decref(tpl);
    expect_argv("[\"c\", \"{o}\"]", "{\"o\": [\"a\\u0000b\"]}",
                (const char *const[]){"c", "[\"a\\u0000b\"]", NULL});

    /* a template without placeholders needs no arguments */
    expect_argv("[\"true\"]", "{}", (const char *const[]){"true", NULL});
}

/* ------------------------------------------------------------- stdin */

static void expect_stdin(const char *tpl, const char *args_text,
                         const char *want, size_t want_len)
{
    json_t *args = parse(args_text); /* new ref */
    tg_buf out;
    tg__buf_init(&out, 0);
    tg_error err = {0};
    int rc = tg__stdin_expand(tpl, args, &out, &err);
    if (rc != 0)
        fail_msg("%s with %s: %s", tpl, args_text, err.message);
    assert_int_equal(out.len, want_len);
    assert_memory_equal(tg__buf_cstr(&out), want, want_len);
    tg__buf_cleanup(&out);
    json_decref(args);
}

#define EXPECT_STDIN(tpl, args, want)                                          \
    expect_stdin(tpl, args, want, sizeof(want) - 1)

static void stdin_templates(void **state)
{
    (void)state;
    EXPECT_STDIN("{text}", "{\"text\": \"hello\\n\"}", "hello\n");
    EXPECT_STDIN("Dear {name}, n={n}; all: {*}",
                 "{\"name\": \"Ann\", \"n\": 2.5}",
                 "Dear Ann, n=2.5; all: {\"name\":\"Ann\",\"n\":2.5}");
    /* JSON and other braces in the template are literal text */
    EXPECT_STDIN("{\"query\": {q}, \"opts\": {}}\n", "{\"q\": [1,\"a\"]}",
                 "{\"query\": [1,\"a\"], \"opts\": {}}\n");
    EXPECT_STDIN("{{x}} { x } {x", "{\"x\": \"X\"}", "{X} { x } {x");
    EXPECT_STDIN("[{opt?}]", "{}", "[]");
    EXPECT_STDIN("[{opt?}]", "{\"opt\": false}", "[false]");
    EXPECT_STDIN("no placeholders", "{}", "no placeholders");
    EXPECT_STDIN("", "{\"a\": 1}", "");
    /* stdin is bytes: a NUL inside a string value is kept */
    EXPECT_STDIN("<{b}>", "{\"b\": \"a\\u0000b\"}", "<a\0b>");
    /* shell syntax means nothing here either */
    EXPECT_STDIN("{cmd}", "{\"cmd\": \"$(id); `id`\"}", "$(id); `id`");
}

static void stdin_errors(void **state)
{
    (void)state;
    json_t *args = parse("{\"a\": \"0123456789\"}"); /* new ref */
    tg_buf out;
    tg__buf_init(&out, 0);
    tg_error err = {0};
    assert_int_equal(tg__stdin_expand("x {b} y", args, &out, &err), TG_EINVAL);
    assert_string_equal(err.message,
                        "missing argument 'b' (needed by the standard input)");
    assert_string_equal(err.pointer, "/b");
    tg__buf_cleanup(&out);

    /* the caller's cap holds */
    tg__buf_init(&out, 15);
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__stdin_expand("{a}{a}", args, &out, &err), TG_ELIMIT);
    assert_int_equal(err.code, TG_ELIMIT);
    assert_true(out.len <= 15);
    tg__buf_cleanup(&out);
    json_decref(args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placeholders),
        cmocka_unit_test(injection_stays_literal),
        cmocka_unit_test(json_values),
        cmocka_unit_test(optional),
        cmocka_unit_test(missing_and_nul),
        cmocka_unit_test(stdin_templates),
        cmocka_unit_test(stdin_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
