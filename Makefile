# wormhole-sim: the Makefile wraps Meson + Ninja and installs what they need.
#   make deps   install missing Debian packages (apt-get as root; else print the command)
#   make build  configure (release, -O2) and compile into build/
#   make run    build and simulate the default scenario, printing a summary
#   make test   format check, then the Check test runner (its summary is the last line)
#   make bench  fat-tree permutation benchmarks: build/bench.json, build/bench.md
#   make format reformat the sources with clang-format

PACKAGES := meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev libxml2-dev check \
            clang-format gnuplot-nox python3 libxml2-utils time \
            g++ libns3-dev libgsl-dev libsqlite3-dev
BUILD := build
WHSIM := $(BUILD)/whsim
DEFAULT_SCENARIO := scenarios/quickstart.xml
SOURCES = $(shell git ls-files '*.c' '*.h' '*.cc' 2>/dev/null || find modules tools tests bindings-c -name '*.[ch]' -o -name '*.cc')

.PHONY: deps build run test check-format format bench clean

deps:
	@missing=$$(for p in $(PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "missing packages; run:"; echo "  sudo apt-get install -y" $$missing; exit 1; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release -Dns3=enabled

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	$(WHSIM) run $(DEFAULT_SCENARIO) --out $(BUILD)/out/default

check-format:
	@clang-format --dry-run --Werror $(SOURCES) && echo "format check: ok"

format:
	clang-format -i $(SOURCES)

test: build check-format
	cd $(BUILD) && WH_SOURCE_ROOT=$(CURDIR) ./tests/runner

bench: build
	WH_SOURCE_ROOT=$(CURDIR) ./tools/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) out
