/* numfmt.c - numbers to text without printf: every tool's output is mostly numbers. */
#include <string.h>

#include "ptt_trace.h"

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

char *ptt_fmt_u64(char *p, uint64_t v)
{
	char b[20];
	int i = 20;
	while (v >= 100) { /* two digits per division */
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		b[--i] = digit_pairs[2 * r + 1];
		b[--i] = digit_pairs[2 * r];
	}
	if (v >= 10) {
		b[--i] = digit_pairs[2 * v + 1];
		b[--i] = digit_pairs[2 * v];
	} else {
		b[--i] = (char)('0' + v);
	}
	memcpy(p, b + i, (size_t)(20 - i));
	return p + (20 - i);
}

char *ptt_fmt_i64(char *p, int64_t v)
{
	if (v >= 0)
		return ptt_fmt_u64(p, (uint64_t)v);
	*p++ = '-';
	return ptt_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
}

char *ptt_fmt_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char b[16];
	int i = 16;
	do {
		b[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	*p++ = '0';
	*p++ = 'x';
	memcpy(p, b + i, (size_t)(16 - i));
	return p + (16 - i);
}

char *ptt_fmt_time(char *p, uint64_t ns)
{
	p = ptt_fmt_u64(p, ns / 1000000000u);
	*p++ = '.';
	uint32_t frac = (uint32_t)(ns % 1000000000u);
	for (int i = 8; i >= 0; i--) {
		p[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	return p + 9;
}
