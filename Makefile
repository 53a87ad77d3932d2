# fragsim - build, run, test, asan, install.  See README.md.
#
#   make run      install missing dependencies, build, run the main job
#   make test     build and run every cmocka test, the CLI tests and every
#                 command shown in README.md and docs/*.md (tests/doctest.py),
#                 and build examples/hello.c against an install (tests/install.sh)
#   make asan     the tests under AddressSanitizer + UBSan (build-asan/);
#                 CC=clang BUILD=build-asan-clang for clang's
#   make fuzz     each libFuzzer target for FUZZ_SECONDS (clang, build-fuzz/);
#                 FUZZ_TARGETS=npy to pick; docs/fuzzing.md
#   make bench    time the Qwen3.5-27B workloads, optimised (build-bench/);
#                 BENCH_ARGS='--quick --only decode-4096' to try it out
#   make install  PREFIX=/usr/local DESTDIR=  (and make uninstall): fragsim,
#                 libfragsim.a, fragsim.h, fragsim.pc, docs (docs/library.md)
#   make hip-check  compile the HIP harnesses for gfx940 and gfx1100 (needs hipcc)
#   make hip-emu TINYGRAD=DIR  run them on tinygrad's mock AMD GPU: the
#                 probe, every cdna3 golden, planted bugs, a wrong map
#                 (docs/hip-emu.md)
#   make check-layers  sim/ ref/ lib/ cli/ include and print only what their
#                 layer may (tools/check_layers.py); part of make test
#   make check-build   this Makefile's dependency tracking (tests/build.sh);
#                 part of make test
#   make pictures  redraw docs/img/gfx936-c.svg, README's picture

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
PKG_CONFIG ?= pkg-config

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# -ffp-contract=off: no fused multiply-add behind our back, so a float
# result is the same sequence of roundings on every machine.
OPT      ?= -O2
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla
CFLAGS_ALL := -std=c11 -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 $(OPT) -g \
	-fopenmp -ffp-contract=off -fno-fast-math $(WARN) \
	-DFRAGSIM_VERSION='"$(VERSION)"' $(SAN) $(CFLAGS)
YAML_CFLAGS  := $(shell $(PKG_CONFIG) --cflags yaml-0.1 2>/dev/null)
YAML_LIBS    := $(shell $(PKG_CONFIG) --libs yaml-0.1 2>/dev/null || echo -lyaml)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS  := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)
LDLIBS_ALL   := $(YAML_LIBS) -fopenmp -lm $(SAN) $(LDFLAGS)

SIM_SRC   := $(sort $(wildcard sim/*/*.c))
REF_SRC   := $(sort $(wildcard ref/*.c))
IO_SRC    := $(sort $(wildcard lib/*.c))
CLI_SRC   := $(sort $(filter-out cli/main.c,$(wildcard cli/*.c)))
# libfragsim.a is the library (sim/, ref/, lib/): it prints nothing and
# holds no command. The commands (cli/) are an archive of their own that
# fragsim and the CLI tests link; it is not installed.
LIB_SRC   := $(SIM_SRC) $(REF_SRC) $(IO_SRC)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/builtin_profiles.o
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
PROFILES  := $(sort $(wildcard profiles/*.yaml))
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
TEST_BIN  := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

# The fuzz targets (tests/fuzz/fuzz_<name>.c) and where their seeds are:
# directories, file suffix, and for directory formats PACK (one input
# per directory). make test replays every seed, corpus and crash file
# through each (regress_<name>); make fuzz runs them under libFuzzer.
FUZZ_TARGETS ?= case profile npy safetensors dump plan
FUZZ_SEEDS_case    := cases tests/data
FUZZ_EXT_case      := .yaml
FUZZ_SEEDS_profile := profiles
FUZZ_EXT_profile   := .yaml
FUZZ_SEEDS_npy     := tests/data
FUZZ_EXT_npy       := .npy
FUZZ_SEEDS_dump    := tests/data/dumps
FUZZ_EXT_dump      := .npy
FUZZ_PACK_dump     := 1
REGRESS_BIN := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/regress_%)
.PRECIOUS: $(BUILD)/tests/fuzz/%.o
# Objects that only a pattern rule names are intermediate: make would
# delete them after the first build, and the .d files (which name them)
# would rebuild them all on the next. Keep them.
.SECONDARY: $(TEST_BIN:%=%.o) $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/fuzz_%.o) \
	$(BUILD)/tools/bench/peak.o $(BUILD)/tools/bench/stages.o

.PHONY: all run test asan fuzz bench install uninstall clean deps
.PHONY: hip-check hip-emu check-layers check-build pictures
all: $(BUILD)/fragsim $(BUILD)/fragsim.1 $(BUILD)/fragsim.bash

deps:
	@sh tools/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(YAML_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/builtin_profiles.c: $(PROFILES) tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh $(PROFILES) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/builtin_profiles.o: $(BUILD)/gen/builtin_profiles.c
	$(CC) $(CFLAGS_ALL) $(YAML_CFLAGS) -I. -MMD -MP -c $< -o $@

# FRAGSIM_VERSION comes from VERSION as a -D, which no .d file can see:
# the objects whose source uses it depend on VERSION itself, so a new
# version is never half built in.
VERSION_OBJ := $(patsubst %.c,$(BUILD)/%.o,\
	$(shell grep -l FRAGSIM_VERSION $(LIB_SRC) $(CLI_SRC) cli/main.c $(TEST_SRC) 2>/dev/null))
$(VERSION_OBJ): $(wildcard VERSION)

$(BUILD)/libfragsim.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libfragsim-cli.a: $(CLI_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fragsim: $(BUILD)/cli/main.o $(BUILD)/libfragsim-cli.a $(BUILD)/libfragsim.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# The man page and the bash completion, written by the binary from its
# option tables (cli/help.c), so they list what it parses.
$(BUILD)/fragsim.1: $(BUILD)/fragsim
	$(BUILD)/fragsim help --man > $@.tmp && mv $@.tmp $@

$(BUILD)/fragsim.bash: $(BUILD)/fragsim
	$(BUILD)/fragsim help --completion bash > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(YAML_CFLAGS) $(CMOCKA_CFLAGS) \
		-DFRAGSIM_BIN='"$(abspath $(BUILD))/fragsim"' \
		-DFRAGSIM_SRC='"$(CURDIR)"' -MMD -MP -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libfragsim-cli.a $(BUILD)/libfragsim.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_ALL)

# test_errors fails the N-th allocation: every malloc, calloc, realloc
# and strdup of the library's objects and its own goes through its
# __wrap_* (tests/test_errors.c says why a link-time wrap).
$(BUILD)/tests/test_errors: LDLIBS_ALL += \
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup

# The tests that compile headers fragsim gives to kernels (the generated
# lane maps, tools/device/fragsim_dump.h) with the C and C++ compilers.
CXX ?= c++
$(BUILD)/tests/test_lmprint.o $(BUILD)/tests/test_fragsim_dump.o: \
	CFLAGS_ALL += -DFRAGSIM_CC='"$(CC)"' -DFRAGSIM_CXX='"$(CXX)"'

# Static pattern rules: these patterns would match the .d files too.
$(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/regression_%.o): \
		$(BUILD)/tests/fuzz/regression_%.o: tests/fuzz/regression.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DFRAGSIM_SRC='"$(CURDIR)"' -DFUZZ_NAME='"$*"' \
		-DFUZZ_SEEDS='"$(FUZZ_SEEDS_$*)"' -DFUZZ_EXT='"$(FUZZ_EXT_$*)"' \
		-DFUZZ_PACK=$(if $(FUZZ_PACK_$*),1,0) -MMD -MP -c $< -o $@

$(REGRESS_BIN): $(BUILD)/tests/fuzz/regress_%: \
		$(BUILD)/tests/fuzz/regression_%.o $(BUILD)/tests/fuzz/fuzz_%.o \
		$(BUILD)/libfragsim-cli.a $(BUILD)/libfragsim.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%): $(BUILD)/fuzz/fuzz_%: \
		$(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/libfragsim-cli.a \
		$(BUILD)/libfragsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

# The main job (see README.md): the shipped default case, Qwen3.5-27B
# decode over 4097 keys on shuffled pages, checked against the reference,
# with its goldens written to out/.
DEFAULT_CASE ?= cases/qwen35-27b/decode-4097-shuffled.yaml
run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/fragsim run $(DEFAULT_CASE) --out out

test: deps
	@$(MAKE) --no-print-directory $(BUILD)/fragsim $(TEST_BIN) $(REGRESS_BIN)
	@sh tests/run.sh $(BUILD) $(TEST_BIN) $(REGRESS_BIN)
	@$(PYTHON) tests/doctest.py --fragsim $(BUILD)/fragsim README.md docs/*.md
	@sh tests/python/run.sh $(BUILD)/fragsim
	@CC='$(CC)' SAN='$(SAN)' sh tests/install.sh $(BUILD)
	@$(PYTHON) tests/browser.py --fragsim $(BUILD)/fragsim
	@$(MAKE) --no-print-directory check-layers check-build

# The layering rules (sim/ pure, ref/ independent, the library free of
# the CLI), then the checker's own must-fail cases on planted violations.
check-layers:
	@$(PYTHON) tools/check_layers.py
	@sh tests/layers.sh

# Each object tracks its headers, VERSION and the generated sources
# (make -n -W, so nothing is touched); .PHONY is exact; tests/run.sh
# honours its BUILD argument; .gitignore. It asks make about the build,
# so it builds first.
check-build: $(BUILD)/fragsim $(TEST_BIN) $(REGRESS_BIN)
	@sh tests/build.sh $(BUILD)

# make asan builds in build-asan/ with $(CC); CI runs it again with
# clang, `make asan CC=clang BUILD=build-asan-clang`: clang's UBSan sees
# what gcc's does not (an offset added to a NULL pointer).
# intercept_tls_get_addr=0: the sanitizers' __tls_get_addr hook (gcc's
# up to 13, clang's up to 16) can take a dynamic TLS block (libomp's) for
# glibc 2.19's and hand LeakSanitizer a bogus range: "Tracer caught
# signal 11" at exit (google/sanitizers#1322; test_attn_fast under clang).
ASAN_BUILD := $(if $(filter command line,$(origin BUILD)),$(BUILD),build-asan)
asan:
	@ASAN_OPTIONS="intercept_tls_get_addr=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}" \
	$(MAKE) --no-print-directory test BUILD=$(ASAN_BUILD) OPT=-O1 \
		SAN='-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer'

# The picture README shows, drawn by fragsim; tests/browser.py (make test)
# fails when it is not what fragsim draws now.
pictures: $(BUILD)/fragsim
	@mkdir -p docs/img
	$(BUILD)/fragsim lanemap --isa gfx936 --format svg --matrix C > docs/img/gfx936-c.svg.tmp
	mv docs/img/gfx936-c.svg.tmp docs/img/gfx936-c.svg

# Not part of test: FUZZ_SECONDS per target, one target at a time, with
# clang's libFuzzer, ASan and UBSan. New corpus inputs and crashes land in
# $(FUZZ_BUILD)/fuzz/; docs/fuzzing.md says what to keep.
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) OPT=-O1 \
		SAN='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer' \
		$(foreach t,$(FUZZ_TARGETS),$(FUZZ_BUILD)/fuzz/fuzz_$t $(FUZZ_BUILD)/tests/fuzz/regress_$t)
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Not part of test: it takes many minutes and its figures depend on the
# machine. tools/bench/bench.py says what it measures.
BENCH_BUILD ?= build-bench
BENCH_OPT   ?= -O3
BENCH_ARGS  ?=
PYTHON      ?= python3
bench:
	@sh tools/deps.sh bench
	@$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) OPT='$(BENCH_OPT)' \
		$(BENCH_BUILD)/fragsim $(BENCH_BUILD)/bench/peak $(BENCH_BUILD)/bench/stages
	$(PYTHON) tools/bench/bench.py --fragsim $(BENCH_BUILD)/fragsim \
		--peak $(BENCH_BUILD)/bench/peak --stages $(BENCH_BUILD)/bench/stages \
		$(BENCH_ARGS)

$(BUILD)/bench/peak: $(BUILD)/tools/bench/peak.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -fopenmp $(LDFLAGS)

# The reference's stage times (tools/bench/stages.c): the library, run
# on one case, and ref/'s per-stage seconds.
$(BUILD)/bench/stages: $(BUILD)/tools/bench/stages.o $(BUILD)/libfragsim.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# The HIP harnesses (tools/device/hip/) compiled for gfx940 with hipcc,
# no GPU needed, and their assembly checked; gfx936 needs DTK's hipcc.
hip-check: $(BUILD)/fragsim
	sh tools/device/hip/check.sh $(BUILD)

# The same harnesses built and run on tinygrad's mock AMD GPU (its
# emulator, no GPU), each verdict checked; TINYGRAD names a checkout,
# which is copied and patched, never changed (docs/hip-emu.md).
hip-emu: $(BUILD)/fragsim
	@if [ -z "$(TINYGRAD)" ]; then \
		echo "hip-emu: TINYGRAD=DIR must name a tinygrad checkout (docs/hip-emu.md)" >&2; exit 2; fi
	sh tools/device/emu/run.sh $(BUILD) "$(TINYGRAD)"

# pkg-config's file for the installed library, for this PREFIX and VERSION
# (FORCE: a PREFIX given on the command line must not meet a stale file).
$(BUILD)/fragsim.pc: fragsim.pc.in FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
		fragsim.pc.in > $@.tmp && mv $@.tmp $@
FORCE:

# The library's files (docs/library.md), then the man page and the bash
# completion (fragsim help; docs/cli.md): one block each in both rules.
DOC_DIR := $(DESTDIR)$(PREFIX)/share/doc/fragsim
MANDIR  := $(PREFIX)/share/man/man1
COMPDIR := $(PREFIX)/share/bash-completion/completions

install: $(BUILD)/fragsim $(BUILD)/libfragsim.a $(BUILD)/fragsim.pc \
		$(BUILD)/fragsim.1 $(BUILD)/fragsim.bash
	install -d $(DESTDIR)$(PREFIX)/bin $(DOC_DIR)
	install -m 755 $(BUILD)/fragsim $(DESTDIR)$(PREFIX)/bin/fragsim
	install -m 644 README.md $(DOC_DIR)/README.md
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DOC_DIR)/docs $(DOC_DIR)/examples
	install -m 644 $(BUILD)/libfragsim.a $(DESTDIR)$(PREFIX)/lib/libfragsim.a
	install -m 644 include/fragsim.h $(DESTDIR)$(PREFIX)/include/fragsim.h
	install -m 644 $(BUILD)/fragsim.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/fragsim.pc
	install -m 644 docs/*.md $(DOC_DIR)/docs
	install -m 644 examples/hello.c $(DOC_DIR)/examples/hello.c
	install -d $(DESTDIR)$(MANDIR) $(DESTDIR)$(COMPDIR)
	install -m 644 $(BUILD)/fragsim.1 $(DESTDIR)$(MANDIR)/fragsim.1
	install -m 644 $(BUILD)/fragsim.bash $(DESTDIR)$(COMPDIR)/fragsim

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/fragsim
	rm -f $(DESTDIR)$(PREFIX)/lib/libfragsim.a \
		$(DESTDIR)$(PREFIX)/include/fragsim.h \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/fragsim.pc
	rm -rf $(DOC_DIR)
	rm -f $(DESTDIR)$(MANDIR)/fragsim.1 $(DESTDIR)$(COMPDIR)/fragsim

# Build directories only: out/ is the main job's result, the user's, and
# `make run` replaces it whole when it has a new one (docs/output-dir.md).
clean:
	rm -rf build build-asan build-asan-clang build-bench build-clang build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
