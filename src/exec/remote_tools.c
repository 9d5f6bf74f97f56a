/* SPDX-License-Identifier: MIT */
/*
 * remote_tools.c - what a server's tool list makes of the registry
 * (remote.h): each tool registered as <source><separator><tool> with its
 * definition sanitized (src/remote/sanitize.h), its schemas compiled, its
 * annotations believed only from a trusted source, and its pin checked
 * (src/remote/pin.h; the pins live in the journal, or in memory for the
 * runtime's life when the journal is off). A tool that cannot be used is
 * registered disabled with the reason, a changed one held: both are left
 * out of tool lists and their calls are denied with the reason.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "pin.h"
#include "remote.h"
#include "runtime.h"
#include "sanitize.h"

/* The four hints a server could use to look harmless. */
static const char *const hints[] = {"readOnlyHint", "destructiveHint",
                                    "idempotentHint", "openWorldHint", NULL};

/* The annotations the runtime shows and judges for a tool of src: a
 * trusted source's as served, else without the hints (absent hints are
 * the MCP defaults: not read-only, destructive, not idempotent, open
 * world), so a server cannot make its own rm read-only. New ref or NULL. */
static json_t *annotations_for(const tg__rsrc *src, const json_t *ann)
{
    if (!json_is_object(ann))
        return NULL;
    json_t *a = json_deep_copy(ann); /* new ref */
    if (a != NULL && !src->cfg->trusted)
        for (size_t i = 0; hints[i]; i++)
            json_object_del(a, hints[i]);
    if (a != NULL && json_object_size(a) == 0) {
        json_decref(a);
        a = NULL;
    }
    return a;
}

/* The info row of one tool for tg_runtime_sources; new ref. */
static json_t *info_row(const char *name, const char *remote, tg__tool_state st,
                        const char *reason, json_t *flags)
{
    static const char *const names[] = {"enabled", "held", "disabled"};
    json_t *o = json_pack("{s:s?, s:s, s:s}", "name", name, "remote", remote,
                          "state", names[st]); /* new ref */
    if (o != NULL && reason != NULL)
        json_object_set_new(o, "reason", json_string(reason));
    if (o != NULL && flags != NULL && json_array_size(flags) > 0)
        json_object_set(o, "flags", flags);
    return o;
}

/* Sets a tool disabled or held with reason (formatted). */
static int set_off(tg__tool *t, tg__tool_state st, const char *fmt, ...)
    TG__PRINTF(3, 4);
static int set_off(tg__tool *t, tg__tool_state st, const char *fmt, ...)
{
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    t->state = st;
    free(t->off_reason);
    return (t->off_reason = strdup(text)) != NULL ? 0 : TG_ENOMEM;
}

/* Compiles a schema member of the clean definition into the tool; a
 * schema that does not compile disables the tool with the reason. */
static int compile(tg__tool *t, const json_t *doc, json_t **slot,
                   tg_schema **out, const char *what)
{
    if (doc == NULL)
        return 0;
    if ((*slot = json_deep_copy(doc)) == NULL)
        return TG_ENOMEM;
    tg_error se = {0};
    int rc = tg__schema_compile(*slot, NULL, out, &se);
    if (rc == TG_ENOMEM)
        return rc;
    if (rc != 0 && t->state == TG_TOOL_ENABLED)
        return set_off(t, TG_TOOL_DISABLED,
                       "tool '%s' is disabled: its %s is not a valid JSON "
                       "Schema%s%s: %s",
                       t->name, what, se.pointer[0] ? " at " : "", se.pointer,
                       se.message);
    return 0;
}

/* A registry tool for one served definition (clean: sanitized). */
static int make_tool(tg__rsrc *src, const char *name, const char *remote,
                     const json_t *clean, tg__tool **out)
{
    tg__tool *t = calloc(1, sizeof *t);
    if (t == NULL)
        return TG_ENOMEM;
    *out = t;
    t->kind = TG_TOOL_KIND_REMOTE;
    t->remote = src;
    t->timeout_ms = src->cfg->timeout_ms;
    const char *title = json_string_value(json_object_get(clean, "title"));
    const char *desc = json_string_value(json_object_get(clean, "description"));
    if ((t->name = strdup(name)) == NULL ||
        (t->remote_name = strdup(remote)) == NULL ||
        (t->description = strdup(desc ? desc : "")) == NULL ||
        (title != NULL && (t->title = strdup(title)) == NULL))
        return TG_ENOMEM;
    const json_t *in = json_object_get(clean, "inputSchema"); /* borrowed */
    const json_t *os = json_object_get(clean, "outputSchema");
    int rc = compile(t, in, &t->input_schema, &t->schema, "inputSchema");
    if (rc == 0)
        rc = compile(t, json_is_object(os) ? os : NULL, &t->output_schema,
                     &t->out_schema, "outputSchema");
    if (rc != 0)
        return rc;
    t->output =
        t->out_schema != NULL ? TG_TOOL_OUTPUT_JSON : TG_TOOL_OUTPUT_CONTENT;
    t->annotations =
        annotations_for(src, json_object_get(clean, "annotations"));
    return 0;
}

/* The pins of src: from the journal (rows with an accepted definition),
 * or from memory. *entries point into *rows / src->mem_pins. */
static int read_pins(tg__rsrc *src, tg__pin_row **rows, size_t *nrows,
                     tg__pin_entry **entries, size_t *n, tg_error *err)
{
    *rows = NULL;
    *nrows = *n = 0;
    *entries = NULL;
    tg__journal *j = src->rt->journal;
    if (j != NULL) {
        int rc = tg__journal_pins_read(j, src->cfg->name, rows, nrows, err);
        if (rc != 0)
            return rc;
        *entries = calloc(*nrows + 1, sizeof **entries);
        if (*entries == NULL)
            return TG_ENOMEM;
        for (size_t i = 0; i < *nrows; i++)
            if ((*rows)[i].checksum != NULL)
                (*entries)[(*n)++] =
                    (tg__pin_entry){(*rows)[i].tool, (*rows)[i].checksum,
                                    (*rows)[i].definition};
        return 0;
    }
    *entries = calloc(json_object_size(src->mem_pins) + 1, sizeof **entries);
    if (*entries == NULL)
        return TG_ENOMEM;
    const char *k;
    json_t *v; /* borrowed */
    json_object_foreach(src->mem_pins, k, v)
    {
        (*entries)[(*n)++] = (tg__pin_entry){
            k, json_string_value(json_object_get(v, "checksum")),
            json_string_value(json_object_get(v, "definition"))};
    }
    return 0;
}

/* Records what the verdicts say: first sights pinned, held definitions
 * waiting for the user. */
static void record_pins(tg__rsrc *src, const tg__pin_verdict *v, size_t n)
{
    tg__journal *j = src->rt->journal;
    tg_error e = {0};
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == TG_PIN_REMOVED || v[i].kind == TG_PIN_SAME)
            continue;
        if (j != NULL) {
            if (v[i].held)
                (void)tg__journal_pin_hold(
                    j, src->cfg->name, v[i].tool, v[i].checksum,
                    v[i].definition,
                    v[i].kind == TG_PIN_RENAMED ? v[i].other : NULL, &e);
            else
                (void)tg__journal_pin_first_seen(j, src->cfg->name, v[i].tool,
                                                 v[i].checksum, v[i].definition,
                                                 &e);
        } else if (!v[i].held) {
            json_object_set_new(src->mem_pins, v[i].tool,
                                json_pack("{s:s, s:s}", "checksum",
                                          v[i].checksum, "definition",
                                          v[i].definition));
        }
    }
}

/* The verdict on the tool named remote, or NULL. */
static const tg__pin_verdict *verdict_of(const tg__pin_verdict *v, size_t n,
                                         const char *remote)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].kind != TG_PIN_REMOVED && strcmp(v[i].tool, remote) == 0)
            return &v[i];
    return NULL;
}

/* Whether row list `rows` has a tool named name. */
static bool listed(const json_t *rows, const char *name)
{
    size_t i;
    json_t *row; /* borrowed */
    json_array_foreach(rows, i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "name")), name) == 0)
            return true;
    }
    return false;
}

/* Takes src's tools of the last list out of the registry, but those named
 * in keep (NULL: none). */
static void unregister(tg__rsrc *src, const json_t *keep)
{
    size_t i;
    json_t *row; /* borrowed */
    json_array_foreach(src->tools, i, row)
    {
        const char *name = json_string_value(json_object_get(row, "name"));
        const tg__tool *t = tg__registry_find(src->rt->reg, name);
        if (t != NULL && t->remote == src &&
            (keep == NULL || !listed(keep, name)))
            (void)tg__registry_remove(src->rt->reg, name);
    }
}

void tg__rsrc_unregister(tg__rsrc *src)
{
    unregister(src, NULL);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool same_json(const json_t *a, const json_t *b)
{
    return a == b || (a != NULL && b != NULL && json_equal(a, b));
}

/* Whether a re-listed tool is the registered one again: then that one is
 * kept (a removed tool lives until the runtime ends, for the calls that
 * borrow it, so a server that re-lists without end must not add one
 * each time). */
static bool same_tool(const tg__tool *a, const tg__tool *b)
{
    return a->state == b->state && a->timeout_ms == b->timeout_ms &&
           a->output == b->output && same_str(a->off_reason, b->off_reason) &&
           same_str(a->title, b->title) &&
           same_str(a->description, b->description) &&
           same_json(a->input_schema, b->input_schema) &&
           same_json(a->output_schema, b->output_schema) &&
           same_json(a->annotations, b->annotations);
}

/* Registers one served tool (raw: as served; i: its place in the list). */
static int add_one(tg__rsrc *src, const json_t *raw, size_t i,
                   const tg__pin_verdict *verdicts, size_t nv,
                   const char *hold_all, json_t *rows)
{
    const char *remote = json_string_value(json_object_get(raw, "name"));
    char name[512];
    snprintf(name, sizeof name, "%s%s", src->prefix, remote);
    json_t *clean = NULL; /* new ref */
    tg__sanitize_flag *flags = NULL;
    size_t nflags = 0;
    tg_error e = {0};
    tg__tool *t = NULL;
    int rc = tg__sanitize_tool(raw, &clean, &flags, &nflags, &e);
    json_t *fj = rc == 0 ? tg__sanitize_flags_json(flags, nflags) : NULL;
    if (rc == 0)
        rc = make_tool(src, name, remote, clean, &t);
    if (rc != 0)
        goto done;
    const tg__tool *other = tg__registry_find(src->rt->reg, name);
    const tg__tool *own = other != NULL && other->remote == src ? other : NULL;
    if (own != NULL)
        other = NULL; /* its own tool of the last list */
    if (!tg__tool_name_valid(name))
        rc = set_off(t, TG_TOOL_DISABLED,
                     "tool '%s' of MCP source '%s' is disabled: '%s' is not "
                     "a valid tool name (1 to 128 letters, digits, '_', '.' "
                     "or '-')",
                     remote, src->cfg->name, name);
    else if (other != NULL)
        rc = set_off(t, TG_TOOL_DISABLED,
                     "tool '%s' of MCP source '%s' is disabled: its name "
                     "'%s' is taken by another tool",
                     remote, src->cfg->name, name);
    else if ((int64_t)i >= src->cfg->max_tools)
        rc = set_off(t, TG_TOOL_DISABLED,
                     "tool '%s' is disabled: MCP source '%s' serves more "
                     "than mcp.max_tools (%lld) tools",
                     name, src->cfg->name, (long long)src->cfg->max_tools);
    const tg__pin_verdict *pv = verdict_of(verdicts, nv, remote);
    if (rc == 0 && pv != NULL && pv->held && t->state == TG_TOOL_ENABLED) {
        /* pin.c's reason ends with how to accept; this one names the tool */
        const char *why = pv->reason ? pv->reason : "its definition changed";
        const char *cut = strstr(why, "; accept it with");
        rc = set_off(t, TG_TOOL_HELD,
                     "tool '%s' is held: %.*s; review the change and accept "
                     "it with `toolgate mcp accept %s`",
                     name, (int)(cut ? (size_t)(cut - why) : strlen(why)), why,
                     name);
    }
    if (rc == 0 && hold_all != NULL && t->state == TG_TOOL_ENABLED)
        rc = set_off(t, TG_TOOL_HELD,
                     "tool '%s' is held: its pin cannot be checked (%s)", name,
                     hold_all);
    if (rc != 0)
        goto done;
    json_t *row = info_row(name, remote, t->state, t->off_reason, fj);
    if (row != NULL && pv != NULL) {
        /* what its pin says: "pinned" (as served), "new" (pinned now, or
         * held under strict), "changed", "renamed"; the served checksum */
        json_object_set_new(row, "pin",
                            json_string(tg__pin_kind_name(pv->kind)));
        json_object_set_new(row, "checksum", json_string(pv->checksum));
    }
    json_array_append_new(rows, row);
    if (other != NULL || !tg__tool_name_valid(name)) {
        /* not registered: the name is another tool's (or none) */
        tg__tool_free(t);
        t = NULL;
        goto done;
    }
    if (own != NULL && same_tool(own, t))
        goto done; /* unchanged: the registered one stays (t freed) */
    if (own != NULL)
        (void)tg__registry_remove(src->rt->reg, name);
    rc = tg__registry_add(src->rt->reg, t, &e);
    t = NULL;
done:
    tg__tool_free(t);
    json_decref(fj);
    json_decref(clean);
    tg__sanitize_flags_free(flags, nflags);
    return rc == TG_ENOMEM ? rc : 0;
}

void tg__rsrc_apply(tg__rsrc *src, json_t *defs)
{
    json_t *rows = json_array(); /* new ref */
    tg__pin_row *prow = NULL;
    size_t nprow = 0, npins = 0, nv = 0;
    tg__pin_entry *pins = NULL;
    tg__pin_verdict *verdicts = NULL;
    tg_error e = {0};
    const char *hold_all = NULL;
    if (defs == NULL || rows == NULL)
        goto done;
    if (src->cfg->pin != TG__PIN_OFF &&
        (read_pins(src, &prow, &nprow, &pins, &npins, &e) != 0 ||
         tg__pin_compare(pins, npins, defs, src->cfg->pin == TG__PIN_STRICT,
                         &verdicts, &nv, &e) != 0)) {
        /* a list the pins cannot judge (a name served twice, the journal
         * failing): every tool is held rather than trusted blindly */
        hold_all = e.message[0] ? e.message : "the pins cannot be read";
    }
    record_pins(src, verdicts, nv);
    size_t i;
    json_t *raw; /* borrowed */
    json_array_foreach(defs, i, raw)
    {
        if (add_one(src, raw, i, verdicts, nv, hold_all, rows) != 0)
            break;
    }
    unregister(src, rows); /* the last list's tools no longer served */
    json_decref(src->tools);
    src->tools = rows;
    rows = NULL;
    if (src->defs != defs) {
        json_decref(src->defs);
        src->defs = json_incref(defs);
    }
done:
    json_decref(rows);
    json_decref(defs);
    tg__pin_verdicts_free(verdicts, nv);
    free(pins);
    tg__journal_pins_free(prow, nprow);
}

void tg__rsrc_listed(void *ud, tg__rtool_list *list)
{
    tg__rsrc *src = ud;
    json_t *defs = json_array(); /* new ref */
    for (size_t i = 0; defs != NULL && i < list->n; i++) {
        json_t *d = json_loads(list->tools[i].json, 0, NULL); /* new ref */
        if (d != NULL && json_is_string(json_object_get(d, "name")))
            json_array_append_new(defs, d);
        else
            json_decref(d);
    }
    tg__rtool_list_free(list);
    tg__rsrc_apply(src, defs);
}
