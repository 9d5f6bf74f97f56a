/* SPDX-License-Identifier: MIT */
/*
 * checksum.c - the call checksum of checksum.h: SHA-256, or HMAC-SHA-256 when
 * a key is configured, over the JCS bytes of {"args":ARGS,"tool":TOOL}. The
 * canonical bytes are written directly ("args" sorts before "tool") into a
 * stack buffer, without building a jansson object for the wrapper, from
 * either a jansson value or a JSON tape (the form calls keep their
 * arguments in).
 *
 * Which kind a received checksum may be follows the configuration: with a
 * key only "hmac-sha256:" verifies (a plain hash would let anyone forge it),
 * without one only "sha256:" does.
 *
 * The hashes are OpenSSL's libcrypto. SHA-256 goes through the low-level
 * SHA256_Init/Update/Final, deprecated in OpenSSL 3 in favour of EVP: for a
 * few hundred bytes the EVP path costs about 2.5 times as much per call
 * (each digest context fetches its implementation from the provider), while
 * the low-level functions run the SHA-NI/AVX code directly. HMAC uses the
 * one-shot HMAC(), which OpenSSL 3 keeps undeprecated.
 */
/* For SHA256_Init/Update/Final: see above. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include "checksum.h"

#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <string.h>

#include "buf.h"
#include "jcs.h"
#include "toolgate.h"
#include "hex.h"

#define PREFIX_SHA "sha256:"
#define PREFIX_HMAC "hmac-sha256:"
#define DIGEST_LEN SHA256_DIGEST_LENGTH

/* The canonical bytes of typical arguments fit here: no allocation. */
#define STACK_CANON 1024

/* Writes {"args":ARGS,"tool":TOOL} canonically into b; ARGS from the tape
 * when given, else from the jansson value. */
static int canon(const char *tool, const json_t *args, const tg__jtape *tape,
                 tg__buf *b)
{
    int rc;
    if ((rc = tg__buf_append(b, "{\"args\":", 8)) != 0 ||
        (rc = tape ? tg__jcs_write_tape(tape, b) : tg__jcs_write(args, b)) !=
            0 ||
        (rc = tg__buf_append(b, ",\"tool\":", 8)) != 0 ||
        (rc = tg__jcs_write_string(tool, strlen(tool), b)) != 0 ||
        (rc = tg__buf_append(b, "}", 1)) != 0)
        return rc;
    return 0;
}

/* Computes the raw 32-byte digest of (tool, args). */
static int digest(const char *tool, const json_t *args, const tg__jtape *tape,
                  const unsigned char *key, size_t key_len,
                  unsigned char out[DIGEST_LEN])
{
    char stack[STACK_CANON];
    tg__buf b;
    int rc;
    if (tool == NULL || (args == NULL && tape == NULL))
        return TG_EINVAL;
    tg__buf_init_with(&b, stack, sizeof stack, 0);
    if ((rc = canon(tool, args, tape, &b)) != 0)
        goto fail;
    if (key != NULL) {
        unsigned int n = 0;
        /* HMAC() takes keys of any length (longer ones are hashed first, as
         * RFC 2104 says), up to INT_MAX bytes. */
        if (key_len > INT_MAX ||
            HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)b.data,
                 b.len, out, &n) == NULL ||
            n != DIGEST_LEN) {
            rc = TG_EINTERNAL;
            goto fail;
        }
    } else {
        SHA256_CTX ctx;
        if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, b.data, b.len) != 1 ||
            SHA256_Final(out, &ctx) != 1) {
            rc = TG_EINTERNAL;
            goto fail;
        }
    }
    rc = 0;
fail:
    tg__buf_cleanup(&b);
    return rc;
}

static int compute(const char *tool, const json_t *args, const tg__jtape *tape,
                   const unsigned char *key, size_t key_len,
                   char out[TG_CHECKSUM_MAX])
{
    unsigned char d[DIGEST_LEN];
    const char *prefix = key ? PREFIX_HMAC : PREFIX_SHA;
    size_t plen = strlen(prefix);
    int rc = digest(tool, args, tape, key, key_len, d);
    if (rc != 0) {
        out[0] = '\0';
        return rc;
    }
    memcpy(out, prefix, plen);
    tg__hex_encode(d, sizeof d, out + plen);
    return 0;
}

int tg__checksum_compute(const char *tool, const json_t *args,
                         const unsigned char *key, size_t key_len,
                         char out[TG_CHECKSUM_MAX])
{
    return compute(tool, args, NULL, key, key_len, out);
}

int tg__checksum_compute_tape(const char *tool, const tg__jtape *args,
                              const unsigned char *key, size_t key_len,
                              char out[TG_CHECKSUM_MAX])
{
    return compute(tool, NULL, args, key, key_len, out);
}

/* Decodes 64 hex digits (either case) into 32 bytes; -1 when they are not. */
static int from_hex(const char *hex, unsigned char out[DIGEST_LEN])
{
    for (size_t i = 0; i < 2 * DIGEST_LEN; i++) {
        int c = (unsigned char)hex[i], v;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return -1;
        if (i % 2 == 0)
            out[i / 2] = (unsigned char)(v << 4);
        else
            out[i / 2] |= (unsigned char)v;
    }
    return hex[2 * DIGEST_LEN] == '\0' ? 0 : -1;
}

static int verify(const char *expected, const char *tool, const json_t *args,
                  const tg__jtape *tape, const unsigned char *key,
                  size_t key_len)
{
    unsigned char want[DIGEST_LEN];
    unsigned char got[DIGEST_LEN];
    const char *prefix = key ? PREFIX_HMAC : PREFIX_SHA;
    size_t plen = strlen(prefix);
    if (expected == NULL || strncmp(expected, prefix, plen) != 0)
        return 0;
    if (from_hex(expected + plen, want) != 0)
        return 0;
    int rc = digest(tool, args, tape, key, key_len, got);
    if (rc != 0)
        return rc;
    return CRYPTO_memcmp(want, got, sizeof want) == 0 ? 1 : 0;
}

int tg__checksum_verify(const char *expected, const char *tool,
                        const json_t *args, const unsigned char *key,
                        size_t key_len)
{
    return verify(expected, tool, args, NULL, key, key_len);
}

int tg__checksum_verify_tape(const char *expected, const char *tool,
                             const tg__jtape *args, const unsigned char *key,
                             size_t key_len)
{
    return verify(expected, tool, NULL, args, key, key_len);
}

int tg__sha256_hex(const void *data, size_t len, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char d[DIGEST_LEN];
    /* Init/Update/Final, as above (OpenSSL 3's one-shot SHA256() fetches
     * the algorithm by name on every call: about 1 us) */
    SHA256_CTX ctx;
    if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, data, len) != 1 ||
        SHA256_Final(d, &ctx) != 1)
        return TG_EINTERNAL;
    for (size_t i = 0; i < DIGEST_LEN; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
    return 0;
}
