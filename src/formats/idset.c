/* SPDX-License-Identifier: MIT */
/* idset.c - the sorted id set of format.h ("which calls are answered"). */
#include <stdlib.h>
#include <string.h>

#include "format.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void tg__idset_sort(tg__idset *set)
{
    if (set->n > 1)
        qsort(set->ids, set->n, sizeof *set->ids, cmp_str);
}

int tg__idset_has(const tg__idset *set, const char *id)
{
    if (set == NULL || set->n == 0 || id == NULL)
        return 0;
    return bsearch(&id, set->ids, set->n, sizeof *set->ids, cmp_str) != NULL;
}
