# Thin wrapper over CMake.
#   make demo   builds the `adia` tool alone (CMake target adia_cli: the
#               library and the program, nothing else) and runs the main job;
#               a few lines of progress, the full log in $(BUILD)/build.log
#               (make demo V=1 shows it all)
#   make test   builds everything (tests, examples, benchmarks, MPI programs)
#               and runs every test through ctest
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
V ?= 0

.PHONY: all deps configure build tool demo test install clean

all: build

# What the configure step installs first: everything (make test, build), or
# only the packages the build needs (make demo: no Open MPI or librsb
# download before a demo that needs neither).  DEPS=true: nothing.
DEPS ?= sh scripts/install-deps.sh
DEPS_ARGS ?=
demo tool: DEPS_ARGS = --required

deps:
	@$(DEPS) $(DEPS_ARGS)

# Configure once; the log stays in $(BUILD)/configure.log, one line says
# what was found.
$(BUILD)/CMakeCache.txt: | deps
	@mkdir -p $(BUILD)
	@echo "== configuring $(BUILD)/ (Release$(if $(CMAKE_FLAGS), $(CMAKE_FLAGS)); log: $(BUILD)/configure.log)"
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >$(BUILD)/configure.log 2>&1 \
	    || { cat $(BUILD)/configure.log; rm -f $(BUILD)/CMakeCache.txt; exit 1; }
	@sed -n '/librsb/d; s/^-- adia: /   /p' $(BUILD)/configure.log

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The tool only.  Progress: the build's own [ NN%] line each time it passes
# a quarter; on failure the end of the log.
tool: configure
ifeq ($(V),0)
	@echo "== building $(BUILD)/adia (the tool only; make test builds the rest; log: $(BUILD)/build.log)"
	@start=$$(date +%s); \
	{ cmake --build $(BUILD) --target adia_cli -j $(JOBS) 2>&1; echo $$? >$(BUILD)/build.status; } \
	    | tee $(BUILD)/build.log \
	    | awk '/^\[ *[0-9]+%\]/ { p = substr($$0, 2, 3) + 0; \
	                              if (p >= next_q) { print "   " substr($$0, 1, 100); fflush(); \
	                                                 next_q = (int(p / 25) + 1) * 25 } }'; \
	st=$$(cat $(BUILD)/build.status 2>/dev/null || echo 1); \
	if [ "$$st" != 0 ]; then \
	    tail -n 20 $(BUILD)/build.log; \
	    echo "== build failed (exit $$st); the full log: $(BUILD)/build.log"; exit 1; \
	fi; \
	echo "== built $(BUILD)/adia in $$(( $$(date +%s) - start )) s"
else
	cmake --build $(BUILD) --target adia_cli -j $(JOBS)
endif

demo: tool
	$(if $(filter /%,$(BUILD)),,./)$(BUILD)/adia demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf $(BUILD)
