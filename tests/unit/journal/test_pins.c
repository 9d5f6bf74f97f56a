/* SPDX-License-Identifier: MIT */
/*
 * test_pins.c - the pins of remote tool definitions in a real journal
 * file (src/journal/pins.c): first sight pins once; a changed definition
 * waits (pending) beside the accepted one, a new tool under strict pinning
 * is held; accepting takes only the definition the user was shown, retires
 * the old name of a rename, and survives reopening; other sources' pins
 * stay apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "jtest.h"

static void ok(int rc, const tg_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->message);
}

static tg__pin_row *read_pins(tg__journal *j, const char *source, size_t *n)
{
    tg__pin_row *rows = NULL;
    tg_error err = {0};
    ok(tg__journal_pins_read(j, source, &rows, n, &err), &err);
    return rows;
}

static void test_first_seen_and_change(void **state)
{
    struct jt_fixture *f = *state;
    tg_error err = {0};
    tg__journal *j = jt_open(f->path, NULL);
    ok(tg__journal_pin_first_seen(j, "fs", "write_file", "sha256:aa",
                                  "{\"name\":\"write_file\"}", &err),
       &err);
    ok(tg__journal_pin_first_seen(j, "fs", "read_file", "sha256:bb",
                                  "{\"name\":\"read_file\"}", &err),
       &err);
    ok(tg__journal_pin_first_seen(j, "docs", "search", "sha256:cc", "{}", &err),
       &err);
    /* once */
    assert_int_equal(tg__journal_pin_first_seen(j, "fs", "write_file",
                                                "sha256:zz", "{}", &err),
                     TG_EEXIST);
    size_t n = 0;
    tg__pin_row *rows = read_pins(j, "fs", &n);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].tool, "read_file"); /* sorted */
    assert_string_equal(rows[1].tool, "write_file");
    assert_string_equal(rows[1].checksum, "sha256:aa");
    assert_int_equal(rows[1].state, TG_PIN_STATE_PINNED);
    assert_int_equal(rows[1].accepted_at, 0);
    assert_true(rows[1].first_seen > 0);
    assert_null(rows[1].pending_checksum);
    tg__journal_pins_free(rows, n);

    /* the server changes write_file twice before the user looks */
    ok(tg__journal_pin_hold(j, "fs", "write_file", "sha256:a2",
                            "{\"name\":\"write_file\",\"v\":2}", NULL, &err),
       &err);
    rows = read_pins(j, "fs", &n);
    int64_t since = rows[1].pending_since;
    assert_true(since > 0);
    tg__journal_pins_free(rows, n);
    ok(tg__journal_pin_hold(j, "fs", "write_file", "sha256:a3",
                            "{\"name\":\"write_file\",\"v\":3}", NULL, &err),
       &err);
    rows = read_pins(j, "fs", &n);
    assert_int_equal(rows[1].state, TG_PIN_STATE_PENDING);
    assert_string_equal(rows[1].checksum, "sha256:aa"); /* still in force */
    assert_string_equal(rows[1].pending_checksum, "sha256:a3");
    assert_string_equal(rows[1].pending_definition,
                        "{\"name\":\"write_file\",\"v\":3}");
    assert_int_equal(rows[1].pending_since, since);
    tg__journal_pins_free(rows, n);

    /* accepting what the user saw (a2) fails: a3 waits now */
    assert_int_equal(
        tg__journal_pin_accept(j, "fs", "write_file", "sha256:a2", &err),
        TG_EEXIST);
    assert_non_null(strstr(err.message, "sha256:a3"));
    ok(tg__journal_pin_accept(j, "fs", "write_file", "sha256:a3", &err), &err);
    assert_int_equal(tg__journal_pin_accept(j, "fs", "write_file", NULL, &err),
                     TG_ENOTFOUND);
    assert_int_equal(tg__journal_pin_accept(j, "fs", "nothing", NULL, &err),
                     TG_ENOTFOUND);
    tg__journal_close(j);

    j = jt_open(f->path, NULL);
    rows = read_pins(j, "fs", &n);
    assert_int_equal(rows[1].state, TG_PIN_STATE_PINNED);
    assert_string_equal(rows[1].checksum, "sha256:a3");
    assert_string_equal(rows[1].definition,
                        "{\"name\":\"write_file\",\"v\":3}");
    assert_true(rows[1].accepted_at > 0);
    assert_null(rows[1].pending_checksum);
    assert_int_equal(rows[1].pending_since, 0);
    tg__journal_pins_free(rows, n);
    rows = read_pins(j, "docs", &n);
    assert_int_equal(n, 1);
    tg__journal_pins_free(rows, n);
    rows = read_pins(j, "none", &n);
    assert_int_equal(n, 0);
    assert_null(rows);
    tg__journal_close(j);
}

static void test_held_and_renamed(void **state)
{
    struct jt_fixture *f = *state;
    tg_error err = {0};
    size_t n = 0;
    tg__journal *j = jt_open(f->path, NULL);
    ok(tg__journal_pin_first_seen(j, "fs", "write", "sha256:w", "{\"w\":1}",
                                  &err),
       &err);
    /* a new tool under strict pinning, and a rename of write */
    ok(tg__journal_pin_hold(j, "fs", "list", "sha256:l", "{\"l\":1}", NULL,
                            &err),
       &err);
    ok(tg__journal_pin_hold(j, "fs", "write_file", "sha256:w2", "{\"w\":1}",
                            "write", &err),
       &err);
    tg__pin_row *rows = read_pins(j, "fs", &n);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].tool, "list");
    assert_int_equal(rows[0].state, TG_PIN_STATE_HELD);
    assert_null(rows[0].checksum);
    assert_null(rows[0].definition);
    assert_string_equal(rows[0].pending_checksum, "sha256:l");
    assert_string_equal(rows[2].tool, "write_file");
    assert_string_equal(rows[2].renamed_from, "write");
    tg__journal_pins_free(rows, n);

    ok(tg__journal_pin_accept(j, "fs", "list", NULL, &err), &err);
    ok(tg__journal_pin_accept(j, "fs", "write_file", "sha256:w2", &err), &err);
    rows = read_pins(j, "fs", &n);
    assert_int_equal(n, 2); /* write is gone: it lives on as write_file */
    assert_string_equal(rows[0].tool, "list");
    assert_int_equal(rows[0].state, TG_PIN_STATE_PINNED);
    assert_string_equal(rows[0].checksum, "sha256:l");
    assert_string_equal(rows[1].tool, "write_file");
    assert_null(rows[1].renamed_from);
    tg__journal_pins_free(rows, n);

    ok(tg__journal_pin_forget(j, "fs", "list", &err), &err);
    assert_int_equal(tg__journal_pin_forget(j, "fs", "list", &err),
                     TG_ENOTFOUND);
    assert_int_equal(tg__journal_pin_first_seen(j, "fs", NULL, "x", "{}", &err),
                     TG_EINVAL);
    tg__journal_close(j);
    /* the rows survive in the file, beside the calls */
    assert_int_equal(jt_count(f->path, "SELECT count(*) FROM pins"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_seen_and_change, jt_setup,
                                        jt_teardown),
        cmocka_unit_test_setup_teardown(test_held_and_renamed, jt_setup,
                                        jt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
