# Give every type of a text trace another layout, as a trace from another
# version might: its first argument kept first (the object, by the roles'
# rule), then an argument of no known name, then the others in reverse order
# (a site or str argument stays last: the rules of ptt-trace(5)); and write
# each event's arguments so.  A type with no room for one more is left alone.
/^# type / {
	n = split($8, a, ",")
	if ($8 == "-")
		n = 0
	last[$4] = ""
	if (n > 0 && a[n] ~ /:str$|^site:ptr$/) {
		last[$4] = substr(a[n], 1, index(a[n], ":") - 1)
		n--
	}
	if (n > 0 && n + (last[$4] != "") < 8) {
		spec = a[1] ",extra_field:u32"
		for (i = n; i > 1; i--)
			spec = spec "," a[i]
		if (last[$4] != "")
			spec = spec "," a[n + 1]
		$8 = spec
		moved[$4] = 1
	}
	print
	next
}
/^#/ || !($5 in moved) { print; next }
{
	line = $0
	tail = ""
	if (last[$5] != "" && (c = index(line, " " last[$5] "="))) { # the last argument and what follows it
		tail = substr(line, c)
		line = substr(line, 1, c - 1)
	} else if ((c = index(line, "  #")) > 0) {
		tail = substr(line, c)
		line = substr(line, 1, c - 1)
	}
	n = split(line, f, " ")
	out = f[1] " " f[2] " " f[3] " " f[4] " " f[5]
	if (n >= 6) {
		out = out " " f[6] " extra_field=7"
		for (i = n; i > 6; i--)
			out = out " " f[i]
	}
	print out tail
}
