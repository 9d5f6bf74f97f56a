/* SPDX-License-Identifier: MIT */
/*
 * tasks.h - long calls as tasks (tasks.c): 2025-11-25's core tasks and
 * 2026-07-28's io.modelcontextprotocol/tasks extension, kept durable in
 * the journal's file through tg_task_store. The hooks the other server
 * files call are the only way in; everything else is tasks.c's own.
 */
#ifndef TG_SERVE_TASKS_H
#define TG_SERVE_TASKS_H

#include "server.h"

/* The server's task state (lazily made; NULL until a task is used). */
typedef struct srv_tasks srv_tasks;
/* A task whose call runs in this server (one per srv_req that is one). */
typedef struct srv_task srv_task;

/* methods.c: adds the tasks capability to `caps` - 2025-11-25's `tasks`
 * ({list, cancel, requests.tools.call}) for a session that negotiated
 * it, 2026-07-28's extension under `extensions` when the request's
 * clientCapabilities declare it. */
void srv_tasks_capabilities(const srv_ctx *c, json_t *caps);
/* methods.c: what every tool says of tasks in a tools/list page under
 * 2025-11-25 (execution.taskSupport): any call may run as a task. */
#define SRV_TASK_SUPPORT "optional"
/* methods.c: 1 when c->method is a tasks/ method, which this answered
 * (now or later), else 0. */
int srv_tasks_method(srv_ctx *c);

/* call.c: after the call of request `r` was submitted: makes it a task
 * when its request asks for one (2025-11-25 `task` param: at once) or
 * allows one (2026-07-28 with the extension declared: once it has run
 * for a while). Returns 1 when it answered the request already (the
 * CreateTaskResult), else 0. */
int srv_task_start(srv_ctx *c, srv_req *r);
/* call.c, in the request's done callback: when `r` is a task, takes its
 * answer (recorded in the journal, waiting tasks/result answered) and
 * returns 1; returns 0 when the request is answered as usual (no task,
 * or one not yet created). */
int srv_task_done(srv_req *r, int status, const tg_error *err);

/* approve.c, elicit.c: the request of the task whose call is `call_id`,
 * or whose question (an elicitation/create this server sent: a policy
 * ask's or a source's) has id `ask_id`, of a task that runs in this
 * server; NULL when none. */
srv_req *srv_task_req_by_call(tg__srv *srv, const char *call_id);
srv_req *srv_task_req_by_ask(tg__srv *srv, const json_t *ask_id);
/* approve.c, elicit.c: the call of task request `r` (2025-11-25) waits
 * for its user's answer: the task shows `input_required` until r->ask (a
 * policy ask) or r->elicits (a source's questions) are answered,
 * and `msg_text` (an elicitation/create request carrying the related task,
 * copied) goes to the session that made the task and to every tasks/result
 * that waits for it, now and later. 0, or -1 when it cannot be kept (the
 * call is then refused). */
int srv_task_ask(srv_req *r, const char *msg_text);
/* The id of the task request r is (borrowed, while it runs), or "". */
const char *srv_task_id(const srv_req *r);

/* server.c: frees the task state (after the loop ended). */
void srv_tasks_free(tg__srv *srv);

#endif
