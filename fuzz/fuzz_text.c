/*
 * fuzz_text.c - libFuzzer harness for the text parser: each line of the
 * input is parsed as a ptt-dump event line (against the built-in types and
 * the types defined by earlier "# type" lines of the same input) and as a
 * type definition; what parses is formatted again and must parse again.
 */
#include <stdlib.h>
#include <string.h>

#include "../formats/ptt_trace.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct ptt_types ts;
	ptt_types_init_builtin(&ts);
	char buf[8192];
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct ptt_type t;
		const char *defn = strncmp(line, "# type ", 7) == 0 ? line + 7 : line;
		if (ptt_text_parse_type(defn, &t) == 0) {
			ptt_text_format_type(&t, buf, sizeof buf);
			ptt_types_define(&ts, &t);
		}
		struct ptt_event ev;
		if (ptt_text_parse_event(&ts, line, &ev) == 0) {
			size_t n = ptt_text_format_event(&ev, buf, sizeof buf);
			struct ptt_event again;
			/* a line we wrote must read back (truncated output excepted) */
			if (n + 1 < sizeof buf && ptt_text_parse_event(&ts, buf, &again) != 0)
				abort();
		}
		char quoted[1024];
		ptt_text_quote(line, quoted, sizeof quoted);
	}
	ptt_types_free(&ts);
	free(text);
	return 0;
}
