#!/bin/sh
# The event table of man/ptt-trace.5, as it must read, from formats/events.def:
# one ".It ID Ta name Ta class Ta L Ta role Ta arguments" line per built-in type.
# Usage: events_table.sh EVENTS.DEF
awk -F'[(,)]' '/^PTT_EVENT\(PTT_EV_/ {
	for (i = 1; i <= NF; i++) gsub(/^[ \t"]+|[ \t"]+$/, "", $i)
	# $3 name, $4 class, $5 level, $6 source, $7 role, then the argspec (split at the commas)
	cls = tolower($4); sub(/^ptt_class_/, "", cls)
	role = tolower($7); sub(/^ptt_role_/, "", role)
	args = ""
	for (i = 8; i < NF; i++) { a = $i; gsub(/[ \t"]/, "", a); if (a != "") args = args (args == "" ? "" : ", ") a }
	printf ".It %d Ta %s Ta %s Ta %s Ta %s Ta %s\n", n++, $3, cls, $5, role, args == "" ? "-" : args
}' "$1"
