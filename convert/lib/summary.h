/* summary.h - counts over a trace for ptt-dump --info and --check. */
#ifndef PTT_SUMMARY_H
#define PTT_SUMMARY_H

#include <stdio.h>

#include "../../formats/ptt_trace.h"
#include "cli.h"
#include "symbols.h"

struct summary;
struct summary *summary_new(void);
void summary_add(struct summary *s, const struct ptt_event *ev);
/* Per-thread monotonic time and order checks found so far. */
unsigned long summary_order_errors(const struct summary *s);
/* The header's facts and the limits the trace met (cli_say_limits), then a row per thread named as in the
 * pictures (symbols.h), then counts per event type. */
/* --info; mid_run: how the trace starts mid-run when what came before is unknown (pass_mid_run), or NULL. */
void summary_print_info(const struct summary *s, struct cli_input *in, struct ptt_syms *syms, const char *mid_run, FILE *out);
/* The check's line, then the limits the trace met. */
/* violations: all; aside: of them, those where events were lost (ptt-dump(1)), which do not fail the check */
void summary_print_check(const struct summary *s, struct cli_input *in, unsigned long violations, unsigned long aside,
			 FILE *out);
void summary_free(struct summary *s);

#endif
