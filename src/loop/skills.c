/* SPDX-License-Identifier: MIT */
/*
 * skills.c - a loop's skills (toolgate_loop.h): prompt modules added to the
 * system prompt, each under a heading with its name, whose names every
 * call of the loop carries in its record (`skills`), so that the journal
 * says which instructions the model had when it made a call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_int.h"

static int add_name(tg_loop *l, const char *name, tg_error *err)
{
    char **grown = realloc(l->skill_names, (l->nskills + 1) * sizeof *grown);
    if (grown == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    l->skill_names = grown;
    if ((grown[l->nskills] = strdup(name)) == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    l->nskills++;
    return 0;
}

int tg__loop_skills(tg_loop *l, const tg_loop_options *o, char **system,
                    tg_error *err)
{
    *system = NULL;
    size_t len = o->system != NULL ? strlen(o->system) : 0;
    for (size_t i = 0; i < o->nskills; i++) {
        const tg_loop_skill *k = &o->skills[i];
        if (k->name == NULL || k->name[0] == '\0' || k->text == NULL)
            return tg__loop_fail(err, TG_EINVAL,
                                 "skill %zu has no name or no text", i + 1);
        for (size_t j = 0; j < i; j++)
            if (strcmp(o->skills[j].name, k->name) == 0)
                return tg__loop_fail(err, TG_EINVAL,
                                     "skill '%s' is given twice", k->name);
        len += strlen(k->name) + strlen(k->text) + 32;
    }
    if (o->system == NULL && o->nskills == 0)
        return 0;
    char *s = malloc(len + 1);
    if (s == NULL)
        return tg__loop_fail(err, TG_ENOMEM, "out of memory");
    size_t at = 0;
    s[0] = '\0';
    if (o->system != NULL)
        at += (size_t)snprintf(s, len + 1, "%s", o->system);
    for (size_t i = 0; i < o->nskills; i++) {
        at += (size_t)snprintf(s + at, len + 1 - at, "%s## Skill: %s\n\n%s",
                               at > 0 ? "\n\n" : "", o->skills[i].name,
                               o->skills[i].text);
        int rc = add_name(l, o->skills[i].name, err);
        if (rc != 0) {
            free(s);
            return rc;
        }
    }
    *system = s;
    return 0;
}

int tg__loop_skill_names(tg_loop *l, const json_t *names, tg_error *err)
{
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        int rc = json_is_string(n) ? add_name(l, json_string_value(n), err) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}
