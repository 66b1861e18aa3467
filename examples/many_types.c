/*
 * many_types - registers N user event types and traces one event of each;
 * then one type with the longest argument list ptt.h allows and one event
 * of it whose string argument is LEN bytes; names an object and the main
 * thread with LEN-byte names.  Prints its ground truth.
 *
 *   many_types [N [LEN]]   (default 1000 types, 2000-byte strings)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptt.h"

static pthread_mutex_t named = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, len = argc > 2 ? atol(argv[2]) : 2000, ok = 0, refused = 0;
	if (n < 0 || len < 1) {
		fprintf(stderr, "usage: many_types [N [LEN]]\n");
		return 2;
	}
	/* eight arguments with 23-character names: 223 bytes of argument list */
	static const char longest[] =
		"argument_number_one_abc:u64,argument_number_two_abc:u64,argument_number_thr_abc:u64,"
		"argument_number_fou_abc:u64,argument_number_fiv_abc:u64,argument_number_six_abc:u64,"
		"argument_number_sev_abc:u32,argument_number_eig_abc:str";
	int wide = ptt_register_event("longest_argument_list", 1, longest);
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "type_%05ld", i);
		int id = ptt_register_event(name, 1, "i:u64");
		if (id < 0) {
			refused++;
			continue;
		}
		uint64_t a[1] = { (uint64_t)i };
		ptt_trace(id, a, 1);
		ok++;
	}
	char *s = malloc((size_t)len + 1);
	if (!s)
		return 1;
	for (long i = 0; i < len; i++)
		s[i] = (char)('a' + i % 26);
	s[len] = 0;
	if (wide >= 0) {
		uint64_t a[8] = { 1, 2, 3, 4, 5, 6, 7, (uint64_t)(uintptr_t)s };
		ptt_trace(wide, a, 8);
	}
	ptt_name_object(&named, s);
	ptt_name_thread(s);
	pthread_mutex_lock(&named);
	pthread_mutex_unlock(&named);
	printf("types %ld registered, %ld refused, longest argument list %s, strings of %ld bytes\n", ok, refused,
	       wide >= 0 ? "registered" : "refused", len);
	free(s);
	return 0;
}
