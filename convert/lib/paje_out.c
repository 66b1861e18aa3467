/* paje_out.c - the Paje header, times and names. */
#include <inttypes.h>
#include <string.h>

#include "model.h"
#include "paje_out.h"
#include "symbols.h"

static const char *const header =
	"%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeDefineEventType 2\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeDefineVariableType 3\n% Alias string\n% Type string\n% Name string\n% Color color\n%EndEventDef\n"
	"%EventDef PajeDefineLinkType 4\n% Alias string\n% Type string\n% StartContainerType string\n"
	"% EndContainerType string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeDefineEntityValue 5\n% Alias string\n% Type string\n% Name string\n% Color color\n%EndEventDef\n"
	"%EventDef PajeCreateContainer 6\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeDestroyContainer 7\n% Time date\n% Type string\n% Name string\n%EndEventDef\n"
	"%EventDef PajeSetState 8\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n"
	"%EventDef PajeNewEvent 9\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n"
	"%EventDef PajeSetVariable 10\n% Time date\n% Type string\n% Container string\n% Value double\n%EndEventDef\n"
	"%EventDef PajeAddVariable 11\n% Time date\n% Type string\n% Container string\n% Value double\n%EndEventDef\n"
	"%EventDef PajeSubVariable 12\n% Time date\n% Type string\n% Container string\n% Value double\n%EndEventDef\n"
	"%EventDef PajeStartLink 13\n% Time date\n% Type string\n% Container string\n% StartContainer string\n"
	"% Value string\n% Key string\n%EndEventDef\n"
	"%EventDef PajeEndLink 14\n% Time date\n% Type string\n% Container string\n% EndContainer string\n"
	"% Value string\n% Key string\n%EndEventDef\n"
	/* the same with the call site, a field ViTE shows on click (a line with a site, the other without) */
	"%EventDef PajeSetState 15\n% Time date\n% Type string\n% Container string\n% Value string\n% Site string\n"
	"%EndEventDef\n"
	"%EventDef PajeNewEvent 16\n% Time date\n% Type string\n% Container string\n% Value string\n% Site string\n"
	"%EndEventDef\n"
	"0 CT_Program 0 \"Program\"\n";
/* then the process's type: under the program, or under the host in a merged trace (host.h) */
static const char *const header_threads =
	"0 CT_Thread CT_Process \"Thread\"\n"
	"1 ST_Thread CT_Thread \"Thread state\"\n"
	"2 E_Thread CT_Thread \"Thread event\"\n"
	"3 V_Threads CT_Process \"Live threads\" \"0.0 0.0 0.0\"\n"
	"4 L_create CT_Process CT_Thread CT_Thread \"Thread creation\"\n"
	"4 L_handoff CT_Process CT_Thread CT_Thread \"Mutex hand-off\"\n"
	"4 L_wake CT_Process CT_Thread CT_Thread \"Condition wake-up\"\n"
	"4 L_barrier CT_Process CT_Thread CT_Thread \"Barrier release\"\n"
	"4 L_post CT_Process CT_Thread CT_Thread \"Semaphore post\"\n"
	"4 L_join CT_Process CT_Thread CT_Thread \"Thread join\"\n";

/*
 * With per-object containers: under each process, after its threads, one
 * container "objects" holding one container per kind ("mutexes", ...)
 * holding a container per object, with the variables that mean something
 * for its kind.  ViTE draws containers in the order they are created:
 * ptt-paje creates them in that order.
 */
static const char *const object_header =
	"0 CT_Objects CT_Process \"Objects\"\n"
	"0 CT_Mutexes CT_Objects \"Mutexes\"\n"
	"0 CT_RWLocks CT_Objects \"Read-write locks\"\n"
	"0 CT_Spins CT_Objects \"Spinlocks\"\n"
	"0 CT_Conds CT_Objects \"Condition variables\"\n"
	"0 CT_Barriers CT_Objects \"Barriers\"\n"
	"0 CT_Sems CT_Objects \"Semaphores\"\n"
	"0 CT_Mutex CT_Mutexes \"Mutex\"\n"
	"0 CT_RWLock CT_RWLocks \"Read-write lock\"\n"
	"0 CT_Spin CT_Spins \"Spinlock\"\n"
	"0 CT_Cond CT_Conds \"Condition variable\"\n"
	"0 CT_Barrier CT_Barriers \"Barrier\"\n"
	"0 CT_Sem CT_Sems \"Semaphore\"\n"
	"3 V_MHold CT_Mutex \"Mutex holders\" \"0.17 0.63 0.17\"\n"
	"3 V_MWait CT_Mutex \"Mutex waiters\" \"0.84 0.15 0.16\"\n"
	"3 V_RHold CT_RWLock \"Read-write lock holders\" \"0.60 0.87 0.54\"\n"
	"3 V_RWait CT_RWLock \"Read-write lock waiters\" \"0.89 0.47 0.76\"\n"
	"3 V_PHold CT_Spin \"Spinlock holders\" \"0.55 0.34 0.29\"\n"
	"3 V_CWait CT_Cond \"Condition waiters\" \"1.00 0.50 0.05\"\n"
	"3 V_BWait CT_Barrier \"Barrier waiters\" \"0.58 0.40 0.74\"\n"
	"3 V_SWait CT_Sem \"Semaphore waiters\" \"0.74 0.74 0.13\"\n"
	/* an object's lifetimes (init .. destroy) on its one row: light grey while it lives, white after */
	"1 ST_MLife CT_Mutex \"Mutex lifetime\"\n"
	"1 ST_RLife CT_RWLock \"Read-write lock lifetime\"\n"
	"1 ST_PLife CT_Spin \"Spinlock lifetime\"\n"
	"1 ST_CLife CT_Cond \"Condition variable lifetime\"\n"
	"1 ST_BLife CT_Barrier \"Barrier lifetime\"\n"
	"1 ST_SLife CT_Sem \"Semaphore lifetime\"\n"
	"5 ML ST_MLife \"live\" \"0.85 0.85 0.85\"\n5 MD ST_MLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	"5 RL ST_RLife \"live\" \"0.85 0.85 0.85\"\n5 RD ST_RLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	"5 PL ST_PLife \"live\" \"0.85 0.85 0.85\"\n5 PD ST_PLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	"5 CL ST_CLife \"live\" \"0.85 0.85 0.85\"\n5 CD ST_CLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	"5 BL ST_BLife \"live\" \"0.85 0.85 0.85\"\n5 BD ST_BLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	"5 SL ST_SLife \"live\" \"0.85 0.85 0.85\"\n5 SD ST_SLife \"destroyed\" \"1.0 1.0 1.0\"\n"
	/* futexes (syscall(SYS_futex)): waited on, never known to be held */
	"0 CT_Futexes CT_Objects \"Futexes\"\n"
	"0 CT_Futex CT_Futexes \"Futex\"\n"
	"3 V_FWait CT_Futex \"Futex waiters\" \"0.55 0.14 0.14\"\n"
	"1 ST_FLife CT_Futex \"Futex lifetime\"\n"
	"5 FL ST_FLife \"live\" \"0.85 0.85 0.85\"\n5 FD ST_FLife \"destroyed\" \"1.0 1.0 1.0\"\n";

const char *const paje_object_type[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "CT_Mutex", [PTT_CLASS_RWLOCK] = "CT_RWLock", [PTT_CLASS_SPIN] = "CT_Spin",
	[PTT_CLASS_COND] = "CT_Cond", [PTT_CLASS_BARRIER] = "CT_Barrier", [PTT_CLASS_SEM] = "CT_Sem",
	[PTT_CLASS_FUTEX] = "CT_Futex",
};
const char *const paje_life_type[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "ST_MLife", [PTT_CLASS_RWLOCK] = "ST_RLife", [PTT_CLASS_SPIN] = "ST_PLife",
	[PTT_CLASS_COND] = "ST_CLife", [PTT_CLASS_BARRIER] = "ST_BLife", [PTT_CLASS_SEM] = "ST_SLife",
	[PTT_CLASS_FUTEX] = "ST_FLife",
};
const char *const paje_life_live[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "ML", [PTT_CLASS_RWLOCK] = "RL", [PTT_CLASS_SPIN] = "PL",
	[PTT_CLASS_COND] = "CL", [PTT_CLASS_BARRIER] = "BL", [PTT_CLASS_SEM] = "SL",
	[PTT_CLASS_FUTEX] = "FL",
};
const char *const paje_life_gone[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "MD", [PTT_CLASS_RWLOCK] = "RD", [PTT_CLASS_SPIN] = "PD",
	[PTT_CLASS_COND] = "CD", [PTT_CLASS_BARRIER] = "BD", [PTT_CLASS_SEM] = "SD",
	[PTT_CLASS_FUTEX] = "FD",
};
const char *const paje_group_type[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "CT_Mutexes", [PTT_CLASS_RWLOCK] = "CT_RWLocks", [PTT_CLASS_SPIN] = "CT_Spins",
	[PTT_CLASS_COND] = "CT_Conds", [PTT_CLASS_BARRIER] = "CT_Barriers", [PTT_CLASS_SEM] = "CT_Sems",
	[PTT_CLASS_FUTEX] = "CT_Futexes",
};
const char *const paje_group_name[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "mutexes", [PTT_CLASS_RWLOCK] = "rwlocks", [PTT_CLASS_SPIN] = "spinlocks",
	[PTT_CLASS_COND] = "condition variables", [PTT_CLASS_BARRIER] = "barriers", [PTT_CLASS_SEM] = "semaphores",
	[PTT_CLASS_FUTEX] = "futexes",
};
const char *const paje_holders_var[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "V_MHold", [PTT_CLASS_RWLOCK] = "V_RHold", [PTT_CLASS_SPIN] = "V_PHold",
};
const char *const paje_waiters_var[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "V_MWait", [PTT_CLASS_RWLOCK] = "V_RWait", [PTT_CLASS_COND] = "V_CWait",
	[PTT_CLASS_BARRIER] = "V_BWait", [PTT_CLASS_SEM] = "V_SWait", [PTT_CLASS_FUTEX] = "V_FWait",
};

/*
 * The colour of each state, by the state model's key, so that a state keeps
 * its colour whatever the order or number of states: blue running, warm
 * colours for waits (red: mutex, orange: condition, purple: barrier, pinks:
 * read-write locks, olive: semaphore, dark red: futex), greens for holding, grey for joins
 * and waits on something else.  From the Tableau 10 and 20 palettes, which
 * stay apart on screen and in print.
 */
static const struct { const char *key, *rgb; } state_colours[] = {
	{ "running", "0.12 0.47 0.71" },
	{ "blocked_mutex", "0.84 0.15 0.16" },
	{ "holding_mutex", "0.17 0.63 0.17" },
	{ "cond_wait", "1.00 0.50 0.05" },
	{ "barrier_wait", "0.58 0.40 0.74" },
	{ "join", "0.50 0.50 0.50" },
	{ "sem_wait", "0.74 0.74 0.13" },
	{ "rwlock_read_wait", "0.97 0.71 0.82" },
	{ "rwlock_write_wait", "0.89 0.47 0.76" },
	{ "rwlock_read_hold", "0.60 0.87 0.54" },
	{ "rwlock_write_hold", "0.09 0.75 0.81" },
	{ "spin_hold", "0.55 0.34 0.29" },
	{ "sem_hold", "0.30 0.50 0.30" },
	{ "other_wait", "0.78 0.78 0.78" },
	{ "tracer_stall", "0.90 0.10 0.90" },
	{ "futex_wait", "0.55 0.14 0.14" },
};

const char *paje_state_colour(unsigned state)
{
	for (size_t i = 0; i < sizeof state_colours / sizeof state_colours[0]; i++)
		if (strcmp(state_colours[i].key, mstate_key[state]) == 0)
			return state_colours[i].rgb;
	return "0.78 0.78 0.78"; /* a state this table does not know yet: neutral, never mistaken for running */
}

void paje_header(FILE *out, int objects, int hosts)
{
	fputs(header, out);
	fputs(hosts ? "0 CT_Host CT_Program \"Host\"\n0 CT_Process CT_Host \"Process\"\n" :
		      "0 CT_Process CT_Program \"Process\"\n", out);
	fputs(header_threads, out);
	if (objects)
		fputs(object_header, out);
	for (unsigned s = 0; s < MS_COUNT; s++) {
		fprintf(out, "5 %s ST_Thread ", mstate_alias[s]);
		paje_name(out, mstate_name[s]);
		fprintf(out, " \"%s\"\n", paje_state_colour(s));
	}
}


void paje_time(FILE *out, uint64_t ns)
{
	char buf[32];
	fwrite_unlocked(buf, 1, (size_t)(ptt_fmt_time(buf, ns) - buf), out);
}

void paje_name(FILE *out, const char *name)
{
	char buf[PTT_MAX_STR * 2];
	putc('"', out);
	if (!name || !*name)
		name = "?";
	fputs(ptt_name_escape(name, PTT_ESC_PAJE, buf, sizeof buf), out);
	putc('"', out);
}
