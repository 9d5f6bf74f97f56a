/* SPDX-License-Identifier: MIT */
/*
 * shell.c - the `shell` built-in: `/bin/bash -c -- {command}`, for the
 * models that are best at writing a shell line (the "--" keeps a command
 * line that begins with '-' a command line, not bash's options). It is a
 * command tool like any configured one (argv template, deadline, group
 * kill), so it runs in the sandbox of src/exec/sandbox.c: root file system
 * read-only, the workspace writable, no network, the environment
 * allowlisted, rlimits. Destructive by its annotations; the embedded default
 * policy asks before it runs.
 */
#include <jansson.h>

#include "builtin.h"
#include "error.h"

/* The tool as a toolgate.json entry, so it is validated by the same rules
 * as every configured command tool. */
static const char shell_entry[] =
    "{\"name\": \"shell\","
    " \"description\": \"Run a bash command line in the workspace (bash -c). "
    "Returns its standard output; a non-zero exit status is an error that "
    "carries the end of its standard error. The file system outside the "
    "workspace is read-only and there is no network.\","
    " \"input_schema\": {\"type\": \"object\","
    "  \"properties\": {\"command\": {\"type\": \"string\", \"minLength\": 1,"
    "   \"description\": \"the command line, run by /bin/bash -c\"}},"
    "  \"required\": [\"command\"], \"additionalProperties\": false},"
    " \"annotations\": {\"readOnlyHint\": false, \"destructiveHint\": true,"
    "  \"idempotentHint\": false, \"openWorldHint\": false},"
    " \"command\": [\"/bin/bash\", \"-c\", \"--\", \"{command}\"]}";

int tg__shell_add(tg__registry *reg, tg_error *err)
{
    json_error_t jerr;
    json_t *entry =
        json_loads(shell_entry, JSON_REJECT_DUPLICATES, &jerr); /* new ref */
    if (entry == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    tg__tool *tool = NULL;
    int rc = tg__tool_from_config(entry, "builtin_tools.shell", &tool, err);
    json_decref(entry);
    if (rc != 0)
        return rc;
    return tg__registry_add(reg, tool, err);
}
