/* SPDX-License-Identifier: MIT */
/*
 * config_keys.c - the table of every key toolgate.json may hold
 * (config_keys.h): what the loaders accept and what docs/configuration.md
 * says, from one place. A key added here without a loader reading it, or
 * read by a loader without being here, fails the tests
 * (tests/unit/registry/test_config_keys.c, test_docs_config_reference.sh).
 */
#include "config_keys.h"

#include <stddef.h>
#include <string.h>

const tg__config_section tg__config_sections[] = {
    {"", "The top level of the file. Relative paths are taken from the "
         "configuration file's directory."},
    {"journal",
     "The object form of `journal` (a path string, `true` for the default "
     "path, or `null`/`false` for no journal are the other forms)."},
    {"spool", "Where output larger than the inline limit goes (`null` or "
              "`false`: no spool, output stays in memory)."},
    {"limits", "Bounds on what one call may cost."},
    {"serve", "`toolgate serve` and tg_server_new: the MCP server."},
    {"policy", "The permission policy (`null`: no policy, every call "
               "allowed). Rules are read top to bottom; the first whose "
               "conditions all hold decides."},
    {"policy.rules[]",
     "One rule. The conditions present must all hold for the rule to "
     "decide."},
    {"hooks", "Programs that see each call before its tool runs and each "
              "result after it."},
    {"hooks.before[]", "An entry of `hooks.before` or `hooks.after` in its "
                       "object form (the short form is the argv array "
                       "alone)."},
    {"sandbox", "How command tools, `shell` and stdio MCP servers run."},
    {"sandbox.rlimits", "Resource limits set in each tool process before "
                        "exec; `0` leaves a limit alone."},
    {"tools[]", "A command tool: an argv template run without a shell."},
    {"tools[].ok_exit", "The range form of `ok_exit`."},
    {"tools[].context_env",
     "Which variables a call's `context.env` may set for this tool, beyond "
     "the built-in table of refused ones."},
    {"tools[] (MCP source)",
     "An entry of `tools` with an `mcp` member is not a tool but an MCP "
     "server whose tools toolgate offers as `<name><separator><tool>`."},
    {"tools[].mcp", "How to reach an MCP source: exactly one of `command` "
                    "(stdio) and `url` (Streamable HTTP)."},
    {NULL, NULL}};

const tg__config_key tg__config_keys[] = {
    /* the top level */
    {"", "workspace", "path", "`.`",
     "the directory the file tools and command tools work in"},
    {"", "journal", "path, object, true, false or null",
     "`.toolgate/journal.db`", "the SQLite journal of every call and result"},
    {"", "spool", "object, false or null", "see `spool`",
     "the artifact store for large output"},
    {"", "limits", "object", "see `limits`", "bounds on each call"},
    {"", "builtin_tools", "array of names",
     "`read_file`, `list_dir`, `grep`, `write_file`, `shell`",
     "which built-in tools are on (`echo` only when listed)"},
    {"", "tools", "array", "`[]`", "command tools and MCP sources"},
    {"", "policy", "object or null", "`write_file` and `shell` on `ask`",
     "the permission policy"},
    {"", "hooks", "object or null", "none",
     "before and after hooks (operator programs, not sandboxed)"},
    {"", "sandbox", "object", "see `sandbox`",
     "bubblewrap, resource limits and hidden paths for command tools"},
    {"", "envelope", "boolean", "`true`",
     "wrap tool output shown to models in the trust envelope"},
    {"", "serve", "object", "see `serve`", "the MCP server's settings"},

    /* journal */
    {"journal", "path", "path, false or null", "`.toolgate/journal.db`",
     "the database file; `null` or `false` turns the journal off"},
    {"journal", "sync", "`\"normal\"` or `\"full\"`", "`\"normal\"`",
     "`full` fsyncs the WAL at every commit (survives a power loss)"},
    {"journal", "commit", "`\"background\"` or `\"inline\"`",
     "`\"background\"`",
     "`background`: rows are written by a thread from a crash-safe log the "
     "call path appends to; `inline`: each begin and finish is a "
     "transaction the call waits for (`sync: \"full\"` implies it)"},
    {"journal", "keep_days", "integer 0 to 36500", "`0` (keep all)",
     "delete completed calls whose result is older than this"},
    {"journal", "max_rows", "integer 0 to 2^53-1", "`0` (no limit)",
     "keep only the newest this many completed calls"},

    /* spool */
    {"spool", "dir", "path", "`.toolgate/artifacts`",
     "the content-addressed artifact store"},
    {"spool", "inline_max_bytes", "integer 0 to 2^30", "`16384`",
     "output past this many bytes becomes an artifact and a handle"},
    {"spool", "max_bytes", "integer 1 to 2^53-1", "no cap",
     "evict least recently used artifacts past this many stored bytes"},

    /* limits */
    {"limits", "timeout_ms", "integer 1 to 86400000", "`30000`",
     "the default deadline of a call"},
    {"limits", "parallel", "integer 1 to 1024", "`8`",
     "how many calls run at once"},
    {"limits", "max_args_bytes", "integer 1 to 2^30", "`1048576`",
     "larger arguments end `ARGUMENTS_TOO_LARGE`"},
    {"limits", "max_output_bytes", "integer 1 to 2^53-1", "`1073741824`",
     "output kept per stream; past it the call ends `OUTPUT_LIMIT`"},
    {"limits", "kill_grace_ms", "integer 0 to 600000", "`2000`",
     "between SIGTERM and SIGKILL on timeout or cancel"},
    {"limits", "repair", "boolean", "`false`",
     "strip code fences and trailing commas, unquote numbers and booleans"},
    {"limits", "max_validation_steps", "integer 1000 to 2^53-1", "`10000000`",
     "what checking one call's arguments against a schema may cost"},

    /* serve */
    {"serve", "task_after_ms", "integer 0 to 3600000", "`1000`",
     "a `tools/call` of a client that declared the tasks extension "
     "(2026-07-28) still running this long becomes a task"},

    /* policy */
    {"policy", "default", "`\"allow\"`, `\"deny\"` or `\"ask\"`", "`\"allow\"`",
     "the decision when no rule matches"},
    {"policy", "rules", "array of rules", "`[]`",
     "read top to bottom, the first that matches decides"},
    {"policy.rules[]", "tool", "glob", "any tool",
     "the tool names the rule applies to (`*` matches any run)"},
    {"policy.rules[]", "caller", "glob", "any caller",
     "the caller ids the rule applies to"},
    {"policy.rules[]", "annotations", "object of booleans", "none",
     "`readOnlyHint`, `destructiveHint`, `idempotentHint`, "
     "`openWorldHint` the tool must have (MCP defaults when absent)"},
    {"policy.rules[]", "args", "object", "none",
     "per argument: `equals`, `one_of`, `matches` (PCRE2), `under` (a "
     "path), `max_length`"},
    {"policy.rules[]", "decision", "`\"allow\"`, `\"deny\"` or `\"ask\"`",
     "required", "what the rule decides"},
    {"policy.rules[]", "reason", "string", "the rule described",
     "the reason a refused call carries"},

    /* hooks */
    {"hooks", "before", "array of hooks", "`[]`",
     "run before each tool; may allow, deny, cancel or rewrite arguments"},
    {"hooks", "after", "array of hooks", "`[]`",
     "run on each result of a tool that ran; may replace its payload"},
    {"hooks", "timeout_ms", "integer 1 to 86400000", "`5000`",
     "the deadline of a hook without its own"},
    {"hooks.before[]", "command", "argv array", "required",
     "the hook program (no shell; a bare name is looked up in PATH)"},
    {"hooks.before[]", "timeout_ms", "integer 1 to 86400000",
     "`hooks.timeout_ms`", "this hook's deadline"},

    /* sandbox */
    {"sandbox", "mode",
     "`\"auto\"`, `\"bubblewrap\"`, `\"warm\"`, `\"cold\"` or `\"off\"`",
     "`\"auto\"`",
     "`auto`: bubblewrap where it works (warm), else rlimits; `bubblewrap`: "
     "required (warm); `warm`: required, kept warm per profile; `cold`: "
     "required, one bubblewrap per call; `off`: rlimits and the environment "
     "allowlist only"},
    {"sandbox", "idle_ms", "integer 1 to 86400000", "`60000`",
     "a warm sandbox unused this long is ended"},
    {"sandbox", "bwrap", "program", "`bwrap` in PATH",
     "the bubblewrap program (a path is relative to the file)"},
    {"sandbox", "hide", "array of at most 64 paths", "the credential files",
     "paths masked inside the sandbox (absolute or `~/`)"},
    {"sandbox", "rlimits", "object", "see `sandbox.rlimits`",
     "resource limits per tool process"},
    {"sandbox.rlimits", "cpu_s", "integer 0 to 31536000", "`600`",
     "CPU seconds per process (RLIMIT_CPU)"},
    {"sandbox.rlimits", "as_mb", "integer 0 to 2^30", "`0`",
     "address space in MiB (RLIMIT_AS)"},
    {"sandbox.rlimits", "nofile", "integer 0 to 1048576", "`1024`",
     "open files (RLIMIT_NOFILE)"},
    {"sandbox.rlimits", "nproc", "integer 0 to 4194304", "`512`",
     "processes per call (RLIMIT_NPROC in the call's user namespace)"},
    {"sandbox.rlimits", "fsize_mb", "integer 0 to 2^30", "`1024`",
     "size of a file written, in MiB (RLIMIT_FSIZE)"},

    /* a command tool */
    {"tools[]", "name", "1 to 128 of `[A-Za-z0-9_.-]`", "required",
     "the tool's name; may not be an enabled built-in's"},
    {"tools[]", "title", "string", "none", "a human-readable name"},
    {"tools[]", "description", "string", "`\"\"`",
     "what the model reads about the tool"},
    {"tools[]", "input_schema", "JSON Schema of type object",
     "`{\"type\":\"object\"}`", "the arguments are checked against it"},
    {"tools[]", "output_schema", "JSON Schema of type object", "none",
     "stdout must be JSON matching it (implies `output` `json`)"},
    {"tools[]", "annotations", "object", "none",
     "MCP tool annotations (`readOnlyHint`, ...), read by the policy"},
    {"tools[]", "command", "argv template", "required",
     "`{name}` elements take that argument, `{name?}` is dropped when absent"},
    {"tools[]", "stdin", "string template", "nothing",
     "fed to standard input (`{*}`: the whole arguments object)"},
    {"tools[]", "env", "object of strings", "none",
     "variables set for the tool"},
    {"tools[]", "env_pass", "array of names", "none",
     "variables of toolgate's own environment passed to this tool"},
    {"tools[]", "timeout_ms", "integer 1 to 86400000", "`limits.timeout_ms`",
     "this tool's deadline"},
    {"tools[]", "output", "`\"text\"`, `\"json\"` or `\"mcp-content\"`",
     "`\"text\"`", "what stdout is"},
    {"tools[]", "ok_exit", "array of statuses, or `{min, max}`", "`[0]`",
     "exit statuses that count as success"},
    {"tools[]", "option_args", "array of placeholder names", "none",
     "placeholders whose values may begin with `-`"},
    {"tools[]", "context_env", "object", "none",
     "variables a call's `context.env` may or may not set"},
    {"tools[]", "network", "boolean", "`false`",
     "keep the host's network inside the sandbox"},
    {"tools[]", "sandbox", "boolean or `{\"mode\": \"warm\"|\"cold\"}`",
     "`true`",
     "`false` runs the tool without bubblewrap and rlimits; a mode picks "
     "how bubblewrap runs it"},
    {"tools[].ok_exit", "min", "integer 0 to 255", "required",
     "the lowest status that counts as success"},
    {"tools[].ok_exit", "max", "integer 0 to 255", "required",
     "the highest status that counts as success"},
    {"tools[].context_env", "allow", "array of names or `*` patterns", "none",
     "variables the context may set although the table refuses them"},
    {"tools[].context_env", "deny", "array of names or `*` patterns", "none",
     "further variables the context may not set"},

    /* an MCP source */
    {"tools[] (MCP source)", "name", "1 to 128 of `[A-Za-z0-9_.-]`", "required",
     "the source's name, the prefix of its tools"},
    {"tools[] (MCP source)", "mcp", "object", "required",
     "the server (see `tools[].mcp`)"},
    {"tools[].mcp", "command", "argv array", "",
     "stdio: the server's argv (no shell; PATH is searched)"},
    {"tools[].mcp", "env", "object of strings", "none",
     "stdio: variables set for the server"},
    {"tools[].mcp", "env_pass", "array of names", "none",
     "stdio: variables passed from toolgate's environment"},
    {"tools[].mcp", "cwd", "absolute path", "the workspace",
     "stdio: the server's directory"},
    {"tools[].mcp", "network", "boolean", "`true`",
     "stdio: keep the host's network"},
    {"tools[].mcp", "sandbox", "boolean", "`true`",
     "stdio: run the server in the command tools' sandbox"},
    {"tools[].mcp", "url", "`http://` or `https://` URL", "",
     "Streamable HTTP: the endpoint"},
    {"tools[].mcp", "headers", "object of strings", "none",
     "HTTP: extra request headers"},
    {"tools[].mcp", "token_env", "variable name", "none",
     "HTTP: the variable whose value is sent as `Authorization: Bearer`"},
    {"tools[].mcp", "separator", "1 to 8 of `[A-Za-z0-9_.-]`", "`\"__\"`",
     "between the source's name and the server's tool name"},
    {"tools[].mcp", "trusted", "boolean", "`false`",
     "believe the server's tool annotations"},
    {"tools[].mcp", "pin", "`\"on\"`, `\"strict\"` or `\"off\"`", "`\"on\"`",
     "hold a tool whose definition changed until `toolgate mcp accept`"},
    {"tools[].mcp", "start", "`\"lazy\"` or `\"eager\"`", "`\"lazy\"`",
     "start at the first turn naming its prefix, or with the runtime"},
    {"tools[].mcp", "roots", "array of paths or `file://` URIs",
     "the workspace", "what the server gets for `roots/list`"},
    {"tools[].mcp", "timeout_ms", "integer 1 to 86400000",
     "`limits.timeout_ms`", "a call's deadline"},
    {"tools[].mcp", "max_timeout_ms", "integer 1 to 86400000", "no extension",
     "how far progress notifications may push a call's deadline"},
    {"tools[].mcp", "connect_ms", "integer 1 to 600000", "`30000`",
     "the negotiation's deadline"},
    {"tools[].mcp", "max_tools", "integer 1 to 10000", "`1000`",
     "tools past this many are disabled, saying so"},
    {NULL, NULL, NULL, NULL, NULL}};

bool tg__config_key_known(const char *id, const char *name)
{
    for (const tg__config_key *k = tg__config_keys; k->section; k++)
        if (strcmp(k->section, id) == 0 && strcmp(k->name, name) == 0)
            return true;
    return false;
}
