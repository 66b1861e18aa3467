/* test_argnames.c - argument names as numbers: the list against events.def, positions per type. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../formats/ptt_trace.h"
#include "tap.h"

/* PTT_ARGNAME_LIST is events.def's argument names: each one there is listed, each listed one is there */
static void test_list_is_events_def(void)
{
	int used[PTT_ARGNAMES] = { 0 }, unlisted = 0;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *t = ptt_builtin_type(id);
		for (unsigned a = 0; a < t->nargs; a++) {
			enum ptt_argname n = ptt_argname_from_string(t->argname[a]);
			if (n == PTT_ARGNAME_NONE) {
				unlisted++;
				printf("# %s's argument %s: add it to PTT_ARGNAME_LIST (ptt_trace.h)\n", t->name, t->argname[a]);
			}
			used[n] = 1;
		}
	}
	ok(unlisted == 0, "every argument name of events.def is in PTT_ARGNAME_LIST");
	int unused = 0;
	for (unsigned n = 1; n < PTT_ARGNAMES; n++)
		if (!used[n]) {
			unused++;
			printf("# %s is no argument of events.def\n", ptt_argname_string(n));
		}
	ok(unused == 0, "every name of PTT_ARGNAME_LIST is an argument of events.def");
	int back = 1;
	for (unsigned n = 1; n < PTT_ARGNAMES; n++)
		back &= ptt_argname_from_string(ptt_argname_string(n)) == (enum ptt_argname)n;
	ok(back && ptt_argname_from_string("") == PTT_ARGNAME_NONE && ptt_argname_from_string("rett") == PTT_ARGNAME_NONE &&
		   !strcmp(ptt_argname_string(PTT_ARGNAME_RET), "ret") && !strcmp(ptt_argname_string(PTT_ARGNAMES), ""),
	   "names and numbers go both ways; an unknown name is NONE");
}

/* each built-in type knows the position of each of its arguments' names, and of no other */
static void test_builtin_positions(void)
{
	int bad = 0;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *t = ptt_builtin_type(id);
		struct ptt_event ev;
		memset(&ev, 0, sizeof ev);
		ev.type = t;
		ev.id = (uint16_t)id;
		ev.nargs = t->nargs;
		for (unsigned a = 0; a < t->nargs; a++)
			ev.arg[a] = 1000 + a;
		for (unsigned n = 1; n < PTT_ARGNAMES; n++) {
			int want = ptt_event_argindex(&ev, ptt_argname_string(n));
			uint64_t v = ptt_event_arg(&ev, ptt_argname_string(n), 77);
			if (ptt_type_arg_index(t, (enum ptt_argname)n) != want || ptt_event_argn(&ev, (enum ptt_argname)n, 77) != v) {
				bad++;
				printf("# %s: %s at %d, by name %d\n", t->name, ptt_argname_string(n),
				       ptt_type_arg_index(t, (enum ptt_argname)n), want);
			}
		}
		for (unsigned a = 0; a < t->nargs; a++)
			bad += strcmp(ptt_argname_string(t->argid[a]), t->argname[a]) != 0;
	}
	ok(bad == 0, "every built-in type: ptt_event_argn finds what ptt_event_arg finds by name");
	const struct ptt_type *lock = ptt_builtin_type(PTT_EV_MUTEX_LOCK);
	ok(ptt_type_arg_index(lock, PTT_ARGNAME_MUTEX) == 0 && ptt_type_arg_index(lock, PTT_ARGNAME_RET) == 1 &&
		   ptt_type_arg_index(lock, PTT_ARGNAME_COUNT) == -1 && ptt_type_arg_index(lock, PTT_ARGNAME_NONE) == -1,
	   "mutex_lock: mutex at 0, ret at 1, no count, nothing for NONE");
	struct ptt_event none;
	memset(&none, 0, sizeof none);
	ok(ptt_event_argn(&none, PTT_ARGNAME_RET, 5) == 5, "an event without a type: the default");
}

/* a trace's header may lay a type out otherwise: its positions are the header's */
static void test_header_layout(void)
{
	struct ptt_types ts;
	struct ptt_type t;
	char defn[128];
	ptt_types_init_builtin(&ts);
	snprintf(defn, sizeof defn, "%u mutex_lock mutex 1 pthread site:ptr,mine:u32,ret:i32,mutex:ptr", PTT_EV_MUTEX_LOCK);
	ok(ptt_text_parse_type(defn, &t) == 0 && ptt_types_define(&ts, &t) == 0, "a header redefines mutex_lock");
	struct ptt_event ev;
	memset(&ev, 0, sizeof ev);
	int rc = ptt_text_parse_event(&ts, "0.000000100 1 2 pthread mutex_lock site=0x10 mine=3 ret=16 mutex=0x20", &ev);
	ok(rc == 0 && ptt_event_argn(&ev, PTT_ARGNAME_RET, 0) == 16 && ptt_event_argn(&ev, PTT_ARGNAME_MUTEX, 0) == 0x20 &&
		   ptt_event_argn(&ev, PTT_ARGNAME_SITE, 0) == 0x10 && ptt_event_argn(&ev, PTT_ARGNAME_TARGET, 9) == 9,
	   "its event's arguments are read where the header puts them; a missing one is the default");
	ok(ev.type->argid[1] == PTT_ARGNAME_NONE && ptt_event_arg(&ev, "mine", 0) == 3,
	   "a name of the header's own is NONE, and still found by its text");

	/* two arguments of one name: the first, as a look-up by name finds it */
	ok(ptt_text_parse_type("1024 twice user 1 program count:u32,count:u64", &t) == 0 &&
		   ptt_type_arg_index(&t, PTT_ARGNAME_COUNT) == 0 && t.argid[1] == PTT_ARGNAME_COUNT,
	   "two arguments of one name: the first is the one read");
	/* a type parsed again with fewer arguments forgets the others */
	ok(ptt_type_parse_args(&t, "ret:i32") == 0 && ptt_type_arg_index(&t, PTT_ARGNAME_COUNT) == -1 &&
		   ptt_type_arg_index(&t, PTT_ARGNAME_RET) == 0 && ptt_type_parse_args(&t, "") == 0 &&
		   ptt_type_arg_index(&t, PTT_ARGNAME_RET) == -1,
	   "parsing a type again replaces its positions");

	/* the formats/ readers of named arguments follow the header too */
	snprintf(defn, sizeof defn, "%u thread_name thread 1 pthread mine:u32,target:tid,name:str", PTT_EV_THREAD_NAME);
	ok(ptt_text_parse_type(defn, &t) == 0 && ptt_types_define(&ts, &t) == 0, "a header redefines thread_name");
	struct ptt_names *names = ptt_names_new();
	memset(&ev, 0, sizeof ev);
	rc = ptt_text_parse_event(&ts, "0.000000200 1 2 pthread thread_name mine=5 target=42 name=\"worker\"", &ev);
	const char *named = rc == 0 && ptt_names_update(names, &ev) == 0 ? ptt_names_thread(names, 42) : NULL;
	ok(named && strcmp(named, "worker") == 0, "ptt_names_update names thread 42, the header's target");
	ptt_names_free(names);

	snprintf(defn, sizeof defn, "%u limit recorder 1 recorder need:u64,table:u32,limit:u64,count:u64", PTT_EV_LIMIT);
	ok(ptt_text_parse_type(defn, &t) == 0 && ptt_types_define(&ts, &t) == 0, "a header redefines limit");
	struct ptt_limits lim;
	memset(&lim, 0, sizeof lim);
	memset(&ev, 0, sizeof ev);
	rc = ptt_text_parse_event(&ts, "0.000000300 1 2 recorder limit need=600 table=4 limit=512 count=3", &ev);
	ok(rc == 0 && ptt_limits_add(&lim, &ev) == 1 && lim.count[PTT_LIMIT_STRING] == 3 &&
		   lim.limit[PTT_LIMIT_STRING] == 512 && lim.need[PTT_LIMIT_STRING] == 600,
	   "ptt_limits_add reads table, count, limit and need where the header puts them");
	ptt_types_free(&ts);
}

int main(void)
{
	test_list_is_events_def();
	test_builtin_positions();
	test_header_layout();
	return tap_done();
}
