/* paje_out.c - the Paje header, times and names. */
#include <inttypes.h>

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
	"0 CT_Program 0 \"Program\"\n"
	"0 CT_Process CT_Program \"Process\"\n"
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

/* with per-object containers: one container type per kind, with the variables that mean something for it */
static const char *const object_header =
	"0 CT_Mutex CT_Process \"Mutex\"\n"
	"0 CT_RWLock CT_Process \"Read-write lock\"\n"
	"0 CT_Spin CT_Process \"Spinlock\"\n"
	"0 CT_Cond CT_Process \"Condition variable\"\n"
	"0 CT_Barrier CT_Process \"Barrier\"\n"
	"0 CT_Sem CT_Process \"Semaphore\"\n"
	"3 V_MHold CT_Mutex \"Mutex holders\" \"0.1 0.8 0.1\"\n"
	"3 V_MWait CT_Mutex \"Mutex waiters\" \"1.0 0.1 0.1\"\n"
	"3 V_RHold CT_RWLock \"Read-write lock holders\" \"0.4 0.9 0.7\"\n"
	"3 V_RWait CT_RWLock \"Read-write lock waiters\" \"0.8 0.1 0.4\"\n"
	"3 V_PHold CT_Spin \"Spinlock holders\" \"0.5 0.3 0.1\"\n"
	"3 V_CWait CT_Cond \"Condition waiters\" \"1.0 0.6 0.0\"\n"
	"3 V_BWait CT_Barrier \"Barrier waiters\" \"0.6 0.2 0.8\"\n"
	"3 V_SWait CT_Sem \"Semaphore waiters\" \"0.9 0.9 0.1\"\n";

const char *const paje_object_type[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "CT_Mutex", [PTT_CLASS_RWLOCK] = "CT_RWLock", [PTT_CLASS_SPIN] = "CT_Spin",
	[PTT_CLASS_COND] = "CT_Cond", [PTT_CLASS_BARRIER] = "CT_Barrier", [PTT_CLASS_SEM] = "CT_Sem",
};
const char *const paje_object_kind[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "mutex", [PTT_CLASS_RWLOCK] = "rwlock", [PTT_CLASS_SPIN] = "spinlock",
	[PTT_CLASS_COND] = "cond", [PTT_CLASS_BARRIER] = "barrier", [PTT_CLASS_SEM] = "semaphore",
};
const char *const paje_holders_var[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "V_MHold", [PTT_CLASS_RWLOCK] = "V_RHold", [PTT_CLASS_SPIN] = "V_PHold",
};
const char *const paje_waiters_var[PTT_CLASS_COUNT] = {
	[PTT_CLASS_MUTEX] = "V_MWait", [PTT_CLASS_RWLOCK] = "V_RWait", [PTT_CLASS_COND] = "V_CWait",
	[PTT_CLASS_BARRIER] = "V_BWait", [PTT_CLASS_SEM] = "V_SWait",
};

static const char *const colors[MS_COUNT] = {
	"0.3 0.5 1.0", "1.0 0.1 0.1", "0.1 0.8 0.1", "1.0 0.6 0.0", "0.6 0.2 0.8", "0.6 0.6 0.6",
	"0.9 0.9 0.1", "0.9 0.4 0.5", "0.8 0.1 0.4", "0.4 0.9 0.7", "0.0 0.5 0.3", "0.5 0.3 0.1",
	"0.7 0.7 0.2", "0.8 0.8 0.8",
};

void paje_header(FILE *out, int objects)
{
	fputs(header, out);
	if (objects)
		fputs(object_header, out);
	for (unsigned s = 0; s < MS_COUNT; s++)
		fprintf(out, "5 %s ST_Thread \"%s\" \"%s\"\n", mstate_alias[s], mstate_name[s], colors[s]);
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
