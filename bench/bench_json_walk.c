/* SPDX-License-Identifier: MIT */
/*
 * bench_json_walk.c - the JSON writers over jansson values, for callgrind:
 * tg__jcs_write (a checksum's canonical form), tg__json_dumps (the journal's
 * and the results' compact text) and tg__jcs_write_tape (a call's arguments
 * as a tape), ROUNDS times each over the documents named (bench/schemas/)
 * and a tool result. Prints the bytes written (the same before and after a
 * change that keeps the output); the figures are each function's inclusive
 * instructions:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out \
 *       build/bench/bench_json_walk bench/schemas/[a-z]*.json
 *   callgrind_annotate --inclusive=yes cg.out | grep -E 'tg__jcs_write|dumps'
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs.h"
#include "json_out.h"
#include "jtape.h"

#define ROUNDS 200

int main(int argc, char **argv)
{
    json_t *docs[32];
    int nd = 0;
    for (int i = 1; i < argc && nd < 31; i++) {
        json_error_t e;
        docs[nd] = json_load_file(argv[i], 0, &e);
        if (docs[nd] == NULL) {
            fprintf(stderr, "%s: %s\n", argv[i], e.text);
            return 1;
        }
        nd++;
    }
    docs[nd++] = json_pack(
        "{s:[{s:s,s:s}],s:{s:i,s:f,s:s,s:[i,i,i],s:{s:b,s:n}},s:b}", "content",
        "type", "text", "text",
        "total 12\n-rw-r--r-- 1 u u  420 \"a\".txt\tdone \xc3\xa9t\xc3\xa9",
        "structuredContent", "exit_code", 0, "elapsed", 12.5, "path",
        "/work/x/y\\z", "lines", 1, 22, 333, "flags", "truncated", 0,
        "artifact", "isError", 0);
    size_t total = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int d = 0; d < nd; d++) {
            tg__buf b;
            tg__buf_init(&b, 0);
            if (tg__jcs_write(docs[d], &b) != 0)
                return 2;
            total += b.len;
            tg__buf_cleanup(&b);
        }
    for (int r = 0; r < ROUNDS; r++)
        for (int d = 0; d < nd; d++) {
            char *s = tg__json_dumps(docs[d]);
            if (s == NULL)
                return 3;
            total += 1;
            free(s);
        }
    for (int d = 0; d < nd; d++) {
        char *txt = json_dumps(docs[d], JSON_COMPACT);
        tg__jtape t;
        tg__jtape_error e;
        if (tg__jtape_parse(txt, strlen(txt), 0, &t, &e) != 0)
            return 4;
        for (int r = 0; r < ROUNDS; r++) {
            tg__buf b;
            tg__buf_init(&b, 0);
            if (tg__jcs_write_tape(&t, &b) != 0)
                return 5;
            total += b.len;
            tg__buf_cleanup(&b);
        }
        tg__jtape_free(&t);
        free(txt);
    }
    printf("%zu\n", total);
    for (int d = 0; d < nd; d++)
        json_decref(docs[d]);
    return 0;
}
