/* paje_out.h - writing Paje that PajeNG and ViTE both accept (see PAJE.md in the project notes). */
#ifndef PTT_PAJE_OUT_H
#define PTT_PAJE_OUT_H

#include <stdint.h>
#include <stdio.h>

/* The header: event definitions and the type hierarchy Program > Process > Thread. */
void paje_header(FILE *out);
/* "SECONDS.NNNNNNNNN" */
void paje_time(FILE *out, uint64_t ns);
/* A display name, always quoted, never empty, with " ' # \ and control characters replaced. */
void paje_name(FILE *out, const char *name);

enum paje_event_id {
	PJ_DEF_CONTAINER_TYPE, PJ_DEF_STATE_TYPE, PJ_DEF_EVENT_TYPE, PJ_DEF_VARIABLE_TYPE, PJ_DEF_LINK_TYPE,
	PJ_DEF_ENTITY_VALUE, PJ_CREATE_CONTAINER, PJ_DESTROY_CONTAINER, PJ_SET_STATE, PJ_NEW_EVENT,
	PJ_SET_VARIABLE, PJ_ADD_VARIABLE, PJ_SUB_VARIABLE, PJ_START_LINK, PJ_END_LINK,
};

#endif
