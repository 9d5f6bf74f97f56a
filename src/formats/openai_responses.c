/* SPDX-License-Identifier: MIT */
/*
 * openai_responses.c - the OpenAI Responses API wire format
 * (docs/formats.md, "openai-responses"): reads the function calls of a whole
 * response object (output[] items of type "function_call") or of an
 * input-items array (the function_call items that no later
 * function_call_output answers), and renders results as the
 * function_call_output items the next request carries.
 *
 * A call's id is its call_id (what function_call_output refers to); the
 * item's own id ("fc_...") is kept in call->meta as {"item_id":...} so a
 * renderer or a journal reader can still name the item. Items of other types
 * (messages, reasoning, hosted tool calls such as web_search_call) are not
 * calls toolgate runs and are skipped. A problem confined to one
 * function_call item never fails the parse: the call carries a pre-run error
 * (MALFORMED_CALL or MALFORMED_ARGUMENTS) and the other calls still run.
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "error.h"
#include "json_fast.h"

#define FORMAT_NAME "openai-responses"
#define EXPECTED_SHAPE                                                         \
    "expected an OpenAI Responses API response (with output[]) or an "         \
    "input-items array"

static int type_is(const json_t *item, const char *type)
{
    const char *t = json_string_value(json_object_get(item, "type"));
    return t != NULL && strcmp(t, type) == 0;
}

/* Whether v is an item of an input-items array: an object with a string
 * type or role (easy input messages have only a role). */
static int is_item(const json_t *v)
{
    return json_is_object(v) && (json_is_string(json_object_get(v, "type")) ||
                                 json_is_string(json_object_get(v, "role")));
}

/* Scores: 4 for a response object that says so ("object":"response"), 3 for
 * an object with an output[] of typed items or an items array holding
 * function calls or their outputs; a plain array of role messages is left to
 * openai-chat (which scores it 2) since both APIs accept that shape. */
static int detect(const json_t *doc)
{
    if (json_is_object(doc)) {
        const json_t *output = json_object_get(doc, "output"); /* borrowed */
        const char *obj = json_string_value(json_object_get(doc, "object"));
        if (!json_is_array(output))
            return 0;
        if (obj != NULL && strcmp(obj, "response") == 0)
            return 4;
        /* Without the "object" marker: an output array whose first element
         * is a typed item (an empty one is still this shape, weakly). */
        if (json_array_size(output) == 0)
            return 1;
        return json_is_string(
                   json_object_get(json_array_get(output, 0), "type"))
                   ? 3
                   : 0;
    }
    if (json_is_array(doc)) {
        size_t n = json_array_size(doc), calls = 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *it = json_array_get(doc, i); /* borrowed */
            if (!is_item(it))
                return 0;
            calls += type_is(it, "function_call") ||
                     type_is(it, "function_call_output");
        }
        return calls > 0 ? 3 : 0;
    }
    return 0;
}

/* ------------------------------------------------------------ calls */

int tg__openai_responses_call(const tg__responses_wire *w, tg_call **out)
{
    char genid[48];
    const char *id = w->call_id;
    int missing_id = id == NULL || *id == '\0';
    *out = NULL;
    if (missing_id) {
        snprintf(genid, sizeof genid, "missing-call-id-%zu", w->pos);
        id = genid;
    }
    tg_call *call = tg__call_new(id, w->name, FORMAT_NAME);
    if (call == NULL)
        return TG_ENOMEM;

    int rc = w->set_args(call, w->args);
    if (rc == 0 && w->item_id != NULL) {
        json_t *meta = json_pack("{s:s}", "item_id", w->item_id); /* new ref */
        if (meta == NULL)
            rc = TG_ENOMEM;
        else
            call->meta = meta;
    }
    if (rc != 0)
        goto fail;

    /* A malformed call outranks malformed arguments: it says more. */
    if (missing_id)
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "function_call item %zu has no call_id (a "
                                    "non-empty string); it was given the id "
                                    "'%s'",
                                    w->pos, genid);
    else if (w->name == NULL || *w->name == '\0')
        rc = tg__call_set_pre_error(call, "MALFORMED_CALL",
                                    "function_call '%s' has no name", id);
    if (rc != 0)
        goto fail;
    *out = call;
    return 0;
fail:
    tg__call_free(call);
    return rc;
}

/* Adds the function_call item (borrowed) at position i as a call. Returns 0
 * or TG_ENOMEM. */
static int add_function_call(tg_turn *turn, const json_t *item, size_t i)
{
    tg__responses_wire w = {
        .pos = i,
        .call_id = json_string_value(json_object_get(item, "call_id")),
        .item_id = json_string_value(json_object_get(item, "id")),
        .name = json_string_value(json_object_get(item, "name")),
        /* Proxies sometimes send the object itself instead of its string. */
        .set_args = tg__args_from_string_value,
        .args = json_object_get(item, "arguments"), /* borrowed */
    };
    tg_call *call;
    int rc = tg__openai_responses_call(&w, &call);
    return rc != 0 ? rc : tg__turn_add_call(turn, call);
}

/* The call_ids answered by function_call_output items, each with the
 * position of its last answer, sorted by id for binary search: an items
 * array may hold thousands of calls and answers. */
typedef struct answer {
    const char *id; /* borrowed from the document */
    size_t pos;
} answer;

static int cmp_answer(const void *a, const void *b)
{
    const answer *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c != 0)
        return c;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_answer_id(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const answer *)elem)->id);
}

/* Whether call_id has an answer after position pos. The answers are sorted
 * and reduced to the last position per id. */
static int answered_after(const answer *ans, size_t n, const char *id,
                          size_t pos)
{
    if (n == 0 || id == NULL)
        return 0;
    const answer *a = bsearch(id, ans, n, sizeof *ans, cmp_answer_id);
    return a != NULL && a->pos > pos;
}

static int parse_items(tg_turn *turn, const json_t *doc, tg_error *err)
{
    size_t n = json_array_size(doc), outputs = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(doc, i); /* borrowed */
        if (!json_is_object(it)) {
            char ptr[32];
            snprintf(ptr, sizeof ptr, "/%zu", i);
            tg__error_pointer(err, ptr);
            return tg__error_set(
                err, TG_EFORMAT,
                "input item %zu is not an object; " EXPECTED_SHAPE, i);
        }
        outputs += type_is(it, "function_call_output");
    }
    answer *ans = NULL;
    size_t nans = 0;
    if (outputs > 0) {
        if ((ans = malloc(outputs * sizeof *ans)) == NULL)
            return tg__error_set(err, TG_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            const json_t *it = json_array_get(doc, i); /* borrowed */
            const char *id = json_string_value(json_object_get(it, "call_id"));
            if (type_is(it, "function_call_output") && id != NULL) {
                ans[nans].id = id;
                ans[nans].pos = i;
                nans++;
            }
        }
        qsort(ans, nans, sizeof *ans, cmp_answer);
        /* Keep the last answer of each id: sorted by position within an id,
         * so the last entry of each run wins. */
        size_t w = 0;
        for (size_t r = 0; r < nans; r++) {
            if (w > 0 && strcmp(ans[w - 1].id, ans[r].id) == 0)
                ans[w - 1] = ans[r];
            else
                ans[w++] = ans[r];
        }
        nans = w;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const json_t *it = json_array_get(doc, i); /* borrowed */
        if (!type_is(it, "function_call") ||
            answered_after(ans, nans,
                           json_string_value(json_object_get(it, "call_id")),
                           i))
            continue;
        rc = add_function_call(turn, it, i);
    }
    free(ans);
    if (rc != 0)
        return tg__error_set(err, rc, "out of memory");
    return 0;
}

static int parse(tg_turn *turn, const json_t *doc, tg_error *err)
{
    if (json_is_array(doc))
        return parse_items(turn, doc, err);
    if (!json_is_object(doc))
        return tg__format_error(err, "",
                                "the document is not an object or an array; %s",
                                EXPECTED_SHAPE);
    const json_t *output = json_object_get(doc, "output"); /* borrowed */
    if (output == NULL)
        return tg__format_error(err, "", "an object without output; %s",
                                EXPECTED_SHAPE);
    if (json_is_null(output))
        return 0; /* a response still queued or in progress has no output */
    if (!json_is_array(output))
        return tg__format_error(err, "/output", "output is not an array; %s",
                                EXPECTED_SHAPE);
    size_t n = json_array_size(output);
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(output, i); /* borrowed */
        if (!json_is_object(it)) {
            char ptr[40];
            snprintf(ptr, sizeof ptr, "/output/%zu", i);
            tg__error_pointer(err, ptr);
            return tg__error_set(
                err, TG_EFORMAT,
                "output[%zu] is not an object; " EXPECTED_SHAPE, i);
        }
        if (!type_is(it, "function_call"))
            continue;
        int rc = add_function_call(turn, it, i);
        if (rc != 0)
            return tg__error_set(err, rc, "out of memory");
    }
    return 0;
}

/* ------------------------------------------------------------ fast path */

/* The fast path reads the shape of nearly every real turn - a response
 * object whose function_call items each have a call_id, a name and string
 * arguments - straight from the text, without building the document (most
 * of the parse time of a large turn went into building and freeing it).
 * Anything else, including duplicate keys on the path it reads, makes it
 * give up (FAST_BAIL), and the document path, which handles every shape and
 * reports every error, runs instead. */
#define FAST_BAIL TG_JCUR_BAIL

/* Top-level members some other format's detection looks at (choices, role
 * and tool_calls: openai-chat; content: anthropic; candidates and parts:
 * gemini; method and jsonrpc: mcp; tool: toolgate). A response object has
 * none of them; with them absent no other format scores the document at
 * all, while this one scores it at least 1 (an output array whose items are
 * all typed), so the fast path only takes documents detection gives it. */
static int foreign_key(const char *k, size_t kn)
{
    static const char *const keys[] = {
        "choices", "role",   "tool_calls", "content", "candidates",
        "parts",   "method", "jsonrpc",    "tool",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tg__jcur_key_is(k, kn, keys[i]))
            return 1;
    return 0;
}

/* Members of a response object that hold objects or arrays the fast path
 * does not read (settings echoed back, usage): skipped whole. */
static int response_container(const char *k, size_t kn)
{
    static const char *const keys[] = {
        "usage",
        "reasoning",
        "text",
        "tools",
        "metadata",
        "error",
        "incomplete_details",
        "tool_choice",
        "instructions",
        "prompt",
        "conversation",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tg__jcur_key_is(k, kn, keys[i]))
            return 1;
    return 0;
}

typedef struct fast_item {
    tg__jcur_str call_id, id, name;
    tg__buf args;  /* the arguments string, decoded */
    tg__buf names; /* call_id and name, each NUL-terminated */
    int has_type, is_call, has_args;
} fast_item;

/* Adds the function_call item just read as a call, as add_function_call
 * does for a plain item. */
static int fast_add_call(fast_item *it, tg_turn *turn)
{
    /* The record takes NUL-terminated id and tool. */
    it->names.len = 0;
    if (tg__buf_reserve(&it->names, it->call_id.n + it->name.n + 2) != 0)
        return TG_ENOMEM;
    char *id = it->names.data, *name = id + it->call_id.n + 1;
    memcpy(id, it->call_id.s, it->call_id.n);
    id[it->call_id.n] = '\0';
    memcpy(name, it->name.s, it->name.n);
    name[it->name.n] = '\0';
    tg_call *call = tg__call_new_args(id, name, FORMAT_NAME,
                                      tg__buf_cstr(&it->args), it->args.len);
    if (call == NULL)
        return TG_ENOMEM;
    if (it->id.seen) {
        /* add_function_call's {"item_id":id}, kept as text until something
         * reads it (tg__call_meta): one allocation instead of five; the
         * reader has checked the id is UTF-8 without NUL. */
        tg__buf meta;
        tg__buf_init(&meta, 0);
        int mrc = tg__buf_append(&meta, "{\"item_id\":", 11);
        if (mrc == 0)
            mrc = tg__json_string(&meta, it->id.n ? it->id.s : "", it->id.n);
        if (mrc == 0)
            mrc = tg__buf_append(&meta, "}", 1);
        if (mrc != 0 || (call->meta_text = tg__buf_take(&meta)) == NULL) {
            tg__buf_cleanup(&meta);
            tg__call_free(call);
            return TG_ENOMEM;
        }
    }
    return tg__turn_add_call(turn, call);
}

/* One output item: a function_call item becomes a call, an item of another
 * type is passed over. */
static int fast_item_read(tg__jcur *c, fast_item *it, tg_turn *turn)
{
    const char *k, *s;
    size_t kn, n;
    int first = 1, m = -1, rc = 0;
    if (tg__jcur_take(c, '{') != 0)
        return FAST_BAIL;
    it->call_id.seen = it->id.seen = it->name.seen = 0;
    it->has_type = it->is_call = it->has_args = 0;
    while (rc == 0 && (m = tg__jcur_member(c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "type")) {
            if (it->has_type || tg__jcur_string(c, &s, &n) != 0)
                return FAST_BAIL;
            it->has_type = 1;
            it->is_call = TG_JCUR_KEY_IS(s, n, "function_call");
        } else if (TG_JCUR_KEY_IS(k, kn, "call_id"))
            rc = tg__jcur_str_read(c, &it->call_id);
        else if (TG_JCUR_KEY_IS(k, kn, "id"))
            rc = tg__jcur_str_read(c, &it->id);
        else if (TG_JCUR_KEY_IS(k, kn, "name"))
            rc = tg__jcur_str_read(c, &it->name);
        else if (TG_JCUR_KEY_IS(k, kn, "arguments"))
            rc = tg__jcur_string_once(c, &it->args, &it->has_args);
        else
            rc = tg__jcur_skip_any(c);
    }
    if (rc != 0)
        return rc;
    /* Every item typed: detection then sees output[0] typed too. */
    if (m != 0 || !it->has_type)
        return FAST_BAIL;
    if (!it->is_call)
        return 0;
    if (!it->call_id.seen || it->call_id.n == 0 || !it->name.seen ||
        it->name.n == 0 || !it->has_args)
        return FAST_BAIL; /* per-call problems: the document path says them */
    return fast_add_call(it, turn);
}

static int fast_output(tg__jcur *c, fast_item *it, tg_turn *turn)
{
    int first = 1, e = -1, rc = 0;
    if (tg__jcur_take(c, '[') != 0)
        return FAST_BAIL;
    while (rc == 0 && (e = tg__jcur_element(c, &first)) == 1)
        rc = fast_item_read(c, it, turn);
    return rc != 0 ? rc : e == 0 ? 0 : FAST_BAIL;
}

static int parse_fast(tg_turn *turn, const char *text, size_t len)
{
    tg__jcur c;
    fast_item it;
    const char *k;
    size_t kn;
    int first = 1, m = -1, rc = 0, seen = 0;
    tg__jcur_init(&c, text, len);
    memset(&it, 0, sizeof it);
    tg__buf_init(&it.call_id.copy, 0);
    tg__buf_init(&it.id.copy, 0);
    tg__buf_init(&it.name.copy, 0);
    tg__buf_init(&it.args, 0);
    tg__buf_init(&it.names, 0);
    if (tg__jcur_take(&c, '{') != 0)
        rc = FAST_BAIL;
    while (rc == 0 && (m = tg__jcur_member(&c, &first, &k, &kn)) == 1) {
        if (TG_JCUR_KEY_IS(k, kn, "output")) {
            rc = seen ? FAST_BAIL : fast_output(&c, &it, turn);
            seen = 1;
        } else if (foreign_key(k, kn))
            rc = FAST_BAIL;
        else if (response_container(k, kn))
            rc = tg__jcur_skip_any(&c);
        else /* other formats' members end it (see foreign_key) */
            rc = tg__jcur_skip_scalar(&c);
    }
    if (rc == 0 && (m != 0 || !seen || tg__jcur_end(&c) != 0))
        rc = FAST_BAIL;
    tg__buf_cleanup(&it.call_id.copy);
    tg__buf_cleanup(&it.id.copy);
    tg__buf_cleanup(&it.name.copy);
    tg__buf_cleanup(&it.args);
    tg__buf_cleanup(&it.names);
    tg__jcur_cleanup(&c);
    if (rc == FAST_BAIL)
        return 0;
    return rc < 0 ? rc : 1;
}

/* ------------------------------------------------------------ rendering */

static int put_input_text(tg__buf *out, const char *text, size_t len)
{
    return tg__format_put_typed_text(out, "input_text", text, len);
}

/* One MCP content block (borrowed) as a function_call_output item: an
 * image of a type the API takes as input_image with a data URL, every
 * other block as input_text (its text, or its description). */
static int put_item(tg__buf *out, const json_t *b, tg__buf *scratch)
{
    if (tg__format_is_image_block(b)) {
        static const char open[] =
            "{\"type\":\"input_image\",\"detail\":\"auto\",\"image_url\":";
        const json_t *mime = json_object_get(b, "mimeType"); /* borrowed */
        const json_t *data = json_object_get(b, "data");     /* borrowed */
        scratch->len = 0;
        int rc = tg__buf_puts(scratch, "data:");
        if (rc == 0)
            rc = tg__buf_puts(scratch, json_string_value(mime));
        if (rc == 0)
            rc = tg__buf_puts(scratch, ";base64,");
        if (rc == 0)
            rc = tg__buf_append(scratch, json_string_value(data),
                                json_string_length(data));
        if (rc == 0)
            rc = tg__buf_append(out, open, sizeof open - 1);
        if (rc == 0)
            rc = tg__json_string(out, tg__buf_cstr(scratch), scratch->len);
        return rc == 0 ? tg__buf_append(out, "}", 1) : rc;
    }
    scratch->len = 0;
    int rc = tg__format_block_text(b, scratch);
    return rc == 0 ? put_input_text(out, tg__buf_cstr(scratch), scratch->len)
                   : rc;
}

static int render(const tg_turn *turn, tg__buf *out, tg_error *err)
{
    static const char open[] =
        "{\"type\":\"function_call_output\",\"call_id\":";
    static const char output[] = ",\"output\":";
    tg__buf text; /* the text of each result, reused */
    tg__buf_init(&text, 0);
    int rc = tg__buf_append(out, "[", 1);
    for (size_t i = 0; rc == 0 && i < turn->n; i++) {
        const tg_result *r = turn->results[i];
        const char *id = turn->calls[i]->id;
        if ((i > 0 && (rc = tg__buf_append(out, ",", 1)) != 0) ||
            (rc = tg__buf_append(out, open, sizeof open - 1)) != 0 ||
            (rc = tg__json_string(out, id, strlen(id))) != 0 ||
            (rc = tg__buf_append(out, output, sizeof output - 1)) != 0)
            break;
        /* content blocks: an array of input items, else the text */
        rc = tg__format_put_blocks(out, r, put_item, put_input_text, &text);
        if (rc == 1)
            rc = tg__format_payload_json_string(r, out, &text);
        if (rc == 0)
            rc = tg__buf_append(out, "}", 1);
    }
    if (rc == 0)
        rc = tg__buf_append(out, "]\n", 2);
    tg__buf_cleanup(&text);
    if (rc != 0)
        return tg__error_set(err, rc, "cannot render %s results: %s",
                             FORMAT_NAME, tg_strerror(rc));
    return 0;
}

static json_t *tool_def(const json_t *t)
{
    json_t *head = json_pack("{s:s}", "type", "function"); /* new ref */
    json_t *o = head ? tg__format_tool_object(t, head, "parameters") : NULL;
    json_decref(head);
    return o;
}

/* Tool definitions: [{"type":"function","name","description","parameters"}]. */
static int render_tools(const json_t *tools, tg__buf *out, tg_error *err)
{
    return tg__format_render_tool_list(tools, tool_def, NULL, FORMAT_NAME, out,
                                       err);
}

const tg__format tg__format_openai_responses = {
    .name = FORMAT_NAME,
    .detect = detect,
    .parse = parse,
    .parse_text = NULL,
    .parse_fast = parse_fast,
    .render = render,
    .render_tools = render_tools,
};
