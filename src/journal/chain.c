/* SPDX-License-Identifier: MIT */
/*
 * chain.c - the links of the journal's hash chain (chain.h): HMAC-SHA-256
 * from precomputed pad states (a link costs two SHA-256 finals and no key
 * setup), the tagged encoding of each column, and the same links computed
 * from columns read back (verification, recovered rows).
 *
 * Encoding, one column after another: NULL is 0x00; an integer 0x01 and 8
 * bytes big-endian; a real 0x02 and its IEEE 754 bits big-endian (-0 as 0);
 * text 0x03, its length as 8 bytes big-endian, its bytes; a value read back
 * with a storage class its column never holds 0xff, its length and its
 * text (it can only come from an edit outside toolgate, so it must never
 * equal what the writer fed).
 */
#include "chain.h"

#include <openssl/crypto.h>
#include <string.h>

#include "hex.h"
#include "toolgate.h"

#define BLOCK 64 /* SHA-256 block size */

static const char link_tag[] = "toolgate journal chain v1";
static const char id_text[] = "toolgate journal chain key id";

/* HMAC(key, data) with the prepared pads. */
static void mac_final(const tg__chain_key *k, SHA256_CTX *inner,
                      unsigned char out[TG_CHAIN_LEN])
{
    unsigned char mid[TG_CHAIN_LEN];
    SHA256_CTX outer = k->outer;
    SHA256_Final(mid, inner);
    SHA256_Update(&outer, mid, sizeof mid);
    SHA256_Final(out, &outer);
    OPENSSL_cleanse(mid, sizeof mid);
}

int tg__chain_key_init(tg__chain_key *k, const unsigned char *key, size_t len)
{
    unsigned char block[BLOCK], pad[BLOCK], id[TG_CHAIN_LEN];
    memset(k, 0, sizeof *k);
    if (key == NULL || len == 0)
        return 0;
    memset(block, 0, sizeof block);
    /* RFC 2104: a key longer than a block is hashed first. */
    if (len > BLOCK) {
        if (SHA256(key, len, block) == NULL)
            return TG_EINTERNAL;
    } else {
        memcpy(block, key, len);
    }
    for (int i = 0; i < BLOCK; i++)
        pad[i] = block[i] ^ 0x36;
    SHA256_Init(&k->inner);
    SHA256_Update(&k->inner, pad, sizeof pad);
    for (int i = 0; i < BLOCK; i++)
        pad[i] = block[i] ^ 0x5c;
    SHA256_Init(&k->outer);
    SHA256_Update(&k->outer, pad, sizeof pad);
    k->keyed = 1;
    SHA256_CTX c = k->inner;
    SHA256_Update(&c, id_text, sizeof id_text - 1);
    mac_final(k, &c, id);
    tg__hex_encode(id, (TG_CHAIN_KEY_ID - 1) / 2, k->id);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(&c, sizeof c);
    return 0;
}

void tg__chain_key_cleanup(tg__chain_key *k)
{
    OPENSSL_cleanse(k, sizeof *k);
}

static void flush(tg__chain_hash *h)
{
    if (h->n > 0)
        SHA256_Update(&h->ctx, h->buf, h->n);
    h->n = 0;
}

static void put(tg__chain_hash *h, const void *p, size_t n)
{
    if (n > sizeof h->buf - h->n) {
        flush(h);
        if (n > sizeof h->buf) {
            SHA256_Update(&h->ctx, p, n);
            return;
        }
    }
    memcpy(h->buf + h->n, p, n);
    h->n += n;
}

static void put_u64(tg__chain_hash *h, unsigned char tag, uint64_t v)
{
    unsigned char b[9];
    b[0] = tag;
    for (int i = 8; i >= 1; i--) {
        b[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
    put(h, b, sizeof b);
}

void tg__chain_link_start(tg__chain_hash *h, const tg__chain_key *k,
                          const unsigned char prev[TG_CHAIN_LEN], int64_t seq)
{
    h->key = k != NULL && k->keyed ? k : NULL;
    h->n = 0;
    if (h->key != NULL)
        h->ctx = h->key->inner;
    else
        SHA256_Init(&h->ctx);
    put(h, link_tag, sizeof link_tag);
    put(h, prev, TG_CHAIN_LEN);
    put_u64(h, 0x01, (uint64_t)seq);
}

void tg__chain_digest_start(tg__chain_hash *h)
{
    h->key = NULL;
    h->n = 0;
    SHA256_Init(&h->ctx);
}

void tg__chain_null(tg__chain_hash *h)
{
    unsigned char z = 0x00;
    put(h, &z, 1);
}

void tg__chain_int(tg__chain_hash *h, int64_t v)
{
    put_u64(h, 0x01, (uint64_t)v);
}

void tg__chain_real(tg__chain_hash *h, double v)
{
    uint64_t bits;
    if (v == 0)
        v = 0; /* -0 reads back from SQLite as 0 */
    memcpy(&bits, &v, sizeof bits);
    put_u64(h, 0x02, bits);
}

static void put_bytes(tg__chain_hash *h, unsigned char tag, const void *p,
                      size_t n)
{
    put_u64(h, tag, (uint64_t)n);
    if (n > 0)
        put(h, p, n);
}

void tg__chain_text(tg__chain_hash *h, const char *s)
{
    if (s == NULL)
        tg__chain_null(h);
    else
        put_bytes(h, 0x03, s, strlen(s));
}

void tg__chain_missing(tg__chain_hash *h)
{
    unsigned char m = 0xfe;
    put(h, &m, 1);
}

void tg__chain_call(tg__chain_hash *h, const unsigned char digest[TG_CHAIN_LEN])
{
    put(h, digest, TG_CHAIN_LEN);
}

void tg__chain_end(tg__chain_hash *h, unsigned char out[TG_CHAIN_LEN])
{
    flush(h);
    if (h->key != NULL)
        mac_final(h->key, &h->ctx, out);
    else
        SHA256_Final(out, &h->ctx);
}

/* Feeds column col of st as a column of kind `kind` ('i', 'r', 't'). */
static void put_column(tg__chain_hash *h, sqlite3_stmt *st, int col, char kind)
{
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL) {
        tg__chain_null(h);
    } else if (kind == 'i' && type == SQLITE_INTEGER) {
        tg__chain_int(h, sqlite3_column_int64(st, col));
    } else if (kind == 'r' &&
               (type == SQLITE_FLOAT || type == SQLITE_INTEGER)) {
        tg__chain_real(h, sqlite3_column_double(st, col));
    } else if (kind == 't' && type == SQLITE_TEXT) {
        /* Text the writer bound stops at its first NUL (bound with length
         * -1); text with a NUL in it can only come from outside and must
         * not hash like its prefix, so its whole length counts. */
        const unsigned char *s = sqlite3_column_text(st, col);
        put_bytes(h, 0x03, s, (size_t)sqlite3_column_bytes(st, col));
    } else {
        const void *p = type == SQLITE_BLOB ? sqlite3_column_blob(st, col)
                                            : sqlite3_column_text(st, col);
        put_bytes(h, 0xff, p, (size_t)sqlite3_column_bytes(st, col));
    }
}

void tg__chain_call_digest_stmt(sqlite3_stmt *st, int col,
                                unsigned char out[TG_CHAIN_LEN])
{
    static const char kinds[] = TG_CHAIN_CALL_KINDS;
    tg__chain_hash h;
    tg__chain_digest_start(&h);
    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        tg__chain_missing(&h);
    } else {
        for (int i = 0; i < TG_CHAIN_N_CALL; i++)
            put_column(&h, st, col + i, kinds[i]);
    }
    tg__chain_end(&h, out);
}

void tg__chain_link_stmt(sqlite3_stmt *st, int col, const tg__chain_key *k,
                         const unsigned char prev[TG_CHAIN_LEN], int64_t seq,
                         unsigned char out[TG_CHAIN_LEN])
{
    static const char kinds[] = TG_CHAIN_RESULT_KINDS;
    unsigned char call[TG_CHAIN_LEN];
    tg__chain_hash h;
    tg__chain_call_digest_stmt(st, col + TG_CHAIN_N_RESULT, call);
    tg__chain_link_start(&h, k, prev, seq);
    for (int i = 0; i < TG_CHAIN_N_RESULT; i++)
        put_column(&h, st, col + i, kinds[i]);
    tg__chain_call(&h, call);
    tg__chain_end(&h, out);
}
