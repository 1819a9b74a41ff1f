# ptprof - a sampling profiler for Linux.
#
#   make              build build/ptprof and build/sampler
#   make check        unit tests, end-to-end tests, ASan+UBSan unit tests
#   make demo         profile the bundled demo program and show the result
#   make bench        run the benchmarks, write bench/RESULTS.md
#   make install      PREFIX=/usr/local DESTDIR=
#   make fuzz         build the libFuzzer targets (clang)
#   make format lint  clang-format and cppcheck
#
# SAN=1 builds everything with AddressSanitizer and UBSan into build-asan/.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
CC ?= cc
PKG_CONFIG ?= pkg-config

ifeq ($(SAN),1)
BUILD ?= build-asan
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT ?= -O1
else
BUILD ?= build
SANFLAGS =
OPT ?= -O2
endif

PKGS = libdw libelf zlib libzstd libprotobuf-c
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wformat=2 -Wno-format-nonliteral -Wvla
CPPFLAGS += -D_GNU_SOURCE -Isrc -I$(BUILD)/gen
CFLAGS ?= $(OPT) -g
ALL_CFLAGS = -std=c11 $(WARN) $(SANFLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LDLIBS = $(PKG_LIBS) -lbz2 -lstdc++ -lpthread -lm
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)

# Everything under src/ except the entry point is the ptprof library.
LIB_SRC := $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
# C generated from the protobuf schemas in src/ (protoc-c), built into the library.
PROTO_SRC := $(sort $(wildcard src/*/*.proto))
GEN_C := $(foreach p,$(PROTO_SRC),$(BUILD)/gen/$(basename $(notdir $(p))).pb-c.c)
GEN_H := $(GEN_C:.c=.h)
GEN_OBJ := $(GEN_C:.c=.o)
MAIN_OBJ := $(BUILD)/src/ptprof.o
LIB := $(BUILD)/libptprof.a

UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
E2E_SRC := $(sort $(wildcard tests/e2e/*.c))
TESTLIB_SRC := $(sort $(wildcard tests/lib/*.c))
WORKLOAD_SRC := $(sort $(wildcard tests/workloads/*.c))
# Each workload in two builds: with frame pointers, and -O2 without them.
WORKLOADS := $(WORKLOAD_SRC:tests/workloads/%.c=$(BUILD)/workloads/%) \
             $(WORKLOAD_SRC:tests/workloads/%.c=$(BUILD)/workloads/%-nofp)
# The raw format places PCs of ET_EXEC files differently: one workload is
# also built as a position-dependent executable.
WORKLOADS += $(BUILD)/workloads/placed-nopie
# Shared libraries the workloads dlopen: tests/workloads/lib/X.c -> libX.so
WORKLOAD_LIB_SRC := $(sort $(wildcard tests/workloads/lib/*.c))
WORKLOADS += $(WORKLOAD_LIB_SRC:tests/workloads/lib/%.c=$(BUILD)/workloads/lib%.so)
TEST_LIBS = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null || echo -lcriterion)

.PHONY: all check unit e2e check-asan demo bench install uninstall fuzz fuzz-smoke format lint clean \
        workloads tests

all: $(BUILD)/ptprof $(BUILD)/sampler

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# One protoc-c run writes both files (a pattern rule's targets are made together).
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: src/interop/%.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) --proto_path=$(<D) $<

$(GEN_OBJ): %.o: %.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# Every library object may include a generated header: generate first.
$(LIB_OBJ) $(MAIN_OBJ): | $(GEN_H)

$(LIB): $(LIB_OBJ) $(GEN_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/ptprof: $(MAIN_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)

# The original tool's command line is the same binary under another name.
$(BUILD)/sampler: $(BUILD)/ptprof
	ln -sf ptprof $@

# --- tests ---------------------------------------------------------------

$(UNIT_SRC:%.c=$(BUILD)/%.o) $(E2E_SRC:%.c=$(BUILD)/%.o) $(TESTLIB_SRC:%.c=$(BUILD)/%.o): | $(GEN_H)

$(BUILD)/tests/unit-tests: $(UNIT_SRC:%.c=$(BUILD)/%.o) $(TESTLIB_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/e2e-tests: $(E2E_SRC:%.c=$(BUILD)/%.o) $(TESTLIB_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS)

# Workloads are the programs we profile: never sanitized, always -g.
WORKLOAD_FLAGS = -std=gnu11 -g -pthread -Wall -Wextra -Werror
$(BUILD)/workloads/%: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_FLAGS) -O2 -fno-omit-frame-pointer -o $@ $< -lm -ldl

$(BUILD)/workloads/%-nofp: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_FLAGS) -O2 -fomit-frame-pointer -o $@ $< -lm -ldl

$(BUILD)/workloads/%-nopie: tests/workloads/%.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_FLAGS) -O2 -fno-pie -no-pie -o $@ $< -lm -ldl

$(BUILD)/workloads/lib%.so: tests/workloads/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_FLAGS) -O2 -fno-omit-frame-pointer -fPIC -shared -o $@ $<

# The memory tests read the benchmark's files (tests/e2e/test_memory.c).
$(BUILD)/bench/memory_gen: bench/memory_gen.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

workloads: $(WORKLOADS)
tests: all workloads $(BUILD)/tests/unit-tests $(BUILD)/tests/e2e-tests $(BUILD)/bench/memory_gen

# make check: the whole suite.  scripts/run-tests prints one summary line.
check:
	scripts/run-tests

unit: all $(BUILD)/tests/unit-tests
	$(BUILD)/tests/unit-tests

e2e: all workloads $(BUILD)/tests/e2e-tests
	PTPROF_BUILD=$(BUILD) $(BUILD)/tests/e2e-tests

# --- demo, bench ---------------------------------------------------------

$(BUILD)/demo: demo/demo.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -pthread -Wall -Wextra -Werror -o $@ $<

demo: all $(BUILD)/demo
	scripts/demo $(BUILD)

bench: all workloads
	bench/run $(BUILD)

# --- install -------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/ptprof $(DESTDIR)$(BINDIR)/ptprof
	ln -sf ptprof $(DESTDIR)$(BINDIR)/sampler

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ptprof $(DESTDIR)$(BINDIR)/sampler

# --- fuzzing, style ------------------------------------------------------

FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
# The library is compiled once, instrumented, and linked into every target.
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC) $(GEN_C))
FUZZ_CFLAGS = -std=c11 -g -O1 -D_GNU_SOURCE -Isrc -I$(BUILD)/gen $(PKG_CFLAGS) \
              -fsanitize=fuzzer-no-link,address,undefined
build-fuzz/obj/%.o: %.c | $(GEN_H)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -c -o $@ $<
build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

# make fuzz: build every target; make fuzz-smoke: run each on its corpus
# for FUZZ_SECONDS (scripts/fuzz-smoke, which make check runs too).
fuzz: $(FUZZ_BIN)
# Kept between runs: they are the slow part, not intermediates to delete.
.SECONDARY: $(FUZZ_OBJ)

fuzz-smoke: fuzz
	scripts/fuzz-smoke

format:
	clang-format -i $(LIB_SRC) src/ptprof.c $(wildcard src/*/*.h src/*/*/*.h) $(UNIT_SRC) $(E2E_SRC) \
	    $(TESTLIB_SRC) $(wildcard tests/lib/*.h) $(WORKLOAD_SRC) $(FUZZ_SRC) demo/demo.c

lint:
	clang-format --dry-run -Werror $(LIB_SRC) src/ptprof.c $(wildcard src/*/*.h src/*/*/*.h)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 \
	    --suppress=missingIncludeSystem -D_GNU_SOURCE -D__x86_64__ -D__linux__ -Isrc src

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
