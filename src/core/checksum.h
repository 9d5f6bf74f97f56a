/* SPDX-License-Identifier: MIT */
/*
 * checksum.h - the integrity checksum of a call: "sha256:<64 hex>" over the
 * JCS form of {"args":ARGS,"tool":TOOL}, or "hmac-sha256:<64 hex>" of the same
 * bytes when a key is configured. Comparison is constant-time.
 */
#ifndef TG_CORE_CHECKSUM_H
#define TG_CORE_CHECKSUM_H

#include <jansson.h>
#include <stddef.h>

#include "jtape.h"

#define TG_CHECKSUM_MAX 80 /* "hmac-sha256:" + 64 hex + NUL fits */

/* Writes the checksum of (tool, args) into out[TG_CHECKSUM_MAX]. args is
 * borrowed; key may be NULL (then sha256). Returns 0 or a TG_E* code. */
int tg__checksum_compute(const char *tool, const json_t *args,
                         const unsigned char *key, size_t key_len,
                         char out[TG_CHECKSUM_MAX]);

/* Verifies a received checksum against (tool, args). Returns 1 when it
 * matches, 0 when it does not (including an unknown prefix or bad hex),
 * negative on internal failure. */
int tg__checksum_verify(const char *expected, const char *tool,
                        const json_t *args, const unsigned char *key,
                        size_t key_len);

/* The same two over arguments held as a JSON tape (jtape.h): the bytes
 * hashed are those of the jansson value of the same text. */
int tg__checksum_compute_tape(const char *tool, const tg__jtape *args,
                              const unsigned char *key, size_t key_len,
                              char out[TG_CHECKSUM_MAX]);
int tg__checksum_verify_tape(const char *expected, const char *tool,
                             const tg__jtape *args, const unsigned char *key,
                             size_t key_len);

/* The SHA-256 of len bytes at data as 64 lowercase hex digits and a NUL in
 * hex[65]. Returns 0, or TG_EINTERNAL when the digest fails. */
int tg__sha256_hex(const void *data, size_t len, char hex[65]);

#endif
