# kueue-ks — hand-written GNU Makefile.
#
#   make            build bin/kueue-ks (and every other binary under cmd/)
#   make test       everything CI checks: format, cppcheck, the real-stack build (Go), unit tests
#                   under ASan+UBSan, fuzz smoke, checks, e2e on the devhub, the real-stack tier
#   make run        build and start the operator (see README); REAL=1: on the real stack
#   make real-up / real-down   the real stack (real Kubernetes, Kueue, kwok) in the background
#   make real-bench-multikueue [N=200]   kueue-ks vs Kueue's MultiKueue dispatch, real stack
#   make bench      build and run the benchmarks
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS (default 30)
#   make valgrind   unit tests under valgrind (-O0 build)
#   make fmt / lint clang-format in place / format check + cppcheck + banned functions
#
# Build modes live in separate object trees (build/<mode>): rel, san, vg, fuzz.
# Quiet unless V=1.

VERSION := 0.1.0
MODE ?= rel
OBJDIR := build/$(MODE)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Install missing Debian packages once per top-level make invocation.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter clean fmt help,$(MAKECMDGOALS)),)
ifneq ($(KKS_SKIP_DEPS),1)
DEPS_RC := $(shell scripts/deps.sh >&2; echo $$?)
ifneq ($(DEPS_RC),0)
$(error build dependencies are missing and could not be installed: run scripts/deps.sh as root)
endif
endif
endif
endif

CC := gcc
WARN := -Wall -Wextra -Werror -Wstrict-prototypes -Wshadow -Wno-unused-parameter \
        -Wno-missing-field-initializers
CFLAGS := -std=c17 -D_GNU_SOURCE -g -I. -MMD -MP $(WARN) -DKKS_VERSION='"$(VERSION)"'
LDFLAGS :=
LIBS := -lcurl -lyaml -lev -lssl -lcrypto -ljansson -lmicrohttpd -lgnutls -lpthread -lm
# Only what links libdevhub.a takes SQLite: bin/kueue-ks does not (test/checks/link.sh).
DEVHUB_LIBS := -lsqlite3
TEST_LIBS := -lcmocka

ifeq ($(MODE),rel)
CFLAGS += -O2
BINDIR := bin
else ifeq ($(MODE),san)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS += -O1 $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
BINDIR := $(OBJDIR)/bin
else ifeq ($(MODE),vg)
CFLAGS += -O0 -DKKS_NO_SLAB
BINDIR := $(OBJDIR)/bin
else ifeq ($(MODE),fuzz)
CC := clang
WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS := -std=c17 -D_GNU_SOURCE -g -I. -MMD -MP $(WARN) -DKKS_VERSION='"$(VERSION)"' \
          -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=fuzzer,address,undefined
BINDIR := $(OBJDIR)/bin
else
$(error unknown MODE=$(MODE): use rel, san, vg or fuzz)
endif

# ---- sources -------------------------------------------------------------
LIB_SRCS := $(shell find pkg controllers -name '*.c' 2>/dev/null | sort)
DEVHUB_SRCS := $(shell find devhub -name '*.c' 2>/dev/null | sort)
CMDS := $(notdir $(shell find cmd -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort))
TEST_SRCS := $(sort $(wildcard test/unit/test_*.c))
SUPPORT_SRCS := $(sort $(wildcard test/support/*.c))
FUZZ_SRCS := $(sort $(wildcard test/fuzz/fuzz_*.c))
# every bench/<name>/ with C sources (bench/multikueue is a script: make real-bench-multikueue)
BENCHES := $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard bench/*/*.c)))))

obj = $(patsubst %.c,$(OBJDIR)/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS))
LIB := $(OBJDIR)/libkks.a
DEVHUB_OBJS := $(call obj,$(DEVHUB_SRCS))
DEVHUB_LIB := $(OBJDIR)/libdevhub.a
SUPPORT_OBJS := $(call obj,$(SUPPORT_SRCS))
CMD_BINS := $(addprefix $(BINDIR)/,$(CMDS))
TEST_BINS := $(patsubst test/unit/%.c,$(OBJDIR)/test/%,$(TEST_SRCS))
FUZZ_BINS := $(patsubst test/fuzz/%.c,$(OBJDIR)/fuzz/%,$(FUZZ_SRCS))
BENCH_BINS := $(addprefix $(BINDIR)/bench-,$(BENCHES))

.PHONY: all bins test unit-bins unit e2e checks run dev-up dev-down bench fuzz fuzz-bins fuzz-smoke \
        valgrind fmt fmt-check lint clean help manifests-check test-k3d real-build real-up \
        real-down real-test real-bench-multikueue
.DEFAULT_GOAL := all
.SECONDARY:

all: bins
bins: $(CMD_BINS) $(BENCH_BINS)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
$(DEVHUB_LIB): $(DEVHUB_OBJS)
$(LIB) $(DEVHUB_LIB):
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The devhub (libdevhub.a, on top of libkks.a) goes only into the binaries that serve it or
# measure it, and into every test and fuzz target.
DEVHUB_BINS := $(BINDIR)/kueue-ks-devhub $(BINDIR)/bench-devhub
$(DEVHUB_BINS): $(DEVHUB_LIB)
$(DEVHUB_BINS): XLIBS := $(DEVHUB_LIB)
$(DEVHUB_BINS): XSYS := $(DEVHUB_LIBS)

# Each directory cmd/<name>/ is one binary; each bench/<name>/ is bin/bench-<name>.
# Static pattern rules: as plain pattern rules, bin/% also matched bin/bench-* (make 4.3).
.SECONDEXPANSION:
$(CMD_BINS): $(BINDIR)/%: $$(call obj,$$(wildcard cmd/%/*.c)) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(XLIBS) $(LIB) $(XSYS) $(LIBS)

$(BENCH_BINS): $(BINDIR)/bench-%: $$(call obj,$$(wildcard bench/%/*.c)) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(XLIBS) $(LIB) $(XSYS) $(LIBS)

$(OBJDIR)/test/%: $(OBJDIR)/test/unit/%.o $(SUPPORT_OBJS) $(DEVHUB_LIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(DEVHUB_LIB) $(LIB) $(TEST_LIBS) $(DEVHUB_LIBS) \
	  $(LIBS)

$(OBJDIR)/fuzz/%: $(OBJDIR)/test/fuzz/%.o $(DEVHUB_LIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(DEVHUB_LIB) $(LIB) $(DEVHUB_LIBS) $(LIBS)

# The text rendering of `kueue-ks status` lives next to its command; its tests link it.
$(OBJDIR)/test/test_sv $(OBJDIR)/fuzz/fuzz_sv: $(call obj,cmd/kueue-ks/sv.c)

# bench-dispatch's status-return figures and wait (pure): their tests link them.
$(OBJDIR)/test/test_stret: $(call obj,bench/dispatch/stret.c)

unit-bins: $(TEST_BINS)
fuzz-bins: $(FUZZ_BINS)

# ---- test ----------------------------------------------------------------
# make test: format check + cppcheck (lint), unit tests under ASan/UBSan, fuzz corpus replay,
# the checks of test/checks/, then the end-to-end scenarios against release binaries.
test:
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)scripts/realstack/tier.sh --build
	$(Q)$(MAKE) --no-print-directory MODE=san unit-bins
	$(Q)$(MAKE) --no-print-directory MODE=rel bins
	$(Q)scripts/run-tests.sh unit build/san/test
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)scripts/run-tests.sh checks test/checks
	$(Q)scripts/run-tests.sh e2e test/e2e
	$(Q)scripts/realstack/tier.sh

unit:
	$(Q)$(MAKE) --no-print-directory MODE=san unit-bins
	$(Q)scripts/run-tests.sh unit build/san/test $(T)

e2e:
	$(Q)$(MAKE) --no-print-directory MODE=rel bins
	$(Q)scripts/run-tests.sh e2e test/e2e $(T)

checks:
	$(Q)$(MAKE) --no-print-directory MODE=rel bins
	$(Q)scripts/run-tests.sh checks test/checks $(T)

valgrind:
	$(Q)$(MAKE) --no-print-directory MODE=vg unit-bins
	$(Q)KKS_VALGRIND=1 scripts/run-tests.sh unit build/vg/test $(T)

# ---- fuzz ----------------------------------------------------------------
FUZZ_SECONDS ?= 30
fuzz:
	$(Q)$(MAKE) --no-print-directory MODE=fuzz fuzz-bins
	$(Q)scripts/run-fuzz.sh build/fuzz/fuzz/fuzz_ $(FUZZ_SECONDS)

# Replays the seed corpora plus a fixed-seed batch of mutations (deterministic, so a CI
# failure reproduces with the same command) to exercise every parser in CI.
fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory MODE=fuzz fuzz-bins
	$(Q)FUZZ_RUNS=20000 scripts/run-fuzz.sh build/fuzz/fuzz/fuzz_ 20

# ---- run / bench -----------------------------------------------------------
run: bins
ifeq ($(REAL),1)
	$(Q)scripts/realstack/build.sh
	$(Q)scripts/realstack/stack.sh run
else
	$(Q)scripts/dev.sh run $(ARGS)
endif

dev-up: bins
	$(Q)scripts/dev.sh up $(ARGS)

dev-down:
	$(Q)scripts/dev.sh down

# Each bench with its defaults, then the shapes docs/performance.md quotes:
# placement at the dispatch shape with 10,000 reservations held, dispatch at N=10,000
# (bench-scale's defaults are the goal's shape: 10,000 workloads, 10,000 pods per worker),
# then bench-scale --real on a real stack of its own (N = 1,000, 1,000 pods per worker;
# SKIP without the real-stack components).
bench: bins
	$(Q)for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done
	$(Q)echo "== $(BINDIR)/bench-placement (2 clusters x 4 nodes, 10000 held)"; \
	  $(BINDIR)/bench-placement --clusters 2 --nodes 4 --jobs 10000 --node-cpu 100000
	$(Q)echo "== $(BINDIR)/bench-dispatch --n 10000"; $(BINDIR)/bench-dispatch --n 10000
	$(Q)echo "== $(BINDIR)/bench-scale --real (bench/scale/real.sh: a real stack of its own)"; \
	  bench/scale/real.sh

# ---- real stack: real Kubernetes, Kueue and kwok as local processes ---------
# Components built from the Go modules pinned in test/realstack/tools/ (build/realstack/bin).
real-build:
	$(Q)scripts/realstack/build.sh

real-up: bins real-build
	$(Q)scripts/realstack/stack.sh up

real-down:
	$(Q)scripts/realstack/stack.sh down

# kueue-ks against Kueue's own MultiKueue, two fresh real stacks, N jobs each (docs/performance.md).
real-bench-multikueue: bins
	$(Q)bench/multikueue/run.sh --n $(or $(N),200)

# The test/e2e/real_*.sh scenarios (also the last step of make test); T=name filters.
real-test: bins
	$(Q)scripts/realstack/tier.sh $(T)

# ---- real clusters --------------------------------------------------------
# Renders config/default and dry-runs it against a devhub (also part of make test).
manifests-check: bins
	$(Q)scripts/manifests-check.sh

# The workload e2e scenarios against k3d clusters from scripts/k3d/up.sh (skips without Docker).
test-k3d: bins
	$(Q)KKS_K3D=1 bash test/k3d/scenarios.sh

# ---- style ---------------------------------------------------------------
FMT_SRCS = $(shell find pkg controllers devhub cmd test bench -name '*.[ch]' 2>/dev/null | sort)
fmt:
	$(Q)clang-format -i $(FMT_SRCS)

fmt-check:
	$(Q)clang-format --dry-run -Werror $(FMT_SRCS)
	$(Q)scripts/check-banned.sh $(FMT_SRCS)

lint: fmt-check
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	  --std=c11 -I. -D_GNU_SOURCE --library=scripts/cppcheck.cfg --suppress=missingIncludeSystem \
	  --inline-suppr \
	  pkg controllers devhub cmd

clean:
	rm -rf build bin

help:
	@sed -n '1,16p' Makefile

-include $(LIB_OBJS:.o=.d) $(DEVHUB_OBJS:.o=.d) $(SUPPORT_OBJS:.o=.d) $(TEST_SRCS:test/unit/%.c=$(OBJDIR)/test/unit/%.d) \
         $(FUZZ_SRCS:test/fuzz/%.c=$(OBJDIR)/test/fuzz/%.d) \
         $(patsubst %.c,$(OBJDIR)/%.d,$(wildcard cmd/*/*.c bench/*/*.c))
