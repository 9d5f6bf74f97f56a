# SPDX-License-Identifier: MIT
# A thin front end over CMake. `make` builds build/toolgate; `make test`
# installs what is missing (Debian packages, then the interop tests' npm
# packages from tests/interop/package-lock.json), builds, runs every test
# under ctest, then again under AddressSanitizer + UndefinedBehaviorSanitizer;
# `make demo` runs a real model turn from examples/ on the embedded defaults.
#
# The tests' time bounds are multiplied by TIME_SCALE (from the environment's
# TG_TEST_TIME_SCALE, default 1) in the plain stage and by SAN_TIME_SCALE
# (3x that) in the sanitizer stage; TG_TEST_DATA_DIR, when set, says where
# the shared test data is (README, "Tests").
#
# `make install` installs under PREFIX (default /usr/local), below DESTDIR
# when set (a staging directory); `make deb` builds the Debian package
# (build/toolgate_VERSION_ARCH.deb) and checks it (scripts/deb.sh).
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD      ?= build
SAN_BUILD  ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# Tests at a time in the plain and the sanitizer stage (default: JOBS).
TEST_JOBS     ?= $(JOBS)
SAN_TEST_JOBS ?= $(TEST_JOBS)
CTEST      = ctest --output-on-failure
TIME_SCALE     ?= $(or $(TG_TEST_TIME_SCALE),1)
SAN_TIME_SCALE ?= $(shell echo $$(( $(TIME_SCALE) * 3 )))
ifneq ($(CI),)
CMAKE_ARGS += -DTG_WERROR=ON
endif
ifneq ($(TG_TEST_DATA_DIR),)
CMAKE_ARGS += -DTG_TEST_DATA_DIR=$(TG_TEST_DATA_DIR)
endif

.PHONY: all build deps interop-deps test ci test-plain test-sanitize build-plain \
  configure-sanitize build-sanitize demo bench fuzz build-fuzzers fuzz-run install deb clean format checksrc

all: build

deps:
	@scripts/deps.sh

# The MCP TypeScript SDK, the conformance suite and a Node 22 binary, pinned
# in tests/interop/package-lock.json; `npm ci` only when node_modules does
# not hold that lockfile's install (scripts/npm-deps.sh). Installed before
# any test runs, so no test's time includes it.
interop-deps: deps
	@scripts/npm-deps.sh tests/interop

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The source checks (checksrc, clang-format) and the sanitizer build run at
# nice 19 while the plain stage's tests run: many of them wait (on
# subprocesses, sockets, a model server's scripted delays) and leave a core
# idle, which the compiler takes; when a test wants the CPU the compiler
# gets almost none (README, "Tests": the tests pass with both cores busy).
# Their output follows the plain stage's summary; the sanitizer stage's
# tests start when both are done. OVERLAP names what runs so (`make ci`
# adds the fuzzers' build), BETWEEN what runs between the stages (`make
# ci`: the fuzz pass, which has both cores to itself).
OVERLAP ?= checksrc build-sanitize
BETWEEN ?=
test: deps interop-deps
	@$(MAKE) --no-print-directory build-plain
	@$(MAKE) --no-print-directory configure-sanitize
	@nice -n 19 $(MAKE) --no-print-directory $(OVERLAP) \
	  >$(SAN_BUILD)/make-build.log 2>&1 & build=$$!; \
	  (cd $(BUILD) && $(CTEST) -j $(TEST_JOBS)); tests=$$?; \
	  wait $$build; built=$$?; cat $(SAN_BUILD)/make-build.log; \
	  [ $$tests -eq 0 ] && [ $$built -eq 0 ]
ifneq ($(BETWEEN),)
	@$(MAKE) --no-print-directory $(BETWEEN)
endif
	cd $(SAN_BUILD) && $(CTEST) -j $(SAN_TEST_JOBS)

# What CI runs (.ci/run): `make test` with a fuzz pass of FUZZ_SECONDS a
# target between its stages, its fuzzers built beside the sanitizer build.
ci: deps interop-deps
	@scripts/deps.sh --fuzz
	@$(MAKE) --no-print-directory test OVERLAP="checksrc build-sanitize build-fuzzers" \
	  BETWEEN=fuzz-run

test-plain: build-plain checksrc
	cd $(BUILD) && $(CTEST) -j $(TEST_JOBS)

test-sanitize: build-sanitize
	cd $(SAN_BUILD) && $(CTEST) -j $(SAN_TEST_JOBS)

build-plain:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS) -DTG_TEST_TIME_SCALE=$(TIME_SCALE)
	cmake --build $(BUILD) -j $(JOBS)

configure-sanitize:
	cmake -S . -B $(SAN_BUILD) -DTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	  $(CMAKE_ARGS) -DTG_TEST_TIME_SCALE=$(SAN_TIME_SCALE)

build-sanitize: configure-sanitize
	cmake --build $(SAN_BUILD) -j $(JOBS)

demo: deps build
	@scripts/demo.sh $(BUILD)/toolgate

bench: build
	@scripts/deps.sh
	@scripts/bench.sh $(BUILD)

fuzz:
	@scripts/deps.sh --fuzz
	@$(MAKE) --no-print-directory build-fuzzers
	@$(MAKE) --no-print-directory fuzz-run

build-fuzzers:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DTG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers

fuzz-run:
	@FUZZ_JOBS=$${FUZZ_JOBS:-$(JOBS)} TG_TEST_TIME_SCALE=$(SAN_TIME_SCALE) scripts/fuzz.sh $(FUZZ_BUILD) $${FUZZ_SECONDS:-60}

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

deb: build
	@scripts/deb.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

checksrc:
	scripts/checksrc
	scripts/check-format

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
