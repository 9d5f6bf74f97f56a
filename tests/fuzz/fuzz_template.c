/* SPDX-License-Identifier: MIT */
/*
 * fuzz_template.c - libFuzzer target for command-line templates. The input
 * is "TEMPLATE_JSON\nARGS_JSON": the template (an array of strings) expands
 * with the arguments, or fails with a message; an expansion never has more
 * elements than the template, every element that is not exactly a
 * placeholder comes out unchanged (no substitution inside elements, no
 * splitting), and without a literal "--" in the template no argument comes
 * out beginning with '-' (the option rule): such an element is one of the
 * template's own.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "template.h"

static int is_placeholder(const char *s)
{
    size_t n = strlen(s);
    return n >= 3 && s[0] == '{' && s[n - 1] == '}';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nl = memchr(data, '\n', size);
    if (nl == NULL)
        return 0;
    size_t tlen = (size_t)(nl - (const char *)data);
    json_error_t jerr;
    json_t *tpl = json_loadb((const char *)data, tlen, 0, &jerr); /* new ref */
    json_t *args = json_loadb(nl + 1, size - tlen - 1, 0, &jerr); /* new ref */
    if (!json_is_array(tpl) || !json_is_object(args))
        goto done;
    size_t i;
    json_t *el; /* borrowed */
    json_array_foreach(tpl, i, el) if (!json_is_string(el)) goto done;
    char **argv = NULL;
    tg_error err = {0};
    if (tg__argv_expand(tpl, args, NULL, &argv, NULL, &err) == 0) {
        size_t n = 0, j = 0;
        while (argv[n] != NULL)
            n++;
        if (n > json_array_size(tpl))
            abort();
        json_array_foreach(tpl, i, el)
        {
            const char *s = json_string_value(el);
            if (is_placeholder(s))
                continue; /* substituted, or an optional one dropped */
            while (j < n && strcmp(argv[j], s) != 0)
                j++;
            if (j == n)
                abort(); /* a literal element was changed or lost */
            j++;
        }
        /* the option rule */
        bool dashdash = false;
        json_array_foreach(tpl, i, el)
        {
            if (strcmp(json_string_value(el), "--") == 0)
                dashdash = true;
        }
        for (size_t k = 0; k < n && !dashdash; k++) {
            bool literal = argv[k][0] != '-';
            json_array_foreach(tpl, i, el)
            {
                if (strcmp(json_string_value(el), argv[k]) == 0)
                    literal = true;
            }
            if (!literal)
                abort(); /* an argument became an option */
        }
        tg__argv_free(argv);
    } else if (err.message[0] == '\0') {
        abort();
    }
    /* The stdin form of the first element, whatever it holds. */
    if (json_array_size(tpl) > 0) {
        tg__buf out;
        tg__buf_init(&out, 1 << 20);
        tg_error serr = {0};
        tg__stdin_expand(json_string_value(json_array_get(tpl, 0)), args, &out,
                         &serr);
        tg__buf_cleanup(&out);
    }
done:
    json_decref(tpl);
    json_decref(args);
    return 0;
}
