/* SPDX-License-Identifier: MIT */
/*
 * chain.h - the hash chain that makes the journal tamper-evident. Every
 * result row carries chain_seq (1, 2, 3... in the order rows were written)
 * and chain, a 32-byte link:
 *
 *   link(seq) = MAC(prev || seq || result columns || SHA-256(call columns))
 *
 * where prev is the link of seq - 1 (32 zero bytes before the first row) and
 * MAC is HMAC-SHA-256 with the configured HMAC key, or plain SHA-256 without
 * one. Every column of the result row and of its call row is in it (the
 * call row through its digest), each encoded with a type tag and, for text,
 * its length, so no two rows give the same bytes.
 *
 * The writer (sqlite_journal.c) feeds the values it binds, in the order of
 * TG_CHAIN_RESULT_COLUMNS and TG_CHAIN_CALL_COLUMNS, through the tg__chain_*
 * encoders; the verifier (chain_verify.c) and recovery read the same
 * columns back and feed them through tg__chain_row_link. Both must give the
 * same bytes: a row written one way and checked the other is the test.
 */
#ifndef TG_JOURNAL_CHAIN_H
#define TG_JOURNAL_CHAIN_H

/* For SHA256_CTX: the low-level interface is what checksum.c uses too (see
 * there why), about 2.5 times faster than EVP for short inputs. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include <openssl/sha.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define TG_CHAIN_LEN 32
/* The key id: 16 hex digits of HMAC(key, "toolgate journal chain key id"),
 * "" without a key. It tells which key chained a run of rows, never the
 * key. */
#define TG_CHAIN_KEY_ID 17

/* A key prepared once: the SHA-256 states after the HMAC inner and outer
 * pads (RFC 2104), so a link costs no key setup. */
typedef struct tg__chain_key {
    SHA256_CTX inner, outer;
    int keyed;
    char id[TG_CHAIN_KEY_ID];
} tg__chain_key;

/* One hash being fed (a link, or a call row's digest). Columns are
 * gathered in buf and hashed in blocks: a SHA256_Update per column (two
 * dozen a row, most of a few bytes) cost more than the hashing itself. */
typedef struct tg__chain_hash {
    SHA256_CTX ctx;
    const tg__chain_key *key; /* NULL: plain SHA-256 */
    size_t n;                 /* bytes waiting in buf */
    unsigned char buf[1024];
} tg__chain_hash;

/* Prepares k from key[0..len) (key NULL or len 0: unkeyed). Returns 0 or
 * TG_EINTERNAL when the digest fails. */
int tg__chain_key_init(tg__chain_key *k, const unsigned char *key, size_t len);
/* Wipes the key material. */
void tg__chain_key_cleanup(tg__chain_key *k);

/* Starts a link: MAC under k (NULL or unkeyed: SHA-256) of a domain tag,
 * prev and seq; the row's columns follow. */
void tg__chain_link_start(tg__chain_hash *h, const tg__chain_key *k,
                          const unsigned char prev[TG_CHAIN_LEN], int64_t seq);
/* Starts the plain SHA-256 digest of a call row; its columns follow. */
void tg__chain_digest_start(tg__chain_hash *h);

/* The encoders of one column each. text NULL is SQL NULL. */
void tg__chain_null(tg__chain_hash *h);
void tg__chain_int(tg__chain_hash *h, int64_t v);
void tg__chain_real(tg__chain_hash *h, double v);
void tg__chain_text(tg__chain_hash *h, const char *s);
/* A call row that is missing (the link of a result without its call). */
void tg__chain_missing(tg__chain_hash *h);
/* The digest of the result's call row: the last part of a link. */
void tg__chain_call(tg__chain_hash *h,
                    const unsigned char digest[TG_CHAIN_LEN]);
/* Ends h (a link: the MAC's outer step too) into out. */
void tg__chain_end(tg__chain_hash *h, unsigned char out[TG_CHAIN_LEN]);

/* The columns of a link and of a call digest, in hashing order, as a
 * select list over `results r LEFT JOIN call_rows c`. Kinds: 'i' integer,
 * 'r' real, 't' text, one letter per column. */
#define TG_CHAIN_RESULT_COLUMNS                                                \
    "r.call_rowid, r.id, r.tool, r.outcome, r.execution, r.payload,"           \
    " r.content, r.artifact, r.duration_ms, r.exit_status, r.completed_at,"    \
    " r.replayed, r.repaired, r.caller_id, r.decisions"
#define TG_CHAIN_RESULT_KINDS "ittittttriiiitt"
#define TG_CHAIN_CALL_COLUMNS                                                  \
    "c.rowid, c.id, c.tool, c.args, c.args_raw, c.checksum, c.caller_id,"      \
    " c.context, c.skills, c.format, c.idx, c.inline_output,"                  \
    " c.from_artifact_tool, c.created_at, c.started_at, c.args_bytes,"         \
    " c.owner_pid, c.owner_start, c.owner_boot"
#define TG_CHAIN_CALL_KINDS "itttttttttiiiiiiiit"
#define TG_CHAIN_N_RESULT 15
#define TG_CHAIN_N_CALL 19

/* Feeds the call columns at st's columns [col, col + TG_CHAIN_N_CALL)
 * (TG_CHAIN_CALL_COLUMNS; a NULL c.rowid means no call row) into a digest
 * and writes it to out. */
void tg__chain_call_digest_stmt(sqlite3_stmt *st, int col,
                                unsigned char out[TG_CHAIN_LEN]);
/* The link of the row st is on: result columns at [col, col +
 * TG_CHAIN_N_RESULT), the call columns right after them, chained from prev
 * at seq under k. */
void tg__chain_link_stmt(sqlite3_stmt *st, int col, const tg__chain_key *k,
                         const unsigned char prev[TG_CHAIN_LEN], int64_t seq,
                         unsigned char out[TG_CHAIN_LEN]);

#endif
