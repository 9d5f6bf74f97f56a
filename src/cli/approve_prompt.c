/* SPDX-License-Identifier: MIT */
/*
 * approve_prompt.c - the operator prompt of `toolgate run` for a policy
 * `ask`: on the controlling terminal, shows the tool, the call id, the
 * caller, the rule's reason and the arguments, and reads y / n / a (always
 * for this tool, this session). No terminal, end of input or anything else
 * is a no.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "approve_prompt.h"
#include "cli.h"

/* The most argument text shown; longer arguments are cut with a note. */
#define SHOWN_ARGS 2000

struct approve_prompt {
    FILE *tty;
};

approve_prompt *approve_prompt_open(void)
{
    /* Only when a person watches stderr: ctest, pipes and CI never get a
     * prompt they cannot answer. */
    if (!isatty(STDERR_FILENO))
        return NULL;
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    approve_prompt *p = calloc(1, sizeof *p);
    if (p == NULL || (p->tty = fdopen(fd, "r+")) == NULL) {
        free(p);
        close(fd);
        return NULL;
    }
    return p;
}

void approve_prompt_close(approve_prompt *p)
{
    if (p == NULL)
        return;
    fclose(p->tty);
    free(p);
}

/* Prints what a caller sent made safe for the terminal (cli_put_safe), so
 * arguments cannot move the cursor, recolour or fake the prompt. */
static void put_safe(FILE *f, const char *s, size_t n)
{
    cli_put_safe(f, s, n, 0);
}

tg_approval approve_prompt_ask(void *ud, const tg_call *call,
                               const char *reason)
{
    approve_prompt *p = ud;
    const char *tool = tg_call_tool(call);
    const char *caller = tg_call_caller_id(call);
    const char *args = tg_call_args_json(call);
    size_t alen = args ? strlen(args) : 0;
    fputs("\ntoolgate: approval needed for tool '", p->tty);
    put_safe(p->tty, tool, strlen(tool));
    fputs("' (call ", p->tty);
    put_safe(p->tty, tg_call_id(call), strlen(tg_call_id(call)));
    if (caller != NULL) {
        fputs(", caller ", p->tty);
        put_safe(p->tty, caller, strlen(caller));
    }
    fputs(")\n  why: ", p->tty);
    put_safe(p->tty, reason ? reason : "", reason ? strlen(reason) : 0);
    fputs("\n  arguments: ", p->tty);
    put_safe(p->tty, args ? args : "(none)",
             alen > SHOWN_ARGS ? SHOWN_ARGS : (args ? alen : 6));
    if (alen > SHOWN_ARGS)
        fprintf(p->tty, " ... (%zu bytes in all)", alen);
    for (;;) {
        fputs("\nRun it? [y]es / [n]o / [a]lways for '", p->tty);
        put_safe(p->tty, tool, strlen(tool));
        fputs("' this session: ", p->tty);
        fflush(p->tty);
        char line[64];
        if (fgets(line, sizeof line, p->tty) == NULL)
            return TG_APPROVAL_NO;
        size_t n = strcspn(line, "\r\n");
        if (line[n] == '\0' && n == sizeof line - 1) {
            int c; /* a long line: drop the rest */
            while ((c = fgetc(p->tty)) != EOF && c != '\n')
                ;
        }
        line[n] = '\0';
        if (strcmp(line, "y") == 0 || strcmp(line, "yes") == 0)
            return TG_APPROVAL_YES;
        if (strcmp(line, "a") == 0 || strcmp(line, "always") == 0)
            return TG_APPROVAL_ALWAYS;
        if (strcmp(line, "n") == 0 || strcmp(line, "no") == 0)
            return TG_APPROVAL_NO;
        fputs("please answer y, n or a", p->tty);
    }
}
