# onnxparity — one GNU Makefile for the library, the CLI, tests, fuzzers,
# benchmarks and the demo.  Out-of-tree builds under build/ (build-asan/ for
# the sanitizer build, build-fuzz/ for libFuzzer targets).  No configure step.
#
#   make              build/libonnxparity.a, build/libonnxparity.so.VERSION (with
#                     its links .so.MAJOR and .so) and build/onnxparity
#   make test         every test: C unit tests, python cross-checks (under
#                     Debian's torch 1.13, the venvs' torch 2.9 and 2.15), fuzz replay
#   make venv         the torch 2.x virtual environment alone (.venv-torch2/)
#   make venv215      the newest torch's (2.15) environment alone (.venv-torch215/)
#   make typecheck    mypy over the capture package's type hints (part of make test)
#   make asan         the C unit tests under AddressSanitizer + UBSan (after the
#                     sanitizer canary: planted bugs that must be reported)
#   make fuzz         each libFuzzer target for FUZZ_SECONDS seconds
#   make fuzz-replay  replay every committed corpus under ASan + UBSan
#   make bench        benchmarks, side by side with the peers, in ten minutes;
#                     docs/benchmarks.md
#   make bench-full   every benchmark at full size, large models included;
#                     docs/benchmarks-full.md
#   make demo         the main job on a shipped example
#   make format-check clang-format over every C file, no changes made
#   make install      PREFIX=DIR (default /usr/local; DESTDIR too): the tool,
#                     the static and the shared library, the headers,
#                     onnxparity.pc and onnxparity-static.pc
#   make wheel        the pip wheel (tool + shared library + Python package), a
#                     manylinux one with its libraries inside, into build/wheel/
#   make sdist        the source distribution into build/sdist/

CC       ?= gcc
CLANG    ?= clang-14
BUILD    ?= build
PY       := /usr/bin/python3
# torch 2.x (dynamo exporter) for the second run of the capture tests: a
# virtual environment that scripts/setup.sh builds from the hash-pinned lock.
VENV     ?= .venv-torch2
VENV_PY  := $(VENV)/bin/python
VENV_OK  := $(VENV)/.ok
# The newest torch PyPI serves (2.15) for a third run of a focused subset:
# its own environment, built the same way (scripts/requirements-torch215.txt).
VENV215  ?= .venv-torch215
VENV215_OK := $(VENV215)/.ok
OPT      ?= -O2
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   += -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) -Iinclude -Isrc -MMD -MP
LDLIBS   ?= -lzip -lcjson -ljansson -lcrypto -lz -lm -ldl -lpthread

# ONNX Runtime: headers only at build time (the library is dlopen'ed).
# ORT_HOME=DIR replaces the copy that scripts/setup.sh downloads.
ORT_HOME ?= third_party/onnxruntime
ORT_CFLAGS := -I$(ORT_HOME)/include
ifneq ($(ORT_HOME),third_party/onnxruntime)
ORT_CFLAGS += -DONP_ORT_HOME='"$(abspath $(ORT_HOME))"'
endif

LIB_SRC  := $(sort $(wildcard src/*/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
LIB      := $(BUILD)/libonnxparity.a
BIN      := $(BUILD)/onnxparity
SETUP    := $(BUILD)/.setup-ok

# PREFIX etc. for `make install`
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# INSTALL_ORT=0 leaves ONNX Runtime out of the install (then --ort-lib,
# $$ONNXPARITY_ORT_LIB or the system's libonnxruntime.so.1 is used)
INSTALL_ORT ?= 1

# The version is the library's (include/onnxparity/version.h: the tool prints
# the same macro): it names the shared library, libonnxparity.so.M.m.p, whose
# SONAME carries the major number alone (the ABI generation), and goes into
# onnxparity.pc.  VERSION_H is the one place a release changes it.
VERSION_H  := include/onnxparity/version.h
version_part = $(shell sed -n 's/^\#define ONP_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' $(VERSION_H))
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION    := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME     := libonnxparity.so.$(VERSION_MAJOR)
SOLIB      := $(BUILD)/libonnxparity.so.$(VERSION)
# the links a linker (-lonnxparity) and the loader (the SONAME) look for
SOLINKS    := $(BUILD)/$(SONAME) $(BUILD)/libonnxparity.so

.PHONY: install wheel sdist
.PHONY: all setup venv venv215 test test-c typecheck test-py test-py-torch2 test-py-torch215 test-py-asan asan fuzz fuzz-replay fuzz-build bench bench-full demo clean format-check

# Default: the library (static and shared) and the tool.
all: $(SETUP) $(BIN) $(SOLIB) $(SOLINKS)

# Install what is missing (Debian packages, ONNX Runtime); a stamp keeps
# later builds from asking again.
$(SETUP): scripts/setup.sh
	bash scripts/setup.sh all
	@mkdir -p $(@D) && touch $@
setup:
	bash scripts/setup.sh all

# The static library holds every module under src/.
$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

# The library objects are compiled position-independent, so that the same
# objects make the archive and the shared library (the tool, the tests and a
# static user link them as well: -fPIC only costs a shared library's
# indirections, which a static link resolves away).
$(LIB_OBJ): CFLAGS += -fPIC

# The shared library: the same objects, linked against $(LDLIBS) so that it
# names what it needs (DT_NEEDED) and a user links -lonnxparity alone.  It
# exports the public API only (onp_*, scripts/libonnxparity.map).  -z defs
# refuses an undefined symbol at link time, except under a sanitizer, whose
# runtime only an executable carries.  The tool itself links the archive: it
# runs from anywhere without the loader finding this file.
SO_MAP     := scripts/libonnxparity.map
SO_LDFLAGS := -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(SO_MAP)
ifeq ($(findstring -fsanitize,$(LDFLAGS)),)
SO_LDFLAGS += -Wl,-z,defs
endif
$(SOLIB): $(LIB_OBJ) $(SO_MAP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(SO_LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)
$(BUILD)/$(SONAME): $(SOLIB)
	ln -sf $(<F) $@
$(BUILD)/libonnxparity.so: $(BUILD)/$(SONAME)
	ln -sf $(<F) $@

# SARIF's informationUri and helpUri point at the documentation: this tree's
# docs/ by default; `make ONP_DOCS_URL=https://...` for a published copy.
ONP_DOCS_URL ?= file://$(abspath docs)
$(BUILD)/cli/cmd_lint.o: CFLAGS += -DONP_DOCS_URL='"$(ONP_DOCS_URL)"'

# The ORT module needs the ONNX Runtime headers.
$(BUILD)/src/ort/%.o: CFLAGS += $(ORT_CFLAGS)

# The compile and link flags of this build folder, rewritten only when they
# change: every object depends on the file, so a flag added here (as -fPIC
# was) or given on the command line (OPT=..., CC=...) rebuilds what an
# earlier build compiled without it.  Flags set per target are not in it.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW   := $(subst ','"'"',$(CC) $(CFLAGS) $(LDFLAGS))
$(FLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(FLAGS_NOW)' ]; then printf '%s\n' '$(FLAGS_NOW)' > $@; fi
.PHONY: FORCE

# Order-only on the set-up: under make -j no compile starts before the
# headers it includes (cJSON, jansson, libzip, ONNX Runtime) are installed.
$(BUILD)/%.o: %.c $(FLAGS_STAMP) | $(SETUP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# The CLI: a client of the public API only.
$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

# One binary per unit-test file; each prints "N passed, N failed".
$(BUILD)/tests/%: tests/unit/%.c tests/unit/testhelp.h tests/unit/pbenc.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

# test_faults fails the k-th allocation of every reader path: the library's
# malloc family is wrapped at link time (tests/unit/test_faults.c).
# `override` so the wrap survives an LDFLAGS given on the command line (asan).
FAULT_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup,--wrap=strndup
$(BUILD)/tests/test_faults: override LDFLAGS += $(FAULT_WRAP)

# barerepro runs a --save-repro folder under a bare ONNX Runtime: it needs
# ORT's headers (the library is dlopen'ed).
$(BUILD)/tests/tools/barerepro: CFLAGS += $(ORT_CFLAGS)

# Test tools (used by the python tests): small clients of the library.
$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Every test.  Order: fast C units, python cross-checks against onnx/numpy,
# the C units again under ASan + UBSan, the command-line tests (bad input,
# check, gate, report, bisect, lint, diagnose) against the sanitizer build of
# the tool with leak checking, then the fuzz corpora replayed under the
# sanitizers.
test: all test-c typecheck test-py test-py-torch2 test-py-torch215 asan test-py-asan fuzz-replay

# The capture package's type hints checked by Debian's mypy (python/mypy.ini;
# its cache under build/: about a minute cold, seconds after).
typecheck:
	mypy --config-file python/mypy.ini python/onnxparity

test-c: $(TEST_BIN) $(BIN) $(BUILD)/tests/cmpsame
	@bash tests/run_unit.sh $(TEST_BIN)
	$(BUILD)/tests/cmpsame 100
	@if command -v valgrind >/dev/null; then valgrind --tool=none -q $(BUILD)/tests/cmpsame 12; \
	 else echo "cmpsame under valgrind (the AVX2 kernel): SKIPPED, no valgrind"; fi

# The hand-written float32 compare kernels against the portable loop: the
# whole onp_metrics struct must be bytewise equal (bench/cmpsame.c).  Run
# natively (the kernel this CPU picks) and under valgrind, which has no
# AVX-512, so that the AVX2 kernel is checked too.
CMPSAME_FLAGS := -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc
$(BUILD)/tests/compare_portable.o: src/compare/compare.c include/onnxparity/compare.h
	@mkdir -p $(@D)
	$(CC) $(CMPSAME_FLAGS) -DONP_NO_CLONES -Donp_compare=portable_compare \
	    -Donp_compare_set_threads=portable_set_threads -Donp_tol_default=portable_tol_default \
	    -Donp_tol_with=portable_tol_with \
	    -Donp_hist_edges=portable_hist_edges -Donp_compare_topk=portable_compare_topk -c $< -o $@
$(BUILD)/tests/cmpsame: bench/cmpsame.c $(BUILD)/tests/compare_portable.o $(LIB)
	$(CC) $(CMPSAME_FLAGS) -o $@ $^ -lm -lpthread

# A custom-operator library whose kernels crash or hang on negative input:
# what the isolation tests (tests/py/test_isolation.py) load into ORT.
TESTOPS := $(BUILD)/tests/tools/libonp_testops.so
$(TESTOPS): tests/customop/testops.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -fPIC -shared $(ORT_CFLAGS) -o $@ $<

# The consumers the python tests read the tool's output with (tests/py/
# consumers.py): ORT 1.30.0 for the environment-drift tests and
# sarif-multitool, from npm (scripts/setup.sh consumers; 157 MB, once).
CONSUMERS := $(BUILD)/.consumers-ok
$(CONSUMERS): scripts/setup.sh
	bash scripts/setup.sh consumers
	@mkdir -p $(@D) && touch $@

test-py: $(BIN) $(TOOL_BIN) $(TESTOPS) $(CONSUMERS)
	PYTHONPATH=$(abspath python) ONNXPARITY_BIN=$(abspath $(BIN)) \
	    ONNXPARITY_ORT_LIB2=$(abspath third_party/onnxruntime-1.30/lib/libonnxruntime.so.1) \
	    ONNXPARITY_TOOLS=$(abspath $(BUILD)/tests/tools) \
	    $(PY) -m pytest -q -p no:cacheprovider tests/py

# The torch 2.x environment: created on first use (about 4 GB downloaded,
# see README), rebuilt when the lock changes; its stamp holds the lock's hash.
$(VENV_OK): scripts/requirements-torch2.txt scripts/setup.sh
	VENV=$(abspath $(VENV)) bash scripts/setup.sh venv
	@touch $@
venv: $(VENV_OK)

# The capture, zoo and diagnosis tests again under torch 2.x, whose
# torch.onnx.export defaults to the dynamo exporter.  ONNXPARITY_EXPECT_EXPORTER
# makes every capture that ends up with another exporter (a silent fallback
# to legacy) fail its test (tests/py/conftest.py).
TORCH2_PY_TESTS := tests/py/test_capture.py tests/py/test_capture_cli.py tests/py/test_capture_testing.py \
                   tests/py/test_capture_f64.py tests/py/test_capture_fastpaths.py \
                   tests/py/test_capture_accepts.py tests/py/test_capture_defaults.py tests/py/test_quiet_change.py \
                   tests/py/test_zoo.py tests/py/test_diagnose.py tests/py/test_bounded.py tests/py/test_providers.py \
                   tests/py/test_targets.py tests/py/test_chain.py tests/py/test_chain_fused.py \
                   tests/py/test_fp16_search.py \
                   tests/py/test_judge_round3.py tests/py/test_exporter_ab.py tests/py/test_capture_stdout.py \
                   tests/py/test_tie_order.py \
                   $(sort $(wildcard tests/py/test_dynamo*.py))
test-py-torch2: $(VENV_OK) $(BIN) $(TOOL_BIN) $(TESTOPS)
	PYTHONPATH=$(abspath python) ONNXPARITY_BIN=$(abspath $(BIN)) \
	    ONNXPARITY_TOOLS=$(abspath $(BUILD)/tests/tools) ONNXPARITY_EXPECT_EXPORTER=dynamo \
	    $(VENV_PY) -m pytest -q -p no:cacheprovider $(TORCH2_PY_TESTS)

# The newest torch (2.15 with onnxscript 0.7.2, onnx 1.23.2, onnxruntime
# 1.32.0): 2.9 GB downloaded once (README), then a focused subset -- the
# capture defaults, the capture end to end, the zoo, the diagnosis, the
# exporter A/B -- sized to keep `make test` within its time (README: the
# minutes it adds).
$(VENV215_OK): scripts/requirements-torch215.txt scripts/setup.sh
	VENV215=$(abspath $(VENV215)) bash scripts/setup.sh venv215
	@touch $@
venv215: $(VENV215_OK)
TORCH215_PY_TESTS := tests/py/test_capture_defaults.py tests/py/test_capture.py tests/py/test_zoo.py \
                     tests/py/test_diagnose.py tests/py/test_exporter_ab.py tests/py/test_capture_accepts.py
test-py-torch215: $(VENV215_OK) $(BIN) $(TOOL_BIN) $(TESTOPS)
	PYTHONPATH=$(abspath python) ONNXPARITY_BIN=$(abspath $(BIN)) \
	    ONNXPARITY_TOOLS=$(abspath $(BUILD)/tests/tools) ONNXPARITY_EXPECT_EXPORTER=dynamo \
	    $(VENV215)/bin/python -m pytest -q -p no:cacheprovider $(TORCH215_PY_TESTS)

# The unit tests again under AddressSanitizer + UBSan, in build-asan/.
asan: $(SETUP)
	$(MAKE) BUILD=build-asan CC=$(CLANG) OPT="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" LDLIBS="$(LDLIBS) -Wl,--no-as-needed -lstdc++" test-c-asan

# The tool built with ASan + UBSan (by `make asan`) under the python tests
# that drive it through every command; LeakSanitizer on, ONNX Runtime's own
# allocation suppressed (tests/lsan.supp).
ASAN_PY_TESTS := tests/py/test_bad_input.py tests/py/test_bad_inputs.py tests/py/test_check_examples.py tests/py/test_gate.py tests/py/test_ci.py \
                 tests/py/test_report.py tests/py/test_bisect.py tests/py/test_lint.py \
                 tests/py/test_diagnose.py tests/py/test_isolation.py tests/py/test_sweep.py \
                 tests/py/test_outputs.py tests/py/test_help.py tests/py/test_byo.py \
                 tests/py/test_conventions.py tests/py/test_nonfinite_reference.py tests/py/test_save_repro.py \
                 tests/py/test_summary.py
test-py-asan: asan $(TESTOPS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	    PYTHONPATH=$(abspath python) ONNXPARITY_BIN=$(abspath build-asan/onnxparity) \
	    $(PY) -m pytest -q -p no:cacheprovider $(ASAN_PY_TESTS)

# First the sanitizer canary (tests/canary/): planted bugs that ASan and
# UBSan must report, or the build fails; then the unit tests.  The shared
# library is linked too, to show the -fPIC objects link under the sanitizers.
test-c-asan: $(TEST_BIN) $(BIN) $(SOLIB) $(BUILD)/tests/canary
	@bash tests/canary/run.sh $(BUILD)/tests/canary
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 bash tests/run_unit.sh $(TEST_BIN)

# The canary: built with the flags of the build it checks, never linked
# into anything else.
$(BUILD)/tests/canary: tests/canary/canary.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# libFuzzer targets (clang-14), built with ASan + UBSan against the library
# sources compiled for fuzzing.
FUZZ_BUILD := build-fuzz
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -Iinclude -Isrc -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_BIN   := $(FUZZ_SRC:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_SECONDS ?= 60

# The targets reading files share fuzz/fuzz_tmp.h (a per-process scratch
# folder); fuzz_manifest embeds fuzz/manifest_model.inc.  A target may list
# tool sources it needs as extra prerequisites (cli/*.c), linked with it.
# The library is linked without the modules that run ONNX Runtime or build
# on the run (FUZZ_LIB_OUT); src/gate/criteria.c, the criteria parser,
# needs neither and stays in (fuzz_criteria), gate's rules do not.
FUZZ_LIB_OUT := src/ort/% src/bisect/% src/probe/% src/judge/% src/run/% src/doc/% src/api/% src/decode/% \
                src/merge/% $(filter-out src/gate/criteria.c,$(filter src/gate/%,$(LIB_SRC)))
$(FUZZ_BUILD)/%: fuzz/%.c $(LIB_SRC) $(wildcard src/*/*.h include/onnxparity/*.h fuzz/*.h fuzz/*.inc)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) $(ORT_CFLAGS) -Icli -o $@ $< $(filter cli/%.c,$^) \
	    $(filter-out $(FUZZ_LIB_OUT),$(LIB_SRC)) $(LDLIBS)

fuzz-build: $(SETUP) $(FUZZ_BIN)

fuzz-replay: fuzz-build
	@bash fuzz/replay.sh $(FUZZ_BUILD)

fuzz: fuzz-build
	@bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Benchmarks against the peers in the same run (bench/run.sh).  bench: every
# peer ratio at sizes that finish within ten minutes here; writes
# docs/benchmarks.md.  bench-full: every section at full size plus the
# large-model ones (1 GiB models and tensors, the zoo, capture time, a
# 2.17 GiB decoder; about 35 minutes, 12 GiB of memory); writes
# docs/benchmarks-full.md, and needs valgrind for the kernel's instruction
# counts (skipped without it).  BENCH_QUICK=1: smaller still, to check the
# script (writes only to BENCH_OUT=FILE when given).
bench: all wheel
	bash bench/run.sh $(abspath $(BIN))

# The main job on a shipped example.
demo: all
	bash scripts/demo.sh $(abspath $(BIN))

# clang-format, or Debian's versioned clang-format-14 when that is the one installed
CLANG_FORMAT ?= $(shell command -v clang-format || command -v clang-format-14 || echo clang-format)
format-check:
	$(CLANG_FORMAT) --dry-run --Werror $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(FUZZ_SRC) \
	    $(wildcard include/onnxparity/*.h src/*/*.h tests/unit/*.h)

# A path in a .pc file: spaces escaped with a backslash (pkg-config prints
# them so, and the shell reads them back); `\\ ` here is `\ ` after sed.
pc_space := $(subst ,, )
pc_escape = $(subst $(pc_space),\\ ,$(1))

# Install for C users.  The tool looks for ONNX Runtime in
# LIBDIR/onnxparity/ (beside bin/ as ../lib/onnxparity/) after --ort-lib and
# $$ONNXPARITY_ORT_LIB, so the copy installed here is found without a flag.
# Both libraries: the shared one as libonnxparity.so.VERSION with its links
# (SONAME and the -lonnxparity name; no ldconfig run, which a packager's
bench-full: all
	BENCH_FULL=1 bash bench/run.sh $(abspath $(BIN))

# DESTDIR install must not do), the static one beside it.  onnxparity.pc
# links the shared one (Libs.private: what the archive needs, for
# `pkg-config --static` and build systems that pick the archive themselves);
# onnxparity-static.pc names the archive by path, since -lonnxparity means the
# .so to a linker that finds both.
PC_SED = sed -e 's|@PREFIX@|$(call pc_escape,$(PREFIX))|' -e 's|@LIBDIR@|$(call pc_escape,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_escape,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|$(LDLIBS)|'
install: all
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(INCLUDEDIR)/onnxparity" \
	    "$(DESTDIR)$(PKGCONFIGDIR)"
	install -m 755 $(BIN) "$(DESTDIR)$(BINDIR)/onnxparity"
	install -m 644 $(LIB) "$(DESTDIR)$(LIBDIR)/libonnxparity.a"
	install -m 644 $(SOLIB) "$(DESTDIR)$(LIBDIR)/$(notdir $(SOLIB))"
	ln -sf $(notdir $(SOLIB)) "$(DESTDIR)$(LIBDIR)/$(SONAME)"
	ln -sf $(SONAME) "$(DESTDIR)$(LIBDIR)/libonnxparity.so"
	install -m 644 include/onnxparity/*.h "$(DESTDIR)$(INCLUDEDIR)/onnxparity/"
	$(PC_SED) scripts/onnxparity.pc.in > "$(DESTDIR)$(PKGCONFIGDIR)/onnxparity.pc"
	$(PC_SED) scripts/onnxparity-static.pc.in > "$(DESTDIR)$(PKGCONFIGDIR)/onnxparity-static.pc"
	if [ "$(INSTALL_ORT)" = 1 ] && [ -f "$(ORT_HOME)/lib/libonnxruntime.so.1" ]; then \
	    install -d "$(DESTDIR)$(LIBDIR)/onnxparity" && \
	    install -m 644 "$(ORT_HOME)/lib/libonnxruntime.so.1" "$(DESTDIR)$(LIBDIR)/onnxparity/"; fi

# The pip wheel (pyproject.toml; setup.py runs `make` and puts the tool, the
# shared library and ONNX Runtime inside the package): pip's own builder, no
# download, into $(BUILD)/wheel-raw/ (tagged linux_x86_64: it links this
# machine's libraries).  Then auditwheel's repair (WHEEL_TOOLS, set up from
# scripts/requirements-wheel.txt) copies the libraries the tool and the
# shared library link into the wheel (onnxparity.libs/), points their RPATH
# there, strips the binaries and tags the wheel with the oldest manylinux
# policy their symbol versions allow: $(BUILD)/wheel/ (docs/install.md);
# scripts/wheel_graft.py adds zlib, which the policy lets a wheel assume, so
# that the tool needs glibc alone.
WHEEL_TOOLS ?= .venv-wheel
$(WHEEL_TOOLS)/.ok: scripts/requirements-wheel.txt scripts/setup.sh
	WHEEL_TOOLS=$(abspath $(WHEEL_TOOLS)) bash scripts/setup.sh wheeltools
	@touch $@
wheel: all $(WHEEL_TOOLS)/.ok
	rm -rf $(BUILD)/wheel-raw $(BUILD)/wheel
	ONNXPARITY_BUILD=$(BUILD) $(PY) -m pip wheel --no-deps --no-build-isolation --no-index --no-cache-dir \
	    -w $(BUILD)/wheel-raw .
	PATH="$(abspath $(WHEEL_TOOLS))/bin:$$PATH" $(WHEEL_TOOLS)/bin/auditwheel repair --strip \
	    -w $(BUILD)/wheel $(BUILD)/wheel-raw/onnxparity-*.whl
	PATH="$(abspath $(WHEEL_TOOLS))/bin:$$PATH" $(PY) scripts/wheel_graft.py $(BUILD)/wheel/onnxparity-*.whl libz.so.1

# The source distribution (MANIFEST.in: what `make all` needs) into
# $(BUILD)/sdist/; `pip install onnxparity-VERSION.tar.gz` builds the tool from
# it on a machine with the build packages (docs/install.md).
sdist:
	rm -rf $(BUILD)/sdist
	ONNXPARITY_BUILD=$(BUILD) $(PY) setup.py -q sdist -d $(BUILD)/sdist

clean:
	rm -rf build build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
