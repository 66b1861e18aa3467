# ptt - pthread trace toolkit.  Plain make; see README.md.
VERSION    = 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR    ?= $(PREFIX)/share/man
DATADIR   ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BUILD     ?= build
# make check's second build: the tools and the unit tests under ASan+UBSan
ASAN_BUILD = $(BUILD)-asan

CC        ?= cc
WARN       = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Werror
CFLAGS    ?= -O2 -g
ZLIB_CFLAGS := $(shell pkg-config --cflags zlib 2>/dev/null)
ZLIB_LIBS   := $(shell pkg-config --libs zlib 2>/dev/null || echo -lz)
# -z's compressor (zlib stays readable and selectable): libzstd
ZSTD_CFLAGS := $(shell pkg-config --cflags libzstd 2>/dev/null)
ZSTD_LIBS   := $(shell pkg-config --libs libzstd 2>/dev/null || echo -lzstd)
# Rust's v0 symbols (_R...) demangled by libiberty's cplus_demangle (formats/demangle.c); a static library
IBERTY_LIBS := -liberty
# what every program linked with libpttformat.a needs
FORMAT_LIBS = $(ZLIB_LIBS) $(ZSTD_LIBS) $(IBERTY_LIBS)
# the readers' symboliser (convert/lib/symbols.c): elfutils' libdw/libdwfl
DW_LIBS     := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf)
# ptt-sqlite's database: libsqlite3
SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)
TOOL_LIBS_sqlite := $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
# ptt-stat --pprof: pprof's profile.proto (convert/proto) through protobuf-c, its C made by protoc-c
PROTOC_C  ?= protoc-c
PB_CFLAGS := $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
TOOL_LIBS_stat := $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
TOOL_OBJ_stat = $(BUILD)/obj/convert/lib/pprof.o $(BUILD)/gen/profile.pb-c.o
SAN        = $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all)
# the language and version every compilation of ours uses (tools, runtime, examples, fuzzers)
STD_CFLAGS = -std=gnu11 -D_GNU_SOURCE -DPTT_VERSION='"$(VERSION)"'
ALL_CFLAGS = $(STD_CFLAGS) $(WARN) $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) $(SQLITE_CFLAGS) $(CFLAGS) -fPIC
# the runtime is preloaded into arbitrary programs: never sanitized (ASan must come first in a process)
RT_CFLAGS  = $(ALL_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec
TOOL_CFLAGS = $(ALL_CFLAGS) $(SAN)

# the headers each part's objects depend on
FORMAT_HDR = $(wildcard formats/*.h formats/*.def)
CAPTURE_HDR = $(wildcard capture/*.h capture/runtime/*.h capture/recorder/*.h)
CONVERT_HDR = $(wildcard convert/lib/*.h)
FORMAT_SRC = $(wildcard formats/*.c)
FORMAT_OBJ = $(FORMAT_SRC:%.c=$(BUILD)/obj/%.o)
RT_SRC     = capture/runtime/trace_path.c capture/runtime/stack.c capture/shm.c capture/runtime/init.c capture/runtime/api.c $(wildcard capture/runtime/wrap_*.c)
RT_SRC    += capture/runtime/pyframes.c
RT_OBJ     = $(RT_SRC:%.c=$(BUILD)/rt/%.o) $(BUILD)/rt/formats/types.o $(BUILD)/rt/formats/map.o
REC_SRC    = $(addprefix capture/recorder/,ptt-record.c record_opts.c record_meta.c drain.c flight.c flight_file.c out_file.c rotate.c keeper.c pace.c) capture/shm.c
REC_OBJ    = $(REC_SRC:%.c=$(BUILD)/obj/%.o)
# convert/lib: the analyses the tools share; pprof.c: ptt-stat's alone (TOOL_OBJ_stat), with protobuf-c
CLI_SRC    = $(filter-out convert/lib/pprof.c,$(wildcard convert/lib/*.c))
CLI_OBJ    = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TOOLS      = $(patsubst convert/%.c,$(BUILD)/bin/%,$(wildcard convert/ptt-*.c))
# ptt-picture: a shell script, with its R script in share/ptt beside bin/ (as installed)
PROGRAMS   = $(BUILD)/bin/ptt-record $(TOOLS) $(BUILD)/bin/ptt-picture
PICTURE_R  = $(BUILD)/share/ptt/gantt.R $(BUILD)/share/ptt/flame.R
# the Rust examples (futex-based std locks) only where rustc is: their tests skip without them
RUSTC     ?= $(shell command -v rustc 2>/dev/null)
# the GLib example (its own futex locks) only where libglib2.0-dev is: its tests skip without it
GLIB_CFLAGS := $(shell pkg-config --cflags glib-2.0 2>/dev/null)
GLIB_LIBS   := $(shell pkg-config --libs glib-2.0 2>/dev/null)
EXAMPLES   = $(patsubst examples/%.c,$(BUILD)/examples/%,$(filter-out $(if $(GLIB_LIBS),,examples/glib_pool.c),$(wildcard examples/*.c))) \
             $(patsubst examples/%.cc,$(BUILD)/examples/%,$(wildcard examples/*.cc)) \
             $(if $(RUSTC),$(patsubst examples/%.rs,$(BUILD)/examples/%,$(wildcard examples/*.rs)))
UNIT       = $(patsubst test/unit/%.c,$(BUILD)/test/%,$(wildcard test/unit/test_*.c))
LIBFORMAT  = $(BUILD)/lib/libpttformat.a
LIBPTT     = $(BUILD)/lib/libptt.so

# a program linked with `pkg-config --libs libptt` finds libptt.so at any PREFIX: an rpath,
# except in the loader's own directories
comma := ,
PC_RPATH = $(if $(filter /usr/lib /lib /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null),$(LIBDIR)),, -Wl$(comma)-rpath$(comma)$${libdir})
PC_SED = sed -e 's|@RPATH@|$(PC_RPATH)|' -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'

# keep the objects make sees as intermediate (convert/ptt-*.o): no rebuild on every make
.SECONDARY:

.PHONY: all deps deps-check check check-quick check-all check-unit check-cli check-asan check-fuzz fuzz demo picture bench bench-nosite install uninstall clean

all: $(LIBPTT) $(PROGRAMS) $(PICTURE_R) $(EXAMPLES) $(BUILD)/lib/libptt.pc

$(BUILD)/obj/%.o: %.c $(FORMAT_HDR) $(CAPTURE_HDR) $(CONVERT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -c -o $@ $<

$(BUILD)/rt/%.o: %.c $(FORMAT_HDR) $(CAPTURE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c -o $@ $<

$(LIBFORMAT): $(FORMAT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBPTT): $(RT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libptt.so -Wl,-z,defs -o $@ $^ $(LDFLAGS) -ldl -lpthread -lgcc_s

$(BUILD)/bin/ptt-record: $(REC_OBJ) $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $(REC_OBJ) $(LIBFORMAT) $(LDFLAGS) $(FORMAT_LIBS) -ldl

$(BUILD)/bin/ptt-picture: picture/ptt-picture.sh
	@mkdir -p $(dir $@)
	sed 's|@VERSION@|$(VERSION)|' $< > $@ && chmod 755 $@

$(BUILD)/share/ptt/%.R: picture/%.R
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h &: convert/proto/profile.proto
	@mkdir -p $(dir $@)
	$(PROTOC_C) --proto_path=convert/proto --c_out=$(BUILD)/gen profile.proto

# generated: our warnings are not its author's
$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
	$(CC) $(STD_CFLAGS) $(PB_CFLAGS) $(CFLAGS) $(SAN) -fPIC -I$(BUILD)/gen -c -o $@ $<

$(BUILD)/obj/convert/lib/pprof.o: $(BUILD)/gen/profile.pb-c.h
$(BUILD)/obj/convert/lib/pprof.o: TOOL_CFLAGS += -I$(BUILD)/gen $(PB_CFLAGS)
$(BUILD)/bin/ptt-stat: $(TOOL_OBJ_stat)

# a tool's own objects and libraries beyond every tool's: TOOL_OBJ_stat, TOOL_LIBS_sqlite ...
$(BUILD)/bin/ptt-%: $(BUILD)/obj/convert/ptt-%.o $(CLI_OBJ) $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_OBJ_$*) $(CLI_OBJ) $(LIBFORMAT) $(LDFLAGS) $(TOOL_LIBS_$*) $(FORMAT_LIBS) $(DW_LIBS) -lm

$(BUILD)/examples/%: examples/%.c $(wildcard examples/*.h) capture/ptt.h $(LIBPTT)
	@mkdir -p $(dir $@)
	$(CC) $(STD_CFLAGS) $(WARN) $(CFLAGS) -Icapture -o $@ $< -pthread -L$(BUILD)/lib -lptt -Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/examples/glib_pool: examples/glib_pool.c
	@mkdir -p $(dir $@)
	$(CC) $(STD_CFLAGS) $(WARN) $(CFLAGS) $(GLIB_CFLAGS) -o $@ $< -pthread $(GLIB_LIBS)

$(BUILD)/examples/%: examples/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror $(CFLAGS) -o $@ $< -pthread

$(BUILD)/examples/%: examples/%.rs
	@mkdir -p $(dir $@)
	MAKEFLAGS= $(RUSTC) --edition 2021 -O -g -o $@ $<

$(BUILD)/test/test_ring: test/unit/test_ring.c $(RT_SRC) formats/types.c $(LIBFORMAT) $(REC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -DPTT_UNIT_TEST -o $@ test/unit/test_ring.c capture/runtime/trace_path.c capture/runtime/stack.c capture/runtime/pyframes.c capture/recorder/drain.c capture/shm.c $(LIBFORMAT) $(LDFLAGS) $(FORMAT_LIBS) -lpthread

$(BUILD)/test/test_stack: test/unit/test_stack.c capture/runtime/stack.c capture/runtime/pyframes.c capture/runtime/trace_path.c capture/shm.c $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -DPTT_UNIT_TEST -o $@ test/unit/test_stack.c capture/runtime/stack.c capture/runtime/pyframes.c capture/runtime/trace_path.c capture/shm.c $(LIBFORMAT) $(LDFLAGS) -lpthread -lgcc_s

# the runtime's CPython offsets against python3-dev's headers where installed (without them it skips);
# test/cli/37-python-frames.bats compiles it against every other CPython found
PY_INCLUDE ?= $(lastword $(wildcard /usr/include/python3.1[1-3]))
PY_TEST_CFLAGS = $(if $(wildcard $(PY_INCLUDE)/internal/pycore_frame.h),-DPTT_PY_HEADERS -I$(PY_INCLUDE) -I$(PY_INCLUDE)/internal)
$(BUILD)/test/test_pylayout: test/unit/test_pylayout.c capture/runtime/pyframes_layout.h
	@mkdir -p $(dir $@)
	$(CC) $(STD_CFLAGS) $(WARN) $(CFLAGS) $(PY_TEST_CFLAGS) -o $@ $<

$(BUILD)/test/test_pace: test/unit/test_pace.c capture/recorder/pace.c capture/recorder/pace.h
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ test/unit/test_pace.c capture/recorder/pace.c $(LDFLAGS)

$(BUILD)/test/test_flight: test/unit/test_flight.c capture/recorder/flight.c $(RT_SRC) formats/types.c $(LIBFORMAT) $(REC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -DPTT_UNIT_TEST -o $@ test/unit/test_flight.c capture/runtime/trace_path.c capture/runtime/stack.c capture/runtime/pyframes.c capture/recorder/drain.c capture/shm.c $(LIBFORMAT) $(LDFLAGS) $(FORMAT_LIBS) -lpthread

$(BUILD)/test/test_%: test/unit/test_%.c $(LIBFORMAT)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(LIBFORMAT) $(LDFLAGS) $(FORMAT_LIBS) -lpthread

$(BUILD)/lib/libptt.pc: libptt.pc.in
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# the Debian packages of .ci/packages: installed as root, else the command to run is printed
deps:
	@sh .ci/deps build
deps-check:
	@sh .ci/deps check

# ---- tests ------------------------------------------------------------------
# make check         everything twice (normal, ASan+UBSan), then one closing
#                    "N passed, N failed" line counted from the TAP that each pass
#                    leaves in $(BUILD)/results/ and $(ASAN_BUILD)/results/ (.ci/run);
#                    a part that did not build or run counts as failed, and so
#                    does a pass with no results (test/part.sh, test/tally.sh)
# make check-quick   the normal build only: the unit tests and the bats files of
#                    QUICK_CLI, then the same closing line (under 2 minutes)
# TESTS=FILE...      with check, check-quick, check-unit or check-cli: only these
#                    bats files and unit tests (test/cli/60-ptt-stat.bats, or
#                    60-ptt-stat, test/unit/test_format.c, test_format), no fuzz replay
#
# QUICK_CLI: the filters on hand-written and short recorded traces, the frozen
# outputs, every primitive and the rings recorded once, the man pages and set-up
# (make check-quick: 187 tests in 32 s on a 2-core machine at a load average of 7-9).
# Left to make check: the files that record programs at length or wait on purpose
# (10, 13, 41, 70: signals, kills, rotation, flight snapshots, pigz, xz, deadlocks
# stopped on purpose), the ones that load every Paje file into ViTE or draw with R
# (30, 31, 32, 33) and the install test (96).
QUICK_CLI = $(addprefix test/cli/,11-ptt-dump.bats 12-ptt-record-rings.bats 14-ptt-dump-human.bats 15-sites.bats \
	20-coverage.bats 21-c11-clockjoin.bats 25-frozen-outputs.bats 26-model-rules.bats 40-ptt-filter.bats 43-ptt-merge.bats 46-frames-cap.bats \
	50-ptt-csv.bats 52-ptt-sqlite.bats 60-ptt-stat.bats 61-ptt-stat-pprof.bats 65-structure.bats 73-ptt-stat-one-read.bats 90-manpages.bats 91-numbers.bats 95-write-errors.bats 97-setup.bats)
TEST_FILES = $(foreach t,$(TESTS),$(or $(firstword $(wildcard $(t) $(t).bats $(t).c test/cli/$(t) test/cli/$(t).bats \
	test/unit/$(t) test/unit/$(t).c)),$(error TESTS: no test file named $(t))))
UNIT_RUN   = $(if $(TESTS),$(patsubst test/unit/%.c,$(BUILD)/test/%,$(filter test/unit/test_%.c,$(TEST_FILES))),$(UNIT))
CLI_RUN    = $(if $(TESTS),$(filter-out test/unit/%,$(TEST_FILES)),$(if $(QUICK),$(QUICK_CLI),test/cli))

# The parts of a pass, each made on its own through test/part.sh: a part that stops
# without a failed test to show (its build failed) leaves a "not ok" line naming it,
# so the closing line counts it as failed.  run_parts: BUILD, parts, other variables.
PARTS      = check-unit check-cli check-fuzz
ASAN_VARS  = SANITIZE=address$(comma)undefined
run_parts  = for p in $(2); do sh test/part.sh $(1)/results $$p $(MAKE) --no-print-directory -k BUILD=$(1) $(3) $$p || rc=1; done

check: deps-check
	@rm -rf $(BUILD)/results $(ASAN_BUILD)/results
	@rc=0; $(call run_parts,$(BUILD),$(PARTS)); $(call run_parts,$(ASAN_BUILD),$(PARTS),$(ASAN_VARS)); \
		sh test/tally.sh $(BUILD)/results $(ASAN_BUILD)/results || rc=1; exit $$rc

check-quick: deps-check
	@rm -rf $(BUILD)/results
	@rc=0; $(call run_parts,$(BUILD),check-unit check-cli,QUICK=1); \
		sh test/tally.sh $(BUILD)/results || rc=1; exit $$rc

check-all: check-unit check-cli check-fuzz check-asan

check-unit: $(UNIT_RUN)
	@mkdir -p $(BUILD)/results; rc=0; for t in $(UNIT_RUN); do echo "# $$t"; r=$(BUILD)/results/$$(basename $$t).tap; \
		{ $$t || echo "not ok - $$t exited with status $$?"; } >$$r; cat $$r; ! grep -q '^not ok' $$r || rc=1; done; exit $$rc

check-cli: all
	@mkdir -p $(BUILD)/results
	$(if $(CLI_RUN),PTT_BUILD=$(abspath $(BUILD)) bats --print-output-on-failure --report-formatter tap -o $(BUILD)/results $(CLI_RUN))

# the tools and the unit tests again under ASan+UBSan (libptt.so itself is tested
# under ASan by linking its writer into test_ring)
check-asan:
	@rc=0; $(call run_parts,$(ASAN_BUILD),$(PARTS),$(ASAN_VARS)); exit $$rc

# ---- fuzzing (fuzz/README.md) ----------------------------------------------
# make check replays the committed corpus and every crash input kept under
# fuzz/regress with a plain driver (this compiler, under ASan+UBSan in check-asan);
# make fuzz builds the libFuzzer harnesses with clang and runs each in turn.
.SECONDEXPANSION:
FUZZ_NAMES  = reader text paje compact snapshot blocks
FUZZ_REPLAY = $(FUZZ_NAMES:%=$(BUILD)/fuzz/replay_%)
FUZZ_SRC_reader = fuzz/fuzz_reader.c
FUZZ_SRC_text   = fuzz/fuzz_text.c
FUZZ_SRC_paje   = fuzz/fuzz_paje.c convert/ptt-paje.c $(CLI_SRC)
FUZZ_OBJ_paje   = $(BUILD)/fuzz/ptt-paje-main.o $(CLI_OBJ)
FUZZ_SRC_compact  = fuzz/fuzz_compact.c
FUZZ_SRC_snapshot = fuzz/fuzz_snapshot.c convert/ptt-filter.c $(CLI_SRC)
FUZZ_SRC_blocks   = fuzz/fuzz_blocks.c
FUZZ_OBJ_snapshot = $(BUILD)/fuzz/ptt-filter-main.o $(CLI_OBJ)
$(BUILD)/fuzz/replay_snapshot $(BUILD)/fuzz/libfuzzer_snapshot: convert/ptt-index.c # included by the harness
# a tool's main() built under another name, for the harnesses that run it whole
FUZZ_MAIN_paje     = -Dmain=ptt_paje_main
FUZZ_MAIN_snapshot = -Dmain=ptt_filter_main
FUZZ_CC    ?= clang
FUZZ_RUNS  ?= 200000
FUZZ_TIME  ?= 120
FUZZ_FLAGS ?=
# the longest input tried (fuzz/README.md): a whole small trace (the seeds, plain
# or zlib, are 2-8 KiB) for the reader and ptt-paje, some forty lines for the
# line-by-line text parser
FUZZ_MAXLEN_reader = 8192
FUZZ_MAXLEN_text   = 4096
FUZZ_MAXLEN_paje   = 8192
# compact: one block's coded records (and as many written); snapshot: a ptt-index copy,
# whose snapshots repeat the definitions in force (the v1-index seeds are 17-26 KiB)
FUZZ_MAXLEN_compact  = 8192
FUZZ_MAXLEN_snapshot = 32768
# blocks: whole traces whose blocks are moved about (the fixtures are 5-30 KiB)
FUZZ_MAXLEN_blocks   = 32768
# a smaller quarantine than ASan's 256 MiB: freed memory comes back while still
# in cache (a use after free is still caught within the last 32 MiB freed)
FUZZ_ASAN_OPTIONS ?= quarantine_size_mb=32
# an input that takes longer than this many seconds is reported as a hang (libFuzzer's default: 1200)
FUZZ_TIMEOUT ?= 10

$(BUILD)/fuzz/ptt-%-main.o: convert/ptt-%.c $(FORMAT_HDR) $(CONVERT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -Wno-missing-prototypes -Dmain=ptt_$*_main -c -o $@ $<

$(BUILD)/fuzz/replay_%: fuzz/replay.c fuzz/fuzz_common.c fuzz/fuzz_%.c fuzz/fuzz.h $(LIBFORMAT) $$(FUZZ_OBJ_$$*) formats/compact.h
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ fuzz/replay.c fuzz/fuzz_common.c fuzz/fuzz_$*.c $(FUZZ_OBJ_$*) $(LIBFORMAT) $(LDFLAGS) $(FORMAT_LIBS) $(DW_LIBS) -lm

# the binary fixtures of every format version (test/cli/fixtures) are seeds of the
# harnesses that read whole traces, replayed with their corpora
FUZZ_FIXTURES = case $$n in reader|paje|blocks) echo test/cli/fixtures;; esac
check-fuzz: $(if $(TESTS),,$(FUZZ_REPLAY))
	@set -e; for n in $(if $(TESTS),,$(FUZZ_NAMES)); do echo "# replay $$n: fuzz/corpus/$$n fuzz/regress/$$n $$($(FUZZ_FIXTURES))"; \
		$(BUILD)/fuzz/replay_$$n fuzz/corpus/$$n fuzz/regress/$$n $$($(FUZZ_FIXTURES)); done

# the harnesses themselves: clang -fsanitize=fuzzer with ASan+UBSan, every source compiled again
$(BUILD)/fuzz/libfuzzer_%: fuzz/fuzz_%.c fuzz/fuzz_common.c fuzz/fuzz.h $(FORMAT_SRC) $$(FUZZ_SRC_$$*) $(FORMAT_HDR) $(CONVERT_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(STD_CFLAGS) -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(ZLIB_CFLAGS) $(ZSTD_CFLAGS) \
		$(FUZZ_MAIN_$*) -o $@ fuzz/fuzz_common.c $(FUZZ_SRC_$*) $(FORMAT_SRC) $(FORMAT_LIBS) $(DW_LIBS) -lm

# FUZZ_RUNS executions or FUZZ_TIME seconds per harness, whichever comes first;
# seeds: the examples' traces recorded now, plus the committed corpus
fuzz: all $(FUZZ_NAMES:%=$(BUILD)/fuzz/libfuzzer_%)
	@sh fuzz/seeds.sh $(BUILD) $(BUILD)/fuzz/seeds
	@set -e; for n in $(FUZZ_NAMES); do mkdir -p $(BUILD)/fuzz/corpus-$$n $(BUILD)/fuzz/crash-$$n; \
		echo "== fuzz $$n: $(FUZZ_RUNS) runs or $(FUZZ_TIME) s"; \
		ASAN_OPTIONS=$(FUZZ_ASAN_OPTIONS) $(BUILD)/fuzz/libfuzzer_$$n -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_TIME) \
			-max_len=$$(case $$n in reader) echo $(FUZZ_MAXLEN_reader);; text) echo $(FUZZ_MAXLEN_text);; \
				compact) echo $(FUZZ_MAXLEN_compact);; snapshot) echo $(FUZZ_MAXLEN_snapshot);; blocks) echo $(FUZZ_MAXLEN_blocks);; \
				*) echo $(FUZZ_MAXLEN_paje);; esac) \
			-timeout=$(FUZZ_TIMEOUT) -artifact_prefix=$(BUILD)/fuzz/crash-$$n/ $(FUZZ_FLAGS) \
			$(BUILD)/fuzz/corpus-$$n $(BUILD)/fuzz/seeds/$$n fuzz/corpus/$$n fuzz/regress/$$n $$($(FUZZ_FIXTURES)); done

demo: deps
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh $(BUILD)

# the README's picture, remade from a new demo trace (needs R with ggplot2, as make demo's PNG)
picture: demo
	@test -f demo/prodcons.png || { echo "make picture: make demo wrote no PNG (see its message)" >&2; exit 1; }
	cp demo/prodcons.png doc/demo.png

bench: all bench-nosite
	@sh bench/run.sh $(BUILD)
	@sh bench/top.sh $(BUILD)

# make bench's second runtime and recorder, without the call-site argument (PTT_NO_SITE,
# capture/runtime/runtime.h): bench/site.sh times the real wrappers with and without it in one run.
# Built apart (its own objects, its own type table), never installed.
bench-nosite:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/nosite CFLAGS='$(CFLAGS) -DPTT_NO_SITE' \
		$(BUILD)/nosite/lib/libptt.so $(BUILD)/nosite/bin/ptt-record

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DATADIR)/ptt
	install -m 755 $(PROGRAMS) $(DESTDIR)$(BINDIR)
	install -m 644 $(PICTURE_R) $(DESTDIR)$(DATADIR)/ptt
	install -m 755 $(LIBPTT) $(DESTDIR)$(LIBDIR)
	install -m 644 capture/ptt.h $(DESTDIR)$(INCLUDEDIR)
	# written here, not copied: the PREFIX of this install, not of the build
	$(PC_SED) libptt.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libptt.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/libptt.pc
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(wildcard man/*.3) $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(MANDIR)/man5

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(PROGRAMS))) $(DESTDIR)$(LIBDIR)/libptt.so \
		$(DESTDIR)$(INCLUDEDIR)/ptt.h $(DESTDIR)$(PKGCONFIGDIR)/libptt.pc $(DESTDIR)$(DATADIR)/ptt/gantt.R $(DESTDIR)$(DATADIR)/ptt/flame.R \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard man/*.1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(wildcard man/*.3))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(wildcard man/*.5)))
	-rmdir $(DESTDIR)$(DATADIR)/ptt 2>/dev/null

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) demo
