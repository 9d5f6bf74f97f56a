/* SPDX-License-Identifier: MIT */
/*
 * template.h - expanding a command tool's argv and stdin templates with a
 * call's arguments. An argv element that is exactly "{name}" is replaced by
 * that argument (strings as is, other JSON compact); "{name?}" is dropped when
 * the argument is absent or null. Every other element is literal: no shell,
 * no word splitting, no partial substitution. The stdin template replaces
 * every "{name}" inside the text, and "{*}" by the whole arguments object.
 *
 * The option rule: an argument cannot become an option. A placeholder's
 * value that begins with '-' ("-odata.txt", "--output=x", "-", "--", -5) is
 * refused unless the template has a literal "--" element before the
 * placeholder (the program reads everything after it as operands) or the
 * tool lists the placeholder's name in its "option_args".
 */
#ifndef TG_REGISTRY_TEMPLATE_H
#define TG_REGISTRY_TEMPLATE_H

#include <jansson.h>
#include <stdbool.h>

#include "buf.h"
#include "toolgate.h"

/* A NULL-terminated argv from template `tpl` (array of strings, borrowed) and
 * `args` (object, borrowed). The caller frees it with tg__argv_free.
 * `option_args` (array of placeholder names, borrowed, may be NULL) lists the
 * placeholders whose values may begin with '-'. Fails with TG_EINVAL,
 * err->pointer set to "/name" and *keyword (when keyword is not NULL) to a
 * static word for the result's details: "required" for a required argument
 * that is missing, "option" for a value the option rule refuses, "nul" for a
 * string holding a NUL byte. */
int tg__argv_expand(const json_t *tpl, const json_t *args,
                    const json_t *option_args, char ***argv_out,
                    const char **keyword, tg_error *err);
/* Whether argv template `tpl` (array, borrowed) has a whole-element
 * placeholder named `name` ("{name}" or "{name?}"). */
bool tg__argv_has_placeholder(const json_t *tpl, const char *name);
void tg__argv_free(char **argv);
/* Appends the expanded stdin template (string, borrowed) to out. */
int tg__stdin_expand(const char *tpl, const json_t *args, tg__buf *out,
                     tg_error *err);

#endif
