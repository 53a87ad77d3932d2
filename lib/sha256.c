/*
 * sha256.c - SHA-256 (FIPS 180-4 section 6.2), incremental.
 *
 * Why here and not a library: the manifest needs one digest per golden
 * file, and a 150-line portable implementation beats a dependency on
 * OpenSSL for a tool whose only other runtime dependency is libyaml.
 *
 * Layout of the padded message (section 5.1.1), in 64-byte blocks:
 *
 *   | message bytes ... | 0x80 | 0x00 ... 0x00 | bit length, u64 BE |
 *                                               '---- last 8 bytes ---'
 *
 * Worked example: "abc" is 3 bytes, so the single block is
 *   61 62 63 80 00 .. 00 | 00 00 00 00 00 00 00 18   (0x18 = 24 bits)
 * and the digest is ba7816bf 8f01cfea ... f20015ad (tests/test_sha256.c).
 *
 * Invariant: between calls, nbuf < 64 (a full buffer is compressed at
 * once), so final() always has room for the 0x80 byte.
 */
#include "sha256.h"

#include <string.h>

/* First 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (section 4.2.2). */
static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the chaining state (section 6.2.2). */
static void compress(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;

	/* Words are big-endian regardless of the host. */
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^
			      (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^
			      (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) +
			      ((e & f) ^ (~e & g)) + k[t] + w[t];
		uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void sha256_init(struct sha256 *s)
{
	/* Fractional parts of the square roots of the first 8 primes. */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, h0, sizeof(h0));
	s->nbytes = 0;
	s->nbuf = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (len == 0)	/* data may be NULL then; memcpy must not see it */
		return;
	s->nbytes += len;
	if (s->nbuf) {
		size_t take = 64 - s->nbuf < len ? 64 - s->nbuf : len;

		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		len -= take;
		if (s->nbuf < 64)
			return;
		compress(s->h, s->buf);
		s->nbuf = 0;
	}
	/* Whole blocks straight from the caller's memory, no copy. */
	for (; len >= 64; p += 64, len -= 64)
		compress(s->h, p);
	if (len)
		memcpy(s->buf, p, len);
	s->nbuf = len;
}

void sha256_final(struct sha256 *s, unsigned char out[SHA256_DIGEST_LEN])
{
	uint64_t bits = s->nbytes * 8;

	s->buf[s->nbuf++] = 0x80;
	/* No room for the 8-byte length: pad this block, length goes next. */
	if (s->nbuf > 56) {
		memset(s->buf + s->nbuf, 0, 64 - s->nbuf);
		compress(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
	for (int i = 0; i < 8; i++)
		s->buf[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	compress(s->h, s->buf);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

void sha256_final_hex(struct sha256 *s, char out[SHA256_HEX_LEN])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char d[SHA256_DIGEST_LEN];

	sha256_final(s, d);
	for (int i = 0; i < SHA256_DIGEST_LEN; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[64] = '\0';
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN])
{
	struct sha256 s;

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final_hex(&s, out);
}
