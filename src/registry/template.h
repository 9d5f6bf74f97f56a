/* SPDX-License-Identifier: MIT */
/*
 * template.h - expanding a command tool's argv and stdin templates with a
 * call's arguments. An argv element that is exactly "{name}" is replaced by
 * that argument (strings as is, other JSON compact); "{name?}" is dropped when
 * the argument is absent or null. Every other element is literal: no shell,
 * no word splitting, no partial substitution. The stdin template replaces
 * every "{name}" inside the text, and "{*}" by the whole arguments object.
 */
#ifndef TG_REGISTRY_TEMPLATE_H
#define TG_REGISTRY_TEMPLATE_H

#include <jansson.h>

#include "buf.h"
#include "toolgate.h"

/* A NULL-terminated argv from template `tpl` (array of strings, borrowed) and
 * `args` (object, borrowed). The caller frees it with tg__argv_free. A
 * required argument that is missing fails with TG_EINVAL and err->pointer set
 * to "/name". */
int tg__argv_expand(const json_t *tpl, const json_t *args, char ***argv_out,
                    tg_error *err);
void tg__argv_free(char **argv);
/* Appends the expanded stdin template (string, borrowed) to out. */
int tg__stdin_expand(const char *tpl, const json_t *args, tg_buf *out,
                     tg_error *err);

#endif
