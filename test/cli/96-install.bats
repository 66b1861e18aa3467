#!/usr/bin/env bats
# make install puts a working toolkit under PREFIX (and DESTDIR); uninstall takes it away.
bats_require_minimum_version 1.5.0
load helpers

@test "install, build a program against the API with pkg-config, record it, uninstall" {
	command -v pkg-config >/dev/null || skip "pkg-config not installed"
	local root="$BATS_TEST_TMPDIR/root" prefix=/opt/ptt-test
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX="$prefix" DESTDIR="$root" install
	for f in bin/ptt-record bin/ptt-dump bin/ptt-paje bin/ptt-picture share/ptt/gantt.R lib/libptt.so include/ptt.h share/man/man1/ptt-record.1 \
		share/man/man3/ptt.3 share/man/man5/ptt-trace.5 lib/pkgconfig/libptt.pc; do
		[ -e "$root$prefix/$f" ] || { echo "missing $f"; return 1; }
	done
	# the .pc speaks of this install's PREFIX, not of the build's
	grep -qx "prefix=$prefix" "$root$prefix/lib/pkgconfig/libptt.pc"
	# with DESTDIR the files are not at PREFIX yet: point pkg-config's paths there
	cat >"$BATS_TEST_TMPDIR/api.c" <<'C'
#include <ptt.h>
#include <pthread.h>
static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
	int ev = ptt_register_event("batch_done", 1, "items:u64");
	ptt_name_object(&q, "queue_lock");
	pthread_mutex_lock(&q);
	PTT_TRACE(ev, 42);
	pthread_mutex_unlock(&q);
	return 0;
}
C
	flags=$(PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$root$prefix/lib/pkgconfig" pkg-config --cflags --libs libptt)
	cc -o "$BATS_TEST_TMPDIR/api" "$BATS_TEST_TMPDIR/api.c" $flags -pthread -Wl,-rpath,"$root$prefix/lib"
	run -0 "$BATS_TEST_TMPDIR/api" # not recorded: the trace points are no-ops
	PTT_LIBPTT="$root$prefix/lib/libptt.so" ptt-record -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/api"
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *' program batch_done items=42'* ]]
	[[ "$output" == *' object_name object=0x'*' name="queue_lock"'* ]]
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX="$prefix" DESTDIR="$root" uninstall
	[ -z "$(find "$root" -type f)" ]
}

@test "a program linked with pkg-config --libs libptt starts from any PREFIX (rpath), no LD_LIBRARY_PATH" {
	command -v pkg-config >/dev/null || skip "pkg-config not installed"
	local prefix="$BATS_TEST_TMPDIR/any prefix"
	prefix=${prefix// /-}
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX="$prefix" install
	grep -qx "Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lptt" "$prefix/lib/pkgconfig/libptt.pc"
	printf '#include <ptt.h>\nint main(void) { PTT_TRACE(ptt_register_event("x", 1, "")); return 0; }\n' >"$BATS_TEST_TMPDIR/p.c"
	cc -o "$BATS_TEST_TMPDIR/p" "$BATS_TEST_TMPDIR/p.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs libptt)
	run -0 --separate-stderr env -u LD_LIBRARY_PATH "$BATS_TEST_TMPDIR/p"
	[ -z "$stderr" ]
	run -0 --separate-stderr env -u LD_LIBRARY_PATH "$prefix/bin/ptt-record" -q -o "$BATS_TEST_TMPDIR/t.ptt" -- "$BATS_TEST_TMPDIR/p"
	run -0 ptt-dump -n "$BATS_TEST_TMPDIR/t.ptt"
	[[ "$output" == *' program x'* ]]
	# in the loader's own directories no rpath is written
	run -0 make -s -C "$PTT_ROOT" BUILD="$PTT_BUILD" PREFIX=/usr DESTDIR="$BATS_TEST_TMPDIR/sys" install
	grep -qx 'Libs: -L${libdir} -lptt' "$BATS_TEST_TMPDIR/sys/usr/lib/pkgconfig/libptt.pc"
}
