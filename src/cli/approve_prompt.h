/* SPDX-License-Identifier: MIT */
/*
 * approve_prompt.h - asking the operator on the terminal whether a call the
 * policy answers `ask` may run (a tg_approve_fn for the runtime).
 */
#ifndef TG_CLI_APPROVE_PROMPT_H
#define TG_CLI_APPROVE_PROMPT_H

#include "toolgate.h"

typedef struct approve_prompt approve_prompt;

/* The controlling terminal, when stderr is one and /dev/tty opens; NULL
 * otherwise (then nobody can be asked). Free with approve_prompt_close. */
approve_prompt *approve_prompt_open(void);
void approve_prompt_close(approve_prompt *p);
/* The tg_approve_fn: ud is the approve_prompt. */
tg_approval approve_prompt_ask(void *ud, const tg_call *call,
                               const char *reason);

#endif
