/* SPDX-License-Identifier: MIT */
/*
 * version.c - tg_version and tg_versions_json: which toolgate a program runs
 * with, and which versions of the libraries under it (jansson, libuv,
 * SQLite, OpenSSL, PCRE2, libcurl, libmicrohttpd for the MCP server's
 * HTTP), each asked of the library itself at run time, so that a report
 * names what is loaded rather than the headers the build saw. Here in the
 * execution layer because it is the one that links all of them.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <string.h>
#include <sqlite3.h>
#include <uv.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "error.h"

const char *tg_version(void)
{
    return TOOLGATE_VERSION_STRING;
}

/* PCRE2's version ("10.42 2022-12-11") without its date, in buf. */
static const char *pcre2_version(char *buf, size_t size)
{
    int n = pcre2_config(PCRE2_CONFIG_VERSION, NULL); /* code units */
    if (n <= 0 || (size_t)n > size ||
        pcre2_config(PCRE2_CONFIG_VERSION, buf) < 0)
        return "unknown";
    buf[strcspn(buf, " ")] = '\0';
    return buf;
}

int tg_versions_json(char **out, tg_error *err)
{
    if (out == NULL)
        return tg__error_set(err, TG_EINVAL, "tg_versions_json needs out");
    *out = NULL;
    char pcre2[64];
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    const char *const names[][2] = {
        {"toolgate", tg_version()},
        {"jansson", jansson_version_str()},
        {"libuv", uv_version_string()},
        {"sqlite", sqlite3_libversion()},
        {"openssl", OpenSSL_version(OPENSSL_VERSION_STRING)},
        {"pcre2", pcre2_version(pcre2, sizeof pcre2)},
        {"libcurl", curl != NULL ? curl->version : "unknown"},
        {"libmicrohttpd", MHD_get_version()},
    };
    json_t *v = json_object(); /* new ref */
    for (size_t i = 0; v != NULL && i < sizeof names / sizeof names[0]; i++)
        if (json_object_set_new(v, names[i][0], json_string(names[i][1])) < 0) {
            json_decref(v);
            v = NULL;
        }
    if (v != NULL)
        *out = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(v);
    if (*out == NULL)
        return tg__error_set(err, TG_ENOMEM, "out of memory");
    return 0;
}
