/* SPDX-License-Identifier: MIT */
/*
 * test_builtin.c - the built-in file tools on a real temporary tree:
 * confinement to the workspace (.., absolute paths, a sibling directory
 * sharing the prefix, symlinks out and in, NUL bytes) through openat2 and
 * through the fallback walk, then read_file, list_dir and grep, including an
 * invalid pattern and a catastrophic one that must end at the match limit,
 * write_file, and every route into toolgate's own files refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "tg_test.h"
#include "workspace.h"
#include "tg_json_test.h"

/* room for any path below the tree plus a name */
#define PBUF (2 * PATH_MAX + 64)

typedef struct tree {
    char root[PATH_MAX];   /* the temporary directory (real path) */
    char ws[PATH_MAX + 8]; /* root/ws, the workspace */
} tree;

/* ----------------------------------------------------------- helpers */

static void put(const tree *t, const char *rel, const char *data, size_t n)
{
    char path[PBUF];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

#define PUT(t, rel, lit) put(t, rel, lit, sizeof(lit) - 1)

static void dir(const tree *t, const char *rel)
{
    char path[PBUF];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    assert_int_equal(mkdir(path, 0700), 0);
}

static void link_at(const tree *t, const char *target, const char *rel)
{
    char path[PBUF];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    assert_int_equal(symlink(target, path), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    tree *t = calloc(1, sizeof *t);
    char tmpl[] = "/tmp/tg_builtin_XXXXXX";
    if (t == NULL || mkdtemp(tmpl) == NULL || realpath(tmpl, t->root) == NULL)
        return -1;
    snprintf(t->ws, sizeof t->ws, "%s/ws", t->root);
    dir(t, "ws");
    dir(t, "ws2"); /* shares the prefix "ws": must not count as inside */
    dir(t, "outside");
    dir(t, "ws/sub");
    dir(t, "ws/sub/deep");
    dir(t, "ws/.git");
    dir(t, "ws/.toolgate");
    PUT(t, "ws/a.txt", "hello\nworld\nthird line\n");
    PUT(t, "ws/sub/b.c", "int main(void)\n{\n    return 0; /* TODO */\n}\n");
    PUT(t, "ws/sub/deep/c.txt", "TODO deep\n");
    PUT(t, "ws/bin.dat", "TODO\0binary TODO\n");
    PUT(t, "ws/.git/config", "TODO in git\n");
    PUT(t, "ws/.toolgate/x", "TODO in toolgate\n");
    PUT(t, "ws/utf.txt", "h\xc3\xa9llo w\xc3\xb6rld\n");
    PUT(t, "ws/empty", "");
    PUT(t, "outside/secret", "TOP SECRET TODO\n");
    PUT(t, "ws2/secret", "SIBLING TODO\n");
    link_at(t, "sub", "ws/link_in");
    link_at(t, "a.txt", "ws/link_file");
    link_at(t, "../outside", "ws/link_out");
    link_at(t, "sub/../../outside/secret", "ws/link_out2");
    link_at(t, "/etc", "ws/abs_link");
    char abs[PBUF];
    snprintf(abs, sizeof abs, "%s/a.txt", t->ws);
    link_at(t, abs, "ws/abs_inside");
    link_at(t, "loop", "ws/loop");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    tree *t = *state;
    nftw(t->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(t);
    return 0;
}

static tg__fsrun run_in(const tree *t)
{
    tg__fsrun run = {.workspace = t->ws};
    return run;
}

typedef int (*core_fn)(tg__fsrun *, const json_t *, tg__buf *, tg_error *);

/* Runs a core on args (JSON text); returns rc, output in out (caller
 * cleans up), error code in *code. */
static int run_tool(tg__fsrun *run, core_fn core, const char *args_text,
                    tg__buf *out, tg_error *err)
{
    json_t *args = tg_test_json(args_text); /* new ref */
    tg__buf_init(out, 0);
    memset(err, 0, sizeof *err);
    run->errcode = NULL;
    int rc = core(run, args, out, err);
    json_decref(args);
    return rc;
}

/* Expects success with exactly `want` as output. */
static void expect_ok(const tree *t, core_fn core, const char *args,
                      const char *want)
{
    tg__fsrun run = run_in(t);
    tg__buf out;
    tg_error err;
    int rc = run_tool(&run, core, args, &out, &err);
    if (rc != 0)
        fail_msg("%s: %s (%s)", args, err.message, run.errcode);
    if (strcmp(tg__buf_cstr(&out), want) != 0)
        fail_msg("%s: got '%s' want '%s'", args, tg__buf_cstr(&out), want);
    tg__buf_cleanup(&out);
}

/* Expects failure with tool error code `code` and `text` in the message. */
static void expect_fail(const tree *t, core_fn core, const char *args,
                        const char *code, const char *text)
{
    tg__fsrun run = run_in(t);
    tg__buf out;
    tg_error err;
    int rc = run_tool(&run, core, args, &out, &err);
    if (rc >= 0 || run.errcode == NULL || strcmp(run.errcode, code) != 0 ||
        (text && strstr(err.message, text) == NULL))
        fail_msg("%s: rc %d code %s message '%s' output '%s'", args, rc,
                 run.errcode ? run.errcode : "(none)", err.message,
                 tg__buf_cstr(&out));
    assert_int_equal(err.code, rc);
    tg__buf_cleanup(&out);
}

/* ------------------------------------------------------- confinement */

/* The same relative paths through openat2 and through the walk. */
static void resolution(void **state)
{
    tree *t = *state;
    static const struct {
        const char *rel;
        int err;             /* 0: opens */
        const char *content; /* first bytes when it opens a file */
    } cases[] = {
        {"a.txt", 0, "hello"},
        {"./sub//b.c", 0, "int main"},
        {"sub/../a.txt", 0, "hello"},
        {"sub/deep/../../a.txt", 0, "hello"},
        {"link_in/b.c", 0, "int main"},
        {"link_file", 0, "hello"},
        {".", 0, NULL},
        {"sub/", 0, NULL},
        {"..", EXDEV, NULL},
        {"../outside/secret", EXDEV, NULL},
        {"../ws2/secret", EXDEV, NULL},
        {"sub/../../outside/secret", EXDEV, NULL},
        {"link_out/secret", EXDEV, NULL},
        {"link_out2", EXDEV, NULL},
        {"abs_link/passwd", EXDEV, NULL},
        {"abs_inside", EXDEV,
         NULL}, /* absolute links leave, as in the kernel */
        {"loop", ELOOP, NULL},
        {"missing", ENOENT, NULL},
        {"a.txt/x", ENOTDIR, NULL},
        {"a.txt/", ENOTDIR, NULL},
        {"link_file/", ENOTDIR, NULL},
        {"link_in/", 0, NULL},
    };
    int root = open(t->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(root >= 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int walk = 0; walk < 2; walk++) {
            int fd = walk ? tg__ws_open_walk(root, cases[i].rel, O_RDONLY)
                          : tg__ws_openat(root, cases[i].rel, O_RDONLY);
            int got = fd >= 0 ? 0 : -fd;
            if (got != cases[i].err)
                fail_msg("%s via %s: got %s, want %s", cases[i].rel,
                         walk ? "walk" : "openat2", strerror(got),
                         strerror(cases[i].err));
            if (fd >= 0 && cases[i].content) {
                char buf[16] = {0};
                size_t n = strlen(cases[i].content);
                assert_int_equal(read(fd, buf, n), (ssize_t)n);
                assert_memory_equal(buf, cases[i].content, n);
            }
            if (fd >= 0)
                close(fd);
        }
    }
    /* O_NOFOLLOW refuses a final symlink in both */
    assert_int_equal(tg__ws_openat(root, "link_file", O_RDONLY | O_NOFOLLOW),
                     -ELOOP);
    assert_int_equal(tg__ws_open_walk(root, "link_file", O_RDONLY | O_NOFOLLOW),
                     -ELOOP);
    close(root);
}

static void refused_paths(void **state)
{
    tree *t = *state;
    char sibling[PBUF], inside[PBUF], prefix[PBUF];
    snprintf(sibling, sizeof sibling, "{\"path\":\"%s2/secret\"}", t->ws);
    snprintf(prefix, sizeof prefix, "{\"path\":\"%s/../ws2/secret\"}", t->ws);
    snprintf(inside, sizeof inside, "{\"path\":\"%s/a.txt\"}", t->ws);
    const char *refused[] = {
        "{\"path\":\"..\"}",
        "{\"path\":\"../outside/secret\"}",
        "{\"path\":\"/etc/passwd\"}",
        "{\"path\":\"/\"}",
        sibling,
        prefix,
        "{\"path\":\"link_out/secret\"}",
        "{\"path\":\"link_out2\"}",
        "{\"path\":\"abs_link/passwd\"}",
        "{\"path\":\"a.txt\\u0000.png\"}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_fail(t, tg__read_file_run, refused[i], TG__FS_OUTSIDE, "path '");
    /* the message names the path */
    expect_fail(t, tg__read_file_run, "{\"path\":\"../outside/secret\"}",
                TG__FS_OUTSIDE, "'../outside/secret'");
    expect_fail(t, tg__list_dir_run, "{\"path\":\"link_out\"}", TG__FS_OUTSIDE,
                "'link_out'");
    expect_fail(t, tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"..\"}",
                TG__FS_OUTSIDE, NULL);
    expect_fail(t, tg__read_file_run, "{\"path\":\"\"}", TG__FS_BADARGS, NULL);
    /* an absolute path inside the workspace is fine */
    expect_ok(t, tg__read_file_run, inside, "hello\nworld\nthird line\n");
}

/* User paths made relative to the root: absolute ones inside it, the cwd's
 * place prepended, the sibling prefix and NUL bytes refused. */
static void relpath(void **state)
{
    tree *t = *state;
    tg__fsrun run = run_in(t);
    tg__buf rel;
    tg_error err = {0};
    char p[PBUF];

    tg__buf_init(&rel, 0);
    assert_int_equal(tg__ws_relpath(&run, "x/y", 3, &rel, &err), 0);
    assert_string_equal(tg__buf_cstr(&rel), "x/y");
    rel.len = 0;
    snprintf(p, sizeof p, "%s", t->ws);
    assert_int_equal(tg__ws_relpath(&run, p, strlen(p), &rel, &err), 0);
    assert_string_equal(tg__buf_cstr(&rel), ".");
    rel.len = 0;
    snprintf(p, sizeof p, "%s//sub/b.c", t->ws);
    assert_int_equal(tg__ws_relpath(&run, p, strlen(p), &rel, &err), 0);
    assert_string_equal(tg__buf_cstr(&rel), "sub/b.c");
    rel.len = 0;
    snprintf(p, sizeof p, "%s2", t->ws);
    assert_int_equal(tg__ws_relpath(&run, p, strlen(p), &rel, &err), TG_EINVAL);
    assert_string_equal(run.errcode, TG__FS_OUTSIDE);
    assert_int_equal(tg__ws_relpath(&run, "a\0b", 3, &rel, &err), TG_EINVAL);
    assert_non_null(strstr(err.message, "NUL"));

    /* a cwd inside the workspace is the base of relative paths */
    snprintf(p, sizeof p, "%s/sub", t->ws);
    run.cwd = p;
    rel.len = 0;
    assert_int_equal(tg__ws_relpath(&run, "b.c", 3, &rel, &err), 0);
    assert_string_equal(tg__buf_cstr(&rel), "sub/b.c");
    /* a cwd outside it is ignored: paths stay relative to the root */
    run.cwd = "/etc";
    rel.len = 0;
    assert_int_equal(tg__ws_relpath(&run, "a.txt", 5, &rel, &err), 0);
    assert_string_equal(tg__buf_cstr(&rel), "a.txt");
    tg__buf_cleanup(&rel);
}

/* ---------------------------------------------------------- read_file */

static void read_file(void **state)
{
    tree *t = *state;
    expect_ok(t, tg__read_file_run, "{\"path\":\"a.txt\"}",
              "hello\nworld\nthird line\n");
    expect_ok(t, tg__read_file_run, "{\"path\":\"link_file\"}",
              "hello\nworld\nthird line\n");
    expect_ok(t, tg__read_file_run,
              "{\"path\":\"a.txt\",\"offset_line\":2,\"max_lines\":1}",
              "world\n");
    expect_ok(t, tg__read_file_run, "{\"path\":\"a.txt\",\"offset_line\":3}",
              "third line\n");
    expect_ok(t, tg__read_file_run, "{\"path\":\"a.txt\",\"max_lines\":2}",
              "hello\nworld\n");
    expect_ok(t, tg__read_file_run, "{\"path\":\"empty\"}", "");
    /* the byte cap ends on a whole line and says where to go on */
    expect_ok(t, tg__read_file_run, "{\"path\":\"a.txt\",\"max_bytes\":14}",
              "hello\nworld\n[read_file: stopped at max_bytes (14); continue "
              "with offset_line=3]\n");
    expect_ok(t, tg__read_file_run,
              "{\"path\":\"a.txt\",\"offset_line\":2,\"max_bytes\":8}",
              "world\n[read_file: stopped at max_bytes (8); continue with "
              "offset_line=3]\n");
    /* a line longer than the cap is cut, never inside a UTF-8 sequence */
    expect_ok(t, tg__read_file_run, "{\"path\":\"utf.txt\",\"max_bytes\":2}",
              "h\n[read_file: line 1 is longer than max_bytes (2) and was "
              "cut; the next line is offset_line=2]\n");
    /* exactly the whole file is not a truncation */
    expect_ok(t, tg__read_file_run, "{\"path\":\"a.txt\",\"max_bytes\":23}",
              "hello\nworld\nthird line\n");

    expect_fail(t, tg__read_file_run, "{\"path\":\"a.txt\",\"offset_line\":4}",
                TG__FS_OFFSET, "(3 lines)");
    expect_fail(t, tg__read_file_run, "{\"path\":\"bin.dat\"}", TG__FS_BINARY,
                "'bin.dat' is a binary file");
    expect_fail(t, tg__read_file_run, "{\"path\":\"sub\"}", TG__FS_ISDIR,
                "'sub' is a directory");
    expect_fail(t, tg__read_file_run, "{\"path\":\"nope.txt\"}",
                TG__FS_NOTFOUND, "'nope.txt'");
    expect_fail(t, tg__read_file_run, "{\"path\":\"loop\"}", TG__FS_LOOP, NULL);
    expect_fail(t, tg__read_file_run, "{}", TG__FS_BADARGS, "'path'");
    expect_fail(t, tg__read_file_run, "{\"path\":3}", TG__FS_BADARGS, NULL);
    expect_fail(t, tg__read_file_run, "{\"path\":\"a.txt\",\"mode\":\"r\"}",
                TG__FS_BADARGS, "unknown argument 'mode'");
    expect_fail(t, tg__read_file_run, "{\"path\":\"a.txt\",\"max_bytes\":0}",
                TG__FS_BADARGS, "'max_bytes'");
    expect_fail(t, tg__read_file_run, "{\"path\":\"a.txt\",\"offset_line\":0}",
                TG__FS_BADARGS, "'offset_line'");
    expect_fail(t, tg__read_file_run, "[]", TG__FS_BADARGS, NULL);

    /* a FIFO is refused at once instead of blocking the worker */
    char fifo[PBUF];
    snprintf(fifo, sizeof fifo, "%s/fifo", t->ws);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_fail(t, tg__read_file_run, "{\"path\":\"fifo\"}", TG__FS_NOTFILE,
                NULL);
    unlink(fifo);

    /* relative to the call's cwd */
    char cwd[PBUF];
    snprintf(cwd, sizeof cwd, "%s/sub", t->ws);
    tg__fsrun run = run_in(t);
    run.cwd = cwd;
    tg__buf out;
    tg_error err;
    assert_int_equal(run_tool(&run, tg__read_file_run,
                              "{\"path\":\"../a.txt\",\"max_lines\":1}", &out,
                              &err),
                     0);
    assert_string_equal(tg__buf_cstr(&out), "hello\n");
    tg__buf_cleanup(&out);
    assert_int_equal(run_tool(&run, tg__read_file_run,
                              "{\"path\":\"../../outside/secret\"}", &out,
                              &err),
                     TG_EINVAL);
    assert_string_equal(run.errcode, TG__FS_OUTSIDE);
    tg__buf_cleanup(&out);
}

/* ----------------------------------------------------------- list_dir */

static void list_dir(void **state)
{
    tree *t = *state;
    expect_ok(t, tg__list_dir_run, "{\"path\":\"sub/deep\"}",
              "[{\"name\":\"c.txt\",\"type\":\"file\",\"size\":10}]");
    expect_ok(t, tg__list_dir_run, "{\"path\":\"link_in/deep\"}",
              "[{\"name\":\"c.txt\",\"type\":\"file\",\"size\":10}]");

    tg__fsrun run = run_in(t);
    tg__buf out;
    tg_error err;
    assert_int_equal(run_tool(&run, tg__list_dir_run, "{}", &out, &err), 0);
    json_t *list = tg_test_json(tg__buf_cstr(&out)); /* new ref */
    static const char *const want[][2] = {
        {".git", "dir"},          {".toolgate", "dir"},
        {"a.txt", "file"},        {"abs_inside", "symlink"},
        {"abs_link", "symlink"},  {"bin.dat", "file"},
        {"empty", "file"},        {"link_file", "symlink"},
        {"link_in", "symlink"},   {"link_out", "symlink"},
        {"link_out2", "symlink"}, {"loop", "symlink"},
        {"sub", "dir"},           {"utf.txt", "file"},
    };
    size_t n = sizeof want / sizeof want[0];
    assert_int_equal(json_array_size(list), n);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i); /* borrowed */
        assert_string_equal(json_string_value(json_object_get(e, "name")),
                            want[i][0]);
        assert_string_equal(json_string_value(json_object_get(e, "type")),
                            want[i][1]);
        assert_true(json_is_integer(json_object_get(e, "size")));
    }
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(list, 2), "size")),
        23);
    json_decref(list);
    tg__buf_cleanup(&out);

    expect_fail(t, tg__list_dir_run, "{\"path\":\"a.txt\"}", TG__FS_NOTDIR,
                "'a.txt'");
    expect_fail(t, tg__list_dir_run, "{\"path\":\"../outside\"}",
                TG__FS_OUTSIDE, NULL);
    expect_fail(t, tg__list_dir_run, "{\"path\":\"abs_link\"}", TG__FS_OUTSIDE,
                NULL);
    expect_fail(t, tg__list_dir_run, "{\"dir\":\".\"}", TG__FS_BADARGS,
                "unknown argument 'dir'");
}

/* A name that is not UTF-8 still gives valid JSON. */
static void list_dir_names(void **state)
{
    tree *t = *state;
    dir(t, "ws/odd");
    PUT(t, "ws/odd/bad\xff name", "x");
    PUT(t, "ws/odd/quote\"back\\slash", "");
    expect_ok(
        t, tg__list_dir_run, "{\"path\":\"odd\"}",
        "[{\"name\":\"bad\xef\xbf\xbd name\",\"type\":\"file\",\"size\":1},"
        "{\"name\":\"quote\\\"back\\\\slash\",\"type\":\"file\","
        "\"size\":0}]");
    char p[PBUF];
    snprintf(p, sizeof p, "%s/ws/odd", t->root);
    nftw(p, rm_entry, 4, FTW_DEPTH | FTW_PHYS);
}

/* --------------------------------------------------------------- grep */

static void grep(void **state)
{
    tree *t = *state;
    /* binary files, .git, .toolgate and every symlink are skipped */
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\"}",
              "sub/b.c:3:    return 0; /* TODO */\n"
              "sub/deep/c.txt:1:TODO deep\n");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"sub/\"}",
              "sub/b.c:3:    return 0; /* TODO */\n"
              "sub/deep/c.txt:1:TODO deep\n");
    /* the start may be a symlink inside the workspace */
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"link_in\"}",
              "link_in/b.c:3:    return 0; /* TODO */\n"
              "link_in/deep/c.txt:1:TODO deep\n");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"^\\\\{$\",\"path\":\"sub/b.c\"}",
              "sub/b.c:2:{\n");
    expect_ok(t, tg__grep_run,
              "{\"pattern\":\"todo\",\"ignore_case\":true,\"glob\":\"*.txt\"}",
              "sub/deep/c.txt:1:TODO deep\n");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"todo\"}", "");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"glob\":\"sub/*.c\"}",
              "sub/b.c:3:    return 0; /* TODO */\n");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"glob\":\"*.h\"}", "");
    /* UTF mode: '.' is one character, case folding works beyond ASCII */
    expect_ok(t, tg__grep_run, "{\"pattern\":\"h.llo\",\"path\":\"utf.txt\"}",
              "utf.txt:1:h\xc3\xa9llo w\xc3\xb6rld\n");
    expect_ok(t, tg__grep_run,
              "{\"pattern\":\"W\xc3\x96RLD\",\"ignore_case\":true}",
              "utf.txt:1:h\xc3\xa9llo w\xc3\xb6rld\n");
    expect_ok(
        t, tg__grep_run, "{\"pattern\":\"o\",\"max_matches\":2}",
        "a.txt:1:hello\na.txt:2:world\n[grep: stopped after 2 matches]\n");

    expect_fail(t, tg__grep_run, "{\"pattern\":\"(unclosed\"}", TG__FS_PATTERN,
                "invalid pattern at offset 9");
    expect_fail(t, tg__grep_run, "{\"pattern\":\"a{2,1}\"}", TG__FS_PATTERN,
                "invalid pattern");
    expect_fail(t, tg__grep_run, "{}", TG__FS_BADARGS, "'pattern'");
    expect_fail(t, tg__grep_run, "{\"pattern\":\"x\",\"max_matches\":0}",
                TG__FS_BADARGS, "'max_matches'");
    expect_fail(t, tg__grep_run, "{\"pattern\":\"x\",\"ignore_case\":1}",
                TG__FS_BADARGS, "'ignore_case'");
    expect_fail(t, tg__grep_run, "{\"pattern\":\"x\",\"path\":\"nope\"}",
                TG__FS_NOTFOUND, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A pattern that backtracks exponentially ends at the match limit. */
static void grep_catastrophic(void **state)
{
    tree *t = *state;
    char line[4096];
    memset(line, 'a', sizeof line - 2);
    line[sizeof line - 2] = 'b';
    line[sizeof line - 1] = '\n';
    put(t, "ws/evil.txt", line, sizeof line);
    double start = now_s();
    expect_fail(t, tg__grep_run,
                "{\"pattern\":\"(a+)+$\",\"path\":\"evil.txt\"}",
                TG__FS_MATCH_LIMIT, "evil.txt:1");
    expect_fail(t, tg__grep_run,
                "{\"pattern\":\"^(a|aa)+$\",\"path\":\"evil.txt\"}",
                TG__FS_MATCH_LIMIT, "match limit");
    /* The match limit ends both (in well under a second, sanitized); a
     * scaled 10 s tells a limit from a hang. */
    double took = now_s() - start;
    fprintf(stderr, "    two catastrophic patterns: %.3f s\n", took);
    assert_true(took < 10.0 * (double)tg_test_time_scale());

    /* a long matching line is shown cut, with a marker */
    char *big = malloc(3000);
    memset(big, 'x', 2990);
    memcpy(big + 2990, "NEEDLE\n", 7);
    put(t, "ws/evil.txt", big, 2997);
    free(big);
    tg__fsrun run = run_in(t);
    tg__buf out;
    tg_error err;
    assert_int_equal(run_tool(&run, tg__grep_run,
                              "{\"pattern\":\"NEEDLE\",\"path\":\"evil.txt\"}",
                              &out, &err),
                     0);
    assert_true(out.len < 600);
    assert_non_null(strstr(tg__buf_cstr(&out), " [...]\n"));
    tg__buf_cleanup(&out);
    char p[PBUF];
    snprintf(p, sizeof p, "%s/evil.txt", t->ws);
    unlink(p);
}

static int always(const void *ud)
{
    (void)ud;
    return 1;
}

static void canceled(void **state)
{
    tree *t = *state;
    tg__fsrun run = run_in(t);
    run.canceled = always;
    tg__buf out;
    tg_error err;
    assert_int_equal(
        run_tool(&run, tg__grep_run, "{\"pattern\":\"x\"}", &out, &err),
        TG_ECANCELED);
    assert_string_equal(run.errcode, TG__FS_CANCELED);
    tg__buf_cleanup(&out);
    assert_int_equal(
        run_tool(&run, tg__read_file_run, "{\"path\":\"a.txt\"}", &out, &err),
        TG_ECANCELED);
    tg__buf_cleanup(&out);
}

/* ------------------------------------------------------------ schemas */

static void schemas(void **state)
{
    (void)state;
    const char *all[] = {tg__read_file_schema, tg__list_dir_schema,
                         tg__grep_schema};
    for (size_t i = 0; i < 3; i++) {
        json_t *s = tg_test_json(all[i]); /* new ref */
        assert_string_equal(json_string_value(json_object_get(s, "type")),
                            "object");
        assert_true(json_is_object(json_object_get(s, "properties")));
        assert_true(json_is_false(json_object_get(s, "additionalProperties")));
        json_decref(s);
    }
    assert_true(tg__builtin_known("read_file"));
    assert_true(tg__builtin_known("list_dir"));
    assert_true(tg__builtin_known("grep"));
    assert_true(tg__builtin_known("write_file"));
    assert_true(tg__builtin_known("shell"));
    assert_true(tg__builtin_known("echo"));
    assert_false(tg__builtin_known("bash"));
    assert_false(tg__builtin_known(""));
    /* One list (TG__BUILTIN_MAP) gives the message's names and the
     * embedded defaults' builtin_tools, in its order, without the opt-in
     * echo (a configuration names it). */
    assert_string_equal(TG__BUILTIN_NAMES,
                        "read_file, list_dir, grep, write_file, shell, echo");
    tg_config *cfg = tg_config_new();
    assert_non_null(cfg);
    static const char *const names[] = {TG__BUILTIN_MAP(TG__BUILTIN_NAME)};
    size_t n = sizeof names / sizeof names[0];
    assert_string_equal(names[n - 1], "echo");
    assert_int_equal(json_array_size(cfg->builtin_tools), n - 1);
    for (size_t i = 0; i < n - 1; i++)
        assert_string_equal(
            json_string_value(json_array_get(cfg->builtin_tools, i)), names[i]);
    tg_config_free(cfg);
}

/* --------------------------------------------------------- write_file */

static char *slurp_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 4096);
    size_t n = fread(buf, 1, 4095, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void expect_file(const tree *t, const char *rel, const char *want)
{
    char path[PBUF];
    snprintf(path, sizeof path, "%s/%s", t->root, rel);
    char *got = slurp_path(path);
    if (got == NULL || strcmp(got, want) != 0)
        fail_msg("%s: got '%s' want '%s'", rel, got ? got : "(none)", want);
    free(got);
}

/* Atomic writes beneath the workspace: new files, replaced files (mode
 * kept), links replaced rather than written through, and every way out
 * refused; no temporary file is left behind. Runs on a tree of its own. */
static void write_file(void **state)
{
    tree *t = *state;
    expect_ok(t, tg__write_file_run,
              "{\"path\":\"new.txt\",\"content\":\"one\"}",
              "{\"path\":\"new.txt\",\"bytes\":3}");
    expect_file(t, "ws/new.txt", "one");
    /* replacing keeps the file's mode */
    char path[PBUF];
    snprintf(path, sizeof path, "%s/ws/new.txt", t->root);
    assert_int_equal(chmod(path, 0600), 0);
    expect_ok(t, tg__write_file_run,
              "{\"path\":\"new.txt\",\"content\":\"two\\n\"}",
              "{\"path\":\"new.txt\",\"bytes\":4}");
    expect_file(t, "ws/new.txt", "two\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    expect_ok(t, tg__write_file_run,
              "{\"path\":\"sub/deep/c.txt\",\"content\":\"\"}",
              "{\"path\":\"sub/deep/c.txt\",\"bytes\":0}");
    expect_file(t, "ws/sub/deep/c.txt", "");
    /* a symlink at the target is replaced, its target left alone */
    link_at(t, "../outside/secret", "ws/to_secret");
    expect_ok(t, tg__write_file_run,
              "{\"path\":\"to_secret\",\"content\":\"mine\"}",
              "{\"path\":\"to_secret\",\"bytes\":4}");
    expect_file(t, "outside/secret", "TOP SECRET TODO\n");
    expect_file(t, "ws/to_secret", "mine");
    snprintf(path, sizeof path, "%s/ws/to_secret", t->root);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    /* so is a hard link to a file outside */
    char outside[PBUF];
    snprintf(outside, sizeof outside, "%s/outside/secret", t->root);
    snprintf(path, sizeof path, "%s/ws/hard", t->root);
    assert_int_equal(link(outside, path), 0);
    expect_ok(t, tg__write_file_run, "{\"path\":\"hard\",\"content\":\"x\"}",
              "{\"path\":\"hard\",\"bytes\":1}");
    expect_file(t, "outside/secret", "TOP SECRET TODO\n");
    /* refused: out of the workspace, through a link, a missing directory,
     * a directory, no file name, a NUL byte, missing members */
    static const struct {
        const char *args, *code;
    } bad[] = {
        {"{\"path\":\"../outside/x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"link_out/x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"abs_link/x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"/etc/x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"../ws2/x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"a.txt\\u0000x\",\"content\":\"x\"}", TG__FS_OUTSIDE},
        {"{\"path\":\"nodir/x\",\"content\":\"x\"}", TG__FS_NOTFOUND},
        {"{\"path\":\"sub\",\"content\":\"x\"}", TG__FS_ISDIR},
        {"{\"path\":\"sub/\",\"content\":\"x\"}", TG__FS_BADARGS},
        {"{\"path\":\"sub/..\",\"content\":\"x\"}", TG__FS_BADARGS},
        {"{\"path\":\"x\"}", TG__FS_BADARGS},
        {"{\"path\":\"x\",\"content\":5}", TG__FS_BADARGS},
        {"{\"path\":\"x\",\"content\":\"x\",\"mode\":1}", TG__FS_BADARGS},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_fail(t, tg__write_file_run, bad[i].args, bad[i].code, NULL);
    expect_file(t, "outside/secret", "TOP SECRET TODO\n");
    snprintf(path, sizeof path, "%s/outside/x", t->root);
    assert_int_not_equal(access(path, F_OK), 0);
    /* no temporary file is left in any directory written to */
    static const char *const dirs[] = {"ws", "ws/sub/deep"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", t->root, dirs[i]);
        DIR *d = opendir(path);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, ".toolgate-write-", 16) == 0)
                fail_msg("temporary file left: %s/%s", dirs[i], e->d_name);
        closedir(d);
    }
}

/* toolgate's own files (tg__fsrun.state): every route into them is refused
 * by identity, for reading, listing, searching and writing; grep over the
 * workspace passes them by, whatever their names. Runs on a tree of its
 * own. */
static void own_files(void **state)
{
    tree *t = *state;
    char tg[PBUF], st_dir[PBUF], conf[PBUF], path[PBUF];
    snprintf(tg, sizeof tg, "%s/.toolgate", t->ws);
    snprintf(st_dir, sizeof st_dir, "%s/state", t->ws);
    snprintf(conf, sizeof conf, "%s/conf.json", t->ws);
    const char *const own[] = {tg, st_dir, conf, NULL};
    dir(t, "ws/state");
    PUT(t, "ws/state/art.txt", "TODO artifact\n");
    PUT(t, "ws/conf.json", "{\"TODO\": 1}\n");
    link_at(t, ".toolgate", "ws/link_tg");
    link_at(t, ".toolgate/x", "ws/link_tgx");
    link_at(t, "../state/art.txt", "ws/sub/link_up");
    link_at(t, "conf.json", "ws/link_conf");
    static const struct {
        core_fn core;
        const char *args;
    } refused[] = {
        {tg__read_file_run, "{\"path\":\".toolgate/x\"}"},
        {tg__read_file_run, "{\"path\":\"./sub/../.toolgate/x\"}"},
        {tg__read_file_run, "{\"path\":\"sub/deep/../../.toolgate//x\"}"},
        {tg__read_file_run, "{\"path\":\"link_tg/x\"}"},
        {tg__read_file_run, "{\"path\":\"link_tgx\"}"},
        {tg__read_file_run, "{\"path\":\"sub/link_up\"}"},
        {tg__read_file_run, "{\"path\":\"state/art.txt\"}"},
        {tg__read_file_run, "{\"path\":\"conf.json\"}"},
        {tg__read_file_run, "{\"path\":\"link_conf\"}"},
        {tg__list_dir_run, "{\"path\":\".toolgate\"}"},
        {tg__list_dir_run, "{\"path\":\"link_tg/\"}"},
        {tg__list_dir_run, "{\"path\":\"state\"}"},
        {tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"state\"}"},
        {tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"link_tg\"}"},
        {tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"conf.json\"}"},
        {tg__write_file_run,
         "{\"path\":\".toolgate/journal.db\",\"content\":\"x\"}"},
        {tg__write_file_run, "{\"path\":\"state/art.txt\",\"content\":\"x\"}"},
        {tg__write_file_run, "{\"path\":\"state/new\",\"content\":\"x\"}"},
        {tg__write_file_run, "{\"path\":\"link_tg/new\",\"content\":\"x\"}"},
        {tg__write_file_run,
         "{\"path\":\"sub/../state/new\",\"content\":\"x\"}"},
        {tg__write_file_run, "{\"path\":\"conf.json\",\"content\":\"x\"}"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tg__fsrun run = {.workspace = t->ws, .state = own};
        tg__buf out;
        tg_error err;
        int rc = run_tool(&run, refused[i].core, refused[i].args, &out, &err);
        if (rc >= 0 || run.errcode == NULL ||
            strcmp(run.errcode, TG__FS_STATE) != 0 ||
            strstr(err.message, "is toolgate's own") == NULL)
            fail_msg("%s: rc %d code %s message '%s' output '%s'",
                     refused[i].args, rc, run.errcode ? run.errcode : "(none)",
                     err.message, tg__buf_cstr(&out));
        tg__buf_cleanup(&out);
    }
    /* From a cwd inside them, a relative path is refused too. */
    tg__fsrun run = {.workspace = t->ws, .cwd = tg, .state = own};
    tg__buf out;
    tg_error err;
    assert_true(
        run_tool(&run, tg__read_file_run, "{\"path\":\"x\"}", &out, &err) < 0);
    assert_string_equal(run.errcode, TG__FS_STATE);
    tg__buf_cleanup(&out);
    /* Nothing was written; grep over the workspace passes them by. */
    expect_file(t, "ws/state/art.txt", "TODO artifact\n");
    expect_file(t, "ws/conf.json", "{\"TODO\": 1}\n");
    snprintf(path, sizeof path, "%s/state/new", t->ws);
    assert_int_not_equal(access(path, F_OK), 0);
    run = (tg__fsrun){.workspace = t->ws, .state = own};
    assert_int_equal(
        run_tool(&run, tg__grep_run, "{\"pattern\":\"TODO\"}", &out, &err), 0);
    assert_string_equal(tg__buf_cstr(&out),
                        "sub/b.c:3:    return 0; /* TODO */\n"
                        "sub/deep/c.txt:1:TODO deep\n");
    tg__buf_cleanup(&out);
    /* (without the state, the same grep finds them) */
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"path\":\"state\"}",
              "state/art.txt:1:TODO artifact\n");
    expect_ok(t, tg__grep_run, "{\"pattern\":\"TODO\",\"glob\":\"*.json\"}",
              "conf.json:1:{\"TODO\": 1}\n");
    /* The rest of the workspace stays the tool's: a symlink named like
     * their file is replaced, never written through. */
    run = (tg__fsrun){.workspace = t->ws, .state = own};
    assert_int_equal(run_tool(&run, tg__write_file_run,
                              "{\"path\":\"link_conf\",\"content\":\"mine\"}",
                              &out, &err),
                     0);
    tg__buf_cleanup(&out);
    expect_file(t, "ws/conf.json", "{\"TODO\": 1}\n");
    expect_file(t, "ws/link_conf", "mine");
    run = (tg__fsrun){.workspace = t->ws, .state = own};
    assert_int_equal(
        run_tool(&run, tg__read_file_run, "{\"path\":\"a.txt\"}", &out, &err),
        0);
    tg__buf_cleanup(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resolution),
        cmocka_unit_test(refused_paths),
        cmocka_unit_test(relpath),
        cmocka_unit_test(read_file),
        cmocka_unit_test(list_dir),
        cmocka_unit_test(list_dir_names),
        cmocka_unit_test(grep),
        cmocka_unit_test(grep_catastrophic),
        cmocka_unit_test(canceled),
        cmocka_unit_test(schemas),
        cmocka_unit_test_setup_teardown(write_file, setup, teardown),
        cmocka_unit_test_setup_teardown(own_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
