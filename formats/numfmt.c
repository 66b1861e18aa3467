/*
 * numfmt.c - numbers to text without printf: every tool's output is mostly
 * numbers.  Each writer makes 8 or 16 digits at once in a 64-bit word and
 * stores it whole, leading zeros shifted out: no loop, no division but by
 * constants.  So each may write past the end it returns, within the most
 * its kind can take (ptt_trace.h).
 */
#include <string.h>

#include "ptt_trace.h"

/*
 * The 8 decimal digits of v < 10^8 (leading zeros included) as 8 bytes
 * 0..9 in memory order, the most significant first: v cut in halves of 4
 * digits, those in pairs, those in digits, every lane at once with
 * multiplications that divide exactly in this range (x * 10486 >> 20 is
 * x / 100 below 10^4, x * 103 >> 10 is x / 10 below 100).  No loop, no
 * table, no dependency between the digits.
 */
static uint64_t dec8(uint32_t v)
{
	uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;   /* lanes of 32 bits: 4 digits */
	uint64_t hundreds = (x * 10486 >> 20) & 0x0000007f0000007full;
	x = (x - hundreds * 100) << 16 | hundreds;                          /* lanes of 16 bits: 2 digits */
	uint64_t tens = (x * 103 >> 10) & 0x000f000f000f000full;
	x = (x - tens * 10) << 8 | tens;                                    /* lanes of 8 bits: 1 digit */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

#define ASCII_ZEROS 0x3030303030303030ull

/* v < 10^8 without leading zeros: all 8 bytes written, the n digits first. */
static char *put_dec8(char *p, uint32_t v)
{
	uint64_t d = dec8(v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned zeros = d ? (unsigned)__builtin_ctzll(d) / 8 : 7; /* leading zero digits: the first bytes */
	d = (d + ASCII_ZEROS) >> 8 * zeros;
#else
	unsigned zeros = d ? (unsigned)__builtin_clzll(d) / 8 : 7;
	d = (d + ASCII_ZEROS) << 8 * zeros;
#endif
	memcpy(p, &d, 8);
	return p + 8 - zeros;
}

/* v < 10^8 as exactly 8 digits. */
static char *put_dec8_fixed(char *p, uint32_t v)
{
	uint64_t d = dec8(v) + ASCII_ZEROS;
	memcpy(p, &d, 8);
	return p + 8;
}

char *ptt_fmt_u64(char *p, uint64_t v)
{
	if (v < 100000000u)
		return put_dec8(p, (uint32_t)v);
	if (v < 10000000000000000u) {
		p = put_dec8(p, (uint32_t)(v / 100000000u));
		return put_dec8_fixed(p, (uint32_t)(v % 100000000u));
	}
	p = put_dec8(p, (uint32_t)(v / 10000000000000000u)); /* at most 1844 */
	v %= 10000000000000000u;
	p = put_dec8_fixed(p, (uint32_t)(v / 100000000u));
	return put_dec8_fixed(p, (uint32_t)(v % 100000000u));
}

char *ptt_fmt_i64(char *p, int64_t v)
{
	if (v >= 0)
		return ptt_fmt_u64(p, (uint64_t)v);
	*p++ = '-';
	return ptt_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
}

/* The 8 hex digits of x as 8 characters in memory order, each nibble spread to a byte and
 * made a digit in every byte at once (no loop, no table). */
static uint64_t hex8(uint32_t x)
{
	uint64_t v = x;
	v = (v | v << 16) & 0x0000ffff0000ffffull;
	v = (v | v << 8) & 0x00ff00ff00ff00ffull;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full; /* byte i: nibble i */
	uint64_t letters = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull; /* 1 where >= 10 */
	v += 0x3030303030303030ull + letters * ('a' - '0' - 10);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v); /* the most significant digit first in memory */
#endif
	return v;
}

char *ptt_fmt_hex(char *p, uint64_t v)
{
	unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1; /* digits, leading zeros left out */
	v <<= 4 * (16 - n) & 63; /* the first digit to the top: the n wanted come first */
	uint64_t hi = hex8((uint32_t)(v >> 32)), lo = hex8((uint32_t)v);
	memcpy(p, "0x", 2);
	memcpy(p + 2, &hi, 8); /* all 16: the caller has room for 18 */
	memcpy(p + 10, &lo, 8);
	return p + 2 + n;
}

char *ptt_fmt_time(char *p, uint64_t ns)
{
	p = ptt_fmt_u64(p, ns / 1000000000u);
	uint32_t frac = (uint32_t)(ns % 1000000000u);
	*p++ = '.';
	*p++ = (char)('0' + frac / 100000000u);
	return put_dec8_fixed(p, frac % 100000000u);
}
