# SPDX-License-Identifier: MIT
# A thin front end over CMake. `make` builds build/toolgate; `make test`
# installs what is missing, builds, runs every test under ctest, then again
# under AddressSanitizer + UndefinedBehaviorSanitizer; `make demo` runs a real
# model turn from examples/ on the embedded defaults.
BUILD      ?= build
SAN_BUILD  ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
CTEST      = ctest --output-on-failure -j $(JOBS)
ifneq ($(CI),)
CMAKE_ARGS += -DTG_WERROR=ON
endif

.PHONY: all build deps test test-plain test-sanitize demo bench fuzz install clean format checksrc

all: build

deps:
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	@$(MAKE) --no-print-directory test-plain
	@$(MAKE) --no-print-directory test-sanitize

test-plain: build
	scripts/checksrc
	scripts/check-format
	cd $(BUILD) && $(CTEST)

test-sanitize:
	cmake -S . -B $(SAN_BUILD) -DTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS)
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && $(CTEST)

demo: deps build
	@scripts/demo.sh $(BUILD)/toolgate

bench: build
	@scripts/deps.sh --bench
	@scripts/bench.sh $(BUILD)

fuzz:
	@scripts/deps.sh --fuzz
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DTG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@scripts/fuzz.sh $(FUZZ_BUILD) $${FUZZ_SECONDS:-60}

install: build
	cmake --install $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

checksrc:
	scripts/checksrc
	scripts/check-format

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
