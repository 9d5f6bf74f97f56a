/* SPDX-License-Identifier: MIT */
/*
 * checksum.c - the call checksum of checksum.h: SHA-256, or HMAC-SHA-256 when
 * a key is configured, over the JCS bytes of {"args":ARGS,"tool":TOOL}. The
 * canonical bytes are written directly ("args" sorts before "tool"), without
 * building a jansson object for the wrapper.
 *
 * Which kind a received checksum may be follows the configuration: with a
 * key only "hmac-sha256:" verifies (a plain hash would let anyone forge it),
 * without one only "sha256:" does.
 */
#include "checksum.h"

#include <sodium.h>
#include <string.h>

#include "buf.h"
#include "jcs.h"
#include "toolgate.h"

#define PREFIX_SHA "sha256:"
#define PREFIX_HMAC "hmac-sha256:"

/* Computes the raw 32-byte digest of (tool, args). */
static int digest(const char *tool, const json_t *args,
                  const unsigned char *key, size_t key_len,
                  unsigned char out[crypto_hash_sha256_BYTES])
{
    tg_buf b;
    int rc;
    if (tool == NULL || args == NULL)
        return TG_EINVAL;
    /* sodium_init is idempotent and thread-safe; calling it here keeps the
     * core usable without a runtime having initialised libsodium. */
    if (sodium_init() < 0)
        return TG_EINTERNAL;
    tg__buf_init(&b, 0);
    /* One allocation sized for typical arguments avoids regrowth. */
    if ((rc = tg__buf_reserve(&b, 256)) != 0)
        goto fail;
    if ((rc = tg__buf_append(&b, "{\"args\":", 8)) != 0 ||
        (rc = tg__jcs_write(args, &b)) != 0 ||
        (rc = tg__buf_append(&b, ",\"tool\":", 8)) != 0 ||
        (rc = tg__jcs_write_string(tool, strlen(tool), &b)) != 0 ||
        (rc = tg__buf_append(&b, "}", 1)) != 0)
        goto fail;
    if (key != NULL) {
        crypto_auth_hmacsha256_state st;
        /* The init/update/final form takes keys of any length (longer ones
         * are hashed first, as RFC 2104 says). */
        if (crypto_auth_hmacsha256_init(&st, key, key_len) != 0 ||
            crypto_auth_hmacsha256_update(&st, (const unsigned char *)b.data,
                                          b.len) != 0 ||
            crypto_auth_hmacsha256_final(&st, out) != 0) {
            sodium_memzero(&st, sizeof st);
            rc = TG_EINTERNAL;
            goto fail;
        }
        sodium_memzero(&st, sizeof st);
    } else if (crypto_hash_sha256(out, (const unsigned char *)b.data, b.len) !=
               0) {
        rc = TG_EINTERNAL;
        goto fail;
    }
    rc = 0;
fail:
    tg__buf_cleanup(&b);
    return rc;
}

int tg__checksum_compute(const char *tool, const json_t *args,
                         const unsigned char *key, size_t key_len,
                         char out[TG_CHECKSUM_MAX])
{
    unsigned char d[crypto_hash_sha256_BYTES];
    const char *prefix = key ? PREFIX_HMAC : PREFIX_SHA;
    size_t plen = strlen(prefix);
    int rc = digest(tool, args, key, key_len, d);
    if (rc != 0) {
        out[0] = '\0';
        return rc;
    }
    memcpy(out, prefix, plen);
    sodium_bin2hex(out + plen, TG_CHECKSUM_MAX - plen, d, sizeof d);
    return 0;
}

int tg__checksum_verify(const char *expected, const char *tool,
                        const json_t *args, const unsigned char *key,
                        size_t key_len)
{
    unsigned char want[crypto_hash_sha256_BYTES];
    unsigned char got[crypto_hash_sha256_BYTES];
    const char *prefix = key ? PREFIX_HMAC : PREFIX_SHA;
    size_t plen = strlen(prefix);
    size_t bin_len = 0;
    const char *end = NULL;
    if (expected == NULL || strncmp(expected, prefix, plen) != 0)
        return 0;
    const char *hex = expected + plen;
    if (strlen(hex) != 2 * sizeof want)
        return 0;
    if (sodium_hex2bin(want, sizeof want, hex, 2 * sizeof want, NULL, &bin_len,
                       &end) != 0 ||
        bin_len != sizeof want || *end != '\0')
        return 0;
    int rc = digest(tool, args, key, key_len, got);
    if (rc != 0)
        return rc;
    return sodium_memcmp(want, got, sizeof want) == 0 ? 1 : 0;
}
