# dbio: make run (the embedded default), make test, make bench, make fuzz, make install,
# make screenshot (the README's picture of a report).
# Each target installs what it needs (Debian 12, as root) only when missing.

BIN := bin/dbio
# The commit comes from Go's build information (-buildvcs); the build date is
# stamped here because Go records only the commit's time.
BUILDFLAGS = -buildvcs=auto -ldflags "-X main.buildDate=$$(date -u +%Y-%m-%dT%H:%M:%SZ)"
# Resolved once per make invocation by the dependency script, which installs
# Go, gcc and fio (and the database servers for tests) when they are missing.
GO = $(shell tail -n1 .deps-$@ 2>/dev/null)

# make install puts the built dbio on the PATH; PREFIX (and DESTDIR, for
# packaging) move it elsewhere.
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin

# Most tests wait on servers, ssh and steps of a fixed length rather than
# compute: with one test binary per CPU (go test's default) a third of the
# CPUs idled through make test, so one binary more runs, and each runs twice
# as many of its parallel tests. The tests that time themselves keep the
# machine to ordinary tests (testenv.QuietMachine).
CPUS := $(shell nproc 2>/dev/null || echo 2)
TESTPACKAGES = $(shell echo $$(($(CPUS) + 1)))
TESTPARALLEL = $(shell echo $$((2 * $(CPUS))))

.PHONY: run test bench fuzz studies build install vet clean screenshot

build: .deps-build
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/dbio

# The same binary make build makes, so the installed dbio reports the same
# commit and build date.
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/dbio

run: .deps-run
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/dbio
	./$(BIN) quick $(ARGS)

test: .deps-test
	@unformatted=$$($(dir $(GO))gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -p $(TESTPACKAGES) -parallel $(TESTPARALLEL) -timeout 45m ./...

bench: .deps-bench
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/dbio
	./scripts/bench.sh $(GO)

# Every native fuzz target for FUZZTIME each (default 30s), new inputs
# minimized for at most FUZZMINIMIZE (default 2s); FUZZ picks targets by a
# grep pattern on "package FuzzName".
fuzz: .deps-fuzz
	./scripts/fuzz.sh $(GO) $(or $(FUZZ),.)

# docs/report.png, the README's picture of a report: a real short dbio quick
# rendered by headless Chromium (about a minute and a half).
screenshot: .deps-screenshot
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/dbio
	./scripts/screenshot.sh ./$(BIN) docs/report.png

# Every example suite at the scale its comments give for this machine, and
# the table of their findings (seed figure, dbio's figure, verdict) written
# to docs/studies.md. Needs root (storage classes are block-I/O cgroups) and
# takes about an hour on two cores.
studies: .deps-studies
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/dbio
	./scripts/studies.sh

# The dependency script prints the go binary on its last line.
.deps-%: FORCE
	@./scripts/deps.sh $* > $@

clean:
	rm -rf bin .deps-*

FORCE:
