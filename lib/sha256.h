/*
 * sha256.h - SHA-256 (FIPS 180-4), incremental, for the digests that
 * manifest.json records for every golden file.
 *
 *   struct sha256 s;
 *   sha256_init(&s);
 *   sha256_update(&s, header, header_len);
 *   sha256_update(&s, data, data_len);
 *   sha256_final_hex(&s, hex);      // 64 lowercase hex digits + NUL
 *
 * None of these can fail; the context holds no pointers and needs no free.
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN 65	/* 64 hex digits + NUL */

struct sha256 {
	uint32_t h[8];		/* chaining state */
	uint64_t nbytes;	/* message length so far, in bytes */
	unsigned char buf[64];	/* the block being filled */
	size_t nbuf;		/* bytes in buf, 0..63 between calls */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Pads, writes the digest and leaves s unusable until sha256_init. */
void sha256_final(struct sha256 *s, unsigned char out[SHA256_DIGEST_LEN]);
void sha256_final_hex(struct sha256 *s, char out[SHA256_HEX_LEN]);

/* One-shot: the lowercase hex digest of data[0..len). */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN]);

#endif
