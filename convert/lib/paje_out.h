/* paje_out.h - writing Paje that PajeNG and ViTE both accept (see PAJE.md in the project notes). */
#ifndef PTT_PAJE_OUT_H
#define PTT_PAJE_OUT_H

#include <stdint.h>
#include <stdio.h>

/* The header: event definitions and the type hierarchy Program > Process > Thread (> objects too);
 * with hosts (a merged trace), Program > Host > Process > Thread. */
void paje_header(FILE *out, int objects, int hosts);
/* Per class of object (PTT_CLASS_MUTEX .. PTT_CLASS_SPIN): container type,
 * and the holders and waiters variables (NULL where the kind has none). */
extern const char *const paje_object_type[];
/* the state type of an object's lifetimes on its row, and its two values (live, destroyed) */
extern const char *const paje_life_type[];
extern const char *const paje_life_live[];
extern const char *const paje_life_gone[];
/* the container type and name grouping the objects of a kind ("mutexes", ...) */
extern const char *const paje_group_type[];
extern const char *const paje_group_name[];
extern const char *const paje_holders_var[];
extern const char *const paje_waiters_var[];
/* "R G B" of a state of the model (enum mstate), the same in every trace */
const char *paje_state_colour(unsigned state);
/* "SECONDS.NNNNNNNNN" */
void paje_time(FILE *out, uint64_t ns);
/*
 * Building a line in a buffer, for the lines written once per event:
 * fprintf took three quarters of the conversion time.  Each returns the
 * end of what it wrote (no NUL).
 */
static inline char *paje_put(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}
/* A display name, always quoted, never empty, escaped by ptt_name_escape(PTT_ESC_PAJE): " ' # \ and control characters and & < > replaced. */
void paje_name(FILE *out, const char *name);

enum paje_event_id {
	PJ_DEF_CONTAINER_TYPE, PJ_DEF_STATE_TYPE, PJ_DEF_EVENT_TYPE, PJ_DEF_VARIABLE_TYPE, PJ_DEF_LINK_TYPE,
	PJ_DEF_ENTITY_VALUE, PJ_CREATE_CONTAINER, PJ_DESTROY_CONTAINER, PJ_SET_STATE, PJ_NEW_EVENT,
	PJ_SET_VARIABLE, PJ_ADD_VARIABLE, PJ_SUB_VARIABLE, PJ_START_LINK, PJ_END_LINK,
	PJ_SET_STATE_SITE, PJ_NEW_EVENT_SITE, /* with a last field, the call site */
};

#endif
