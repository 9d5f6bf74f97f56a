/* SPDX-License-Identifier: MIT */
/*
 * test_template.c - argv and stdin templates of command tools: whole-element
 * placeholders, optional ones, values written as strings or compact JSON,
 * injection attempts that must stay one literal argv element, missing
 * arguments and NUL bytes refused with the argument named, and the option
 * rule: a value that would be read as an option is refused unless a literal
 * "--" comes before its placeholder or the tool lists it in option_args.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"
#include "tg_json_test.h"

/* Expands tpl with args, the placeholders named in opts_text (a JSON array,
 * or NULL) allowed to be options, and checks the result against want
 * (NULL-ended). */
static void expect_argv_opts(const char *tpl_text, const char *args_text,
                             const char *opts_text, const char *const *want)
{
    json_t *tpl = tg_test_json(tpl_text);                      /* new ref */
    json_t *args = tg_test_json(args_text);                    /* new ref */
    json_t *opts = opts_text ? tg_test_json(opts_text) : NULL; /* new ref */
    char **argv = NULL;
    tg_error err = {0};
    int rc = tg__argv_expand(tpl, args, opts, &argv, NULL, &err);
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
    json_decref(opts);
}

static void expect_argv(const char *tpl_text, const char *args_text,
                        const char *const *want)
{
    expect_argv_opts(tpl_text, args_text, NULL, want);
}

/* Expands tpl with args (opts_text as in expect_argv_opts) and expects the
 * option rule to refuse placeholder `name`. */
static void expect_option_refused(const char *tpl_text, const char *args_text,
                                  const char *opts_text, const char *name)
{
    json_t *tpl = tg_test_json(tpl_text);                      /* new ref */
    json_t *args = tg_test_json(args_text);                    /* new ref */
    json_t *opts = opts_text ? tg_test_json(opts_text) : NULL; /* new ref */
    char **argv = (char **)1;
    tg_error err = {0};
    const char *keyword = NULL;
    int rc = tg__argv_expand(tpl, args, opts, &argv, &keyword, &err);
    if (rc != TG_EINVAL)
        fail_msg("%s with %s: not refused (rc %d)", tpl_text, args_text, rc);
    assert_null(argv);
    assert_non_null(keyword);
    assert_string_equal(keyword, "option");
    char want[300];
    snprintf(want, sizeof want, "/%s", name);
    assert_string_equal(err.pointer, want);
    snprintf(want, sizeof want, "argument '%s' begins with '-'", name);
    assert_non_null(strstr(err.message, want));
    json_decref(tpl);
    json_decref(args);
    json_decref(opts);
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
            tg_test_json("[\"/bin/echo\", \"--\", \"{text}\"]"); /* new ref */
        json_t *args = json_pack("{ss}", "text", attempts[i]);   /* new ref */
        char **argv = NULL;
        tg_error err = {0};
        assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, NULL, &err),
                         0);
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
    /* (a negative number begins with '-': allowed here by option_args) */
    expect_argv_opts(
        "[\"c\", \"{n}\", \"{f}\", \"{t}\", \"{o}\", \"{a}\", "
        "\"{big}\", \"{neg}\", \"{e}\"]",
        "{\"n\": 42, \"f\": 0.1, \"t\": true, "
        "\"o\": {\"z\": [1, 2.5, \"x\\\"y\\n\"], \"a\": null}, "
        "\"a\": [false, {}], \"big\": 9007199254740993, "
        "\"neg\": -7, \"e\": 1e21}",
        "[\"neg\"]",
        (const char *const[]){"c", "42", "0.1", "true",
                              "{\"z\":[1,2.5,\"x\\\"y\\n\"],\"a\":null}",
                              "[false,{}]", "9007199254740993", "-7", "1e+21",
                              NULL});
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
    /* a flag is an option: the tool says so in option_args */
    expect_argv_opts(tpl, "{\"dir\": \"/tmp\", \"flags\": \"-l\"}",
                     "[\"flags\"]",
                     (const char *const[]){"ls", "-l", "/tmp", NULL});
    expect_option_refused(tpl, "{\"dir\": \"/tmp\", \"flags\": \"-l\"}", NULL,
                          "flags");
    /* an empty string is a value, not an absence */
    expect_argv(tpl, "{\"dir\": \"/tmp\", \"flags\": \"\"}",
                (const char *const[]){"ls", "", "/tmp", NULL});
}

static void missing_and_nul(void **state)
{
    (void)state;
    json_t *tpl = tg_test_json("[\"/bin/echo\", \"{text}\"]"); /* new ref */
    char **argv = (char **)1;
    tg_error err = {0};

    json_t *args = tg_test_json("{\"other\": 1}"); /* new ref */
    assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, NULL, &err),
                     TG_EINVAL);
    assert_null(argv);
    assert_string_equal(err.message,
                        "missing argument 'text' (needed by the command line)");
    assert_string_equal(err.pointer, "/text");
    const char *missing_kw = NULL;
    assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, &missing_kw, &err),
                     TG_EINVAL);
    assert_string_equal(missing_kw, "required");
    json_decref(args);

    /* null counts as missing for a required placeholder */
    args = tg_test_json("{\"text\": null}");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, NULL, &err),
                     TG_EINVAL);
    assert_string_equal(err.pointer, "/text");
    json_decref(args);

    /* NULL arguments: every placeholder is absent */
    assert_int_equal(tg__argv_expand(tpl, NULL, NULL, &argv, NULL, &err),
                     TG_EINVAL);

    /* a NUL byte would silently cut the argv element: refused */
    args = tg_test_json("{\"text\": \"safe\\u0000; rm -rf /\"}");
    memset(&err, 0, sizeof err);
    assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, NULL, &err),
                     TG_EINVAL);
    assert_non_null(strstr(err.message, "'text'"));
    assert_non_null(strstr(err.message, "NUL"));
    assert_string_equal(err.pointer, "/text");
    const char *keyword = NULL;
    assert_int_equal(tg__argv_expand(tpl, args, NULL, &argv, &keyword, &err),
                     TG_EINVAL);
    assert_string_equal(keyword, "nul");
    json_decref(args);

    /* inside JSON values NUL is escaped, so it is fine there */
    json_decref(tpl);
    expect_argv("[\"c\", \"{o}\"]", "{\"o\": [\"a\\u0000b\"]}",
                (const char *const[]){"c", "[\"a\\u0000b\"]", NULL});

    /* a template without placeholders needs no arguments */
    expect_argv("[\"true\"]", "{}", (const char *const[]){"true", NULL});
}

/* ------------------------------------------------------- option rule */

static void expect_stdin(const char *tpl, const char *args_text,
                         const char *want, size_t want_len);

/* Values that a program would read as an option (or, "-", as its standard
 * input), as JSON. */
static const char *const option_values[] = {
    "\"-odata.txt\"", /* sort -o: writes over data.txt */
    "\"-la\"",        /* ls */
    "\"-e.*\"",       /* grep -e */
    "\"--output=x\"",
    "\"--help\"",
    "\"-\"",
    "\"--\"",
    "\"-\\n\"",
    "\"-5\"",
    "-5",    /* a number: tail -5, grep -5, kill -5 */
    "-0.5",  /* "-0.5": options 0, '.', 5 */
    "-1e-7", /* grep -1 -e -7 */
    "-9007199254740993",
};

static void option_rule(void **state)
{
    (void)state;
    char args[128];
    for (size_t i = 0; i < sizeof option_values / sizeof option_values[0];
         i++) {
        snprintf(args, sizeof args, "{\"file\": %s}", option_values[i]);
        /* the example: sort {file} with -odata.txt */
        expect_option_refused("[\"/usr/bin/sort\", \"{file}\"]", args, NULL,
                              "file");
        /* optional placeholders, and after other placeholders and options */
        expect_option_refused("[\"ls\", \"-1\", \"{x?}\", \"{file?}\"]", args,
                              "[\"x\"]", "file");
        /* a "--" that is not an element of its own is no end of options */
        expect_option_refused("[\"c\", \"--x\", \"{file}\", \"--\"]", args,
                              NULL, "file");
        /* option_args naming another placeholder does not cover this one */
        expect_option_refused("[\"c\", \"{flags?}\", \"{file}\"]", args,
                              "[\"flags\"]", "file");
        /* after a literal "--" every value is an operand */
        json_t *v = tg_test_json(option_values[i]); /* new ref */
        char text[64];
        if (json_is_string(v))
            snprintf(text, sizeof text, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT,
                     json_integer_value(v));
        else
            snprintf(text, sizeof text, "%s",
                     strcmp(option_values[i], "-0.5") == 0 ? "-0.5" : "-1e-7");
        json_decref(v);
        expect_argv("[\"/usr/bin/sort\", \"--\", \"{file}\"]", args,
                    (const char *const[]){"/usr/bin/sort", "--", text, NULL});
        expect_argv(
            "[\"grep\", \"-n\", \"--\", \"{file}\", \"{file}\"]", args,
            (const char *const[]){"grep", "-n", "--", text, text, NULL});
        /* and option_args lets it be an option */
        expect_argv_opts("[\"ls\", \"{file}\"]", args, "[\"other\", \"file\"]",
                         (const char *const[]){"ls", text, NULL});
    }

    /* values that begin with anything else are operands already */
    expect_argv("[\"c\", \"{a}\", \"{b}\", \"{c}\", \"{d}\", \"{e}\", \"{f}\", "
                "\"{g}\", \"{h}\", \"{*}\"]",
                "{\"a\": \"./-odata.txt\", \"b\": \" -x\", \"c\": \"a-b\", "
                "\"d\": \"\", \"e\": 5, \"f\": \"+x\", \"g\": [\"-x\"], "
                "\"h\": {\"-\": 1}}",
                (const char *const[]){"c", "./-odata.txt", " -x", "a-b", "",
                                      "5", "+x", "[\"-x\"]", "{\"-\":1}",
                                      "{\"a\":\"./-odata.txt\",\"b\":\" -x\","
                                      "\"c\":\"a-b\",\"d\":\"\",\"e\":5,"
                                      "\"f\":\"+x\",\"g\":[\"-x\"],\"h\":"
                                      "{\"-\":1}}",
                                      NULL});
    /* an element that only contains a placeholder is literal: a value never
     * starts it */
    expect_argv(
        "[\"c\", \"--file={file}\", \"{file}.txt\"]", "{\"file\": \"-x\"}",
        (const char *const[]){"c", "--file={file}", "{file}.txt", NULL});
    /* a value "--" is not the template's "--": what follows is judged */
    expect_option_refused("[\"c\", \"{a}\", \"{b}\"]",
                          "{\"a\": \"--\", \"b\": \"-rf\"}", "[\"a\"]", "b");
    /* an absent optional placeholder is simply dropped */
    expect_argv("[\"c\", \"{a?}\"]", "{}", (const char *const[]){"c", NULL});
    /* the stdin template is no command line: nothing to refuse */
    expect_stdin("{x}", "{\"x\": \"-odata.txt\"}", "-odata.txt", 10);

    /* the message names the argument and the way out, never the value */
    json_t *tpl = tg_test_json("[\"/usr/bin/sort\", \"{file}\"]"); /* new ref */
    json_t *a =
        tg_test_json("{\"file\": \"-o\\u001b[2Jdata.txt\"}"); /* new ref */
    char **argv = NULL;
    tg_error err = {0};
    assert_int_equal(tg__argv_expand(tpl, a, NULL, &argv, NULL, &err),
                     TG_EINVAL);
    assert_string_equal(
        err.message,
        "argument 'file' begins with '-', so '/usr/bin/sort' would read it "
        "as an option; refused (pass a value that does not begin with '-', "
        "a path as './-name'; to allow it, the tool's command can put \"--\" "
        "before {file}, or its \"option_args\" can list \"file\")");
    assert_null(strchr(err.message, '\x1b'));
    json_decref(a);
    json_decref(tpl);
}

static void has_placeholder(void **state)
{
    (void)state;
    json_t *tpl =
        tg_test_json("[\"c\", \"{a}\", \"{b?}\", \"--x={c}\", \"{*}\", "
                     "\"{ d }\"]"); /* new ref */
    assert_true(tg__argv_has_placeholder(tpl, "a"));
    assert_true(tg__argv_has_placeholder(tpl, "b"));
    assert_true(tg__argv_has_placeholder(tpl, "*"));
    assert_false(tg__argv_has_placeholder(tpl, "b?"));
    assert_false(tg__argv_has_placeholder(tpl, "c"));
    assert_false(tg__argv_has_placeholder(tpl, "d"));
    assert_false(tg__argv_has_placeholder(tpl, ""));
    assert_false(tg__argv_has_placeholder(tpl, "ab"));
    json_decref(tpl);
}

/* ------------------------------------------------------------- stdin */

static void expect_stdin(const char *tpl, const char *args_text,
                         const char *want, size_t want_len)
{
    json_t *args = tg_test_json(args_text); /* new ref */
    tg__buf out;
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
    json_t *args = tg_test_json("{\"a\": \"0123456789\"}"); /* new ref */
    tg__buf out;
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
        cmocka_unit_test(option_rule),
        cmocka_unit_test(has_placeholder),
        cmocka_unit_test(stdin_templates),
        cmocka_unit_test(stdin_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
