/* errors.c - messages for the library's error codes. */
#include <string.h>

#include "ptt_trace.h"

const char *ptt_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case PTT_E_BADMAGIC: return "not a ptt trace (bad magic)";
	case PTT_E_VERSION: return "trace format version newer than this tool supports";
	case PTT_E_BYTEORDER: return "trace written with another byte order";
	case PTT_E_TRUNCATED: return "truncated";
	case PTT_E_CHECKSUM: return "bad checksum";
	case PTT_E_BADBLOCK: return "bad block header";
	case PTT_E_BADRECORD: return "bad record";
	case PTT_E_BADTYPE: return "bad event type definition";
	case PTT_E_BADTEXT: return "malformed text line";
	case PTT_E_ZLIB: return "corrupt compressed block";
	case PTT_E_UNKNOWN_TYPE: return "unknown event type";
	case PTT_E_NOMEM: return "out of memory";
	case PTT_E_STRUCTURE: return "blocks out of place or a header that contradicts the data";
	default: return err < 0 && err > -4096 ? strerror(-err) : "unknown error";
	}
}
