# wormhole-sim: the Makefile wraps Meson + Ninja and installs what they need.
#   make deps   install missing Debian packages (apt-get as root; else print the command)
#   make deps-cluster  also the packages `whsim sweep` drives and the sweep suite tests
#               with (GNU parallel, Slurm, munge); without them those cases print SKIPPED
#   make build  configure (release, -O2) and compile into build/
#   make run    build and compare the default scenario on the exact engine and under
#               Wormhole (whsim compare), printing the iteration time, speedup and errors
#   make test   format check, function lengths, doc links and the README's commands
#               (tools/check-*.py), then the
#               Check test runner (its summary is the last line)
#   make bench  fat-tree permutation benchmarks: build/bench.json, build/bench.md; the
#               sweep of 8 equal cells with -j 1 and -j 2: build/bench-sweep.json
#   make format reformat the sources with clang-format
#   make sanitize  debug build with AddressSanitizer + UBSan (build-sanitize/), whole suite
#   make fuzz      seeded mutations of the scenario and SimAI corpus through the loaders,
#                  on the sanitizer build (FUZZ_CASES cases, FUZZ_SEED)
#   make sanitize-slice  what CI runs before make test (about 3 minutes on 2 cores): a
#                  sanitizer build without ns-3 (build-sanitize-slice/), the hardening,
#                  bad-inputs, simai, fcg, memo-db and network suites, and 5000 fuzz cases

PACKAGES := meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev libxml2-dev \
            libjson-glib-dev check clang-format gnuplot-nox python3 libxml2-utils time \
            g++ libns3-dev libgsl-dev libsqlite3-dev
CLUSTER_PACKAGES := parallel slurm-wlm munge
BUILD := build
WHSIM := $(BUILD)/whsim
DEFAULT_SCENARIO := scenarios/quickstart.xml
SOURCES = $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null || find modules tools tests bindings-c -name '*.[ch]' -o -name '*.cc')

SANITIZE_BUILD := build-sanitize
SLICE_BUILD := build-sanitize-slice
SANITIZE_OPTS := --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
FUZZ_CORPUS := scenarios tests/scenarios tests/bad-inputs
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CK_TIMEOUT_MULTIPLIER=10
FUZZ_CASES ?= 6000
FUZZ_SEED ?= 1
SLICE_PLOT_CASES := 1000
SLICE_MEMO_CASES := 5000

.PHONY: deps deps-cluster build run test check-format check-source format bench clean sanitize sanitize-build fuzz \
        sanitize-slice

# Installs the packages of $(1) that are missing (apt-get as root; else prints the command).
define install_missing
	@missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "missing packages; run:"; echo "  sudo apt-get install -y" $$missing; exit 1; \
	fi
endef

deps:
	$(call install_missing,$(PACKAGES))

deps-cluster:
	$(call install_missing,$(CLUSTER_PACKAGES))

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release -Dns3=enabled

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	$(WHSIM) compare $(DEFAULT_SCENARIO) --out $(BUILD)/out/default

check-format:
	@clang-format --dry-run --Werror $(SOURCES) && echo "format check: ok"

format:
	clang-format -i $(SOURCES)

check-source:
	@python3 tools/check-function-length.py
	@python3 tools/check-doc-links.py
	@python3 tools/check-doc-commands.py

test: build check-format check-source
	cd $(BUILD) && WH_SOURCE_ROOT=$(CURDIR) ./tests/runner

$(SANITIZE_BUILD)/build.ninja:
	meson setup $(SANITIZE_BUILD) $(SANITIZE_OPTS) -Dns3=enabled

$(SLICE_BUILD)/build.ninja:
	meson setup $(SLICE_BUILD) $(SANITIZE_OPTS) -Dns3=disabled

sanitize-build: deps $(SANITIZE_BUILD)/build.ninja
	ninja -C $(SANITIZE_BUILD)

sanitize: sanitize-build
	cd $(SANITIZE_BUILD) && $(SANITIZE_ENV) WH_SOURCE_ROOT=$(CURDIR) ./tests/runner

fuzz: sanitize-build
	$(SANITIZE_ENV) $(SANITIZE_BUILD)/fuzz-loaders --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) \
	  $(FUZZ_CORPUS)
	$(SANITIZE_ENV) $(SANITIZE_BUILD)/fuzz-plot --cases $(FUZZ_CASES) --seed $(FUZZ_SEED)
	$(SANITIZE_ENV) $(SANITIZE_BUILD)/fuzz-memo --cases $(FUZZ_CASES) --seed $(FUZZ_SEED)

sanitize-slice: deps $(SLICE_BUILD)/build.ninja
	ninja -C $(SLICE_BUILD) whsim fuzz-loaders fuzz-plot fuzz-memo tests/runner
	for suite in hardening bad-inputs simai fcg memo-db network; do \
	  (cd $(SLICE_BUILD) && $(SANITIZE_ENV) CK_RUN_SUITE=$$suite WH_SOURCE_ROOT=$(CURDIR) \
	    ./tests/runner) || exit 1; \
	done
	$(SANITIZE_ENV) $(SLICE_BUILD)/fuzz-loaders --cases 5000 --seed $(FUZZ_SEED) $(FUZZ_CORPUS)
	$(SANITIZE_ENV) $(SLICE_BUILD)/fuzz-plot --cases $(SLICE_PLOT_CASES) --seed $(FUZZ_SEED)
	$(SANITIZE_ENV) $(SLICE_BUILD)/fuzz-memo --cases $(SLICE_MEMO_CASES) --seed $(FUZZ_SEED)

bench: build
	WH_SOURCE_ROOT=$(CURDIR) ./tools/bench.sh $(BUILD)
	WH_SOURCE_ROOT=$(CURDIR) ./tools/bench-sweep.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(SLICE_BUILD) out
