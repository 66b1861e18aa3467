/*
 * numfmt.c - numbers to text without printf: every tool's output is mostly
 * numbers.  Each writer counts the digits first and fills them in from the
 * end, two at a time from a table (half the divisions, no copy afterwards).
 */
#include <string.h>

#include "ptt_trace.h"

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static unsigned dec_digits(uint32_t v)
{
	unsigned n = 1;
	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* The last n digits of v into p[0..n): 32-bit divisions, the cheap ones, as pids, tids and the
 * nanoseconds of a time all fit. */
static void put_digits(char *p, uint32_t v, unsigned n)
{
	while (n >= 2) {
		unsigned r = v % 100;
		v /= 100;
		n -= 2;
		memcpy(p + n, digit_pairs + 2 * r, 2);
	}
	if (n)
		p[0] = (char)('0' + v % 10);
}

char *ptt_fmt_u64(char *p, uint64_t v)
{
	if (v > UINT32_MAX) { /* the digits past the last 9 first */
		p = ptt_fmt_u64(p, v / 1000000000u);
		put_digits(p, (uint32_t)(v % 1000000000u), 9);
		return p + 9;
	}
	unsigned n = dec_digits((uint32_t)v);
	put_digits(p, (uint32_t)v, n);
	return p + n;
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
	*p++ = '.';
	put_digits(p, (uint32_t)(ns % 1000000000u), 9);
	return p + 9;
}
