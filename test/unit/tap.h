/* tap.h - a tiny TAP producer for the unit tests. */
#ifndef PTT_TAP_H
#define PTT_TAP_H
#include <stdio.h>

static int tap_n, tap_failed;
#define ok(cond, ...) do { \
		tap_n++; \
		if (cond) { printf("ok %d - ", tap_n); } \
		else { tap_failed++; printf("not ok %d - ", tap_n); } \
		printf(__VA_ARGS__); printf("\n"); \
	} while (0)
#define tap_done() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)
#endif
