# livetable: the table daemon of a live-casino blackjack table.
# `make help` lists the targets. `make run` and `make test` install what they
# need by themselves (Go modules; mosquitto from apt-get when absent).

GO        ?= go
PKGS      ?= ./...
TESTFLAGS ?= -race -shuffle=on -timeout 12m
DIST      ?= dist
# The version every binary prints with --version (cmd/internal/buildinfo):
# the release tag (vX.Y.Z) or 0.0.0+git<commit date>.<commit>.
VERSION    ?= $(shell v=$$(git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//'); \
  [ -n "$$v" ] && echo "$$v" || echo "0.0.0+git$$(git log -1 --format=%cd --date=format:%Y%m%d%H%M%S 2>/dev/null).$$(git rev-parse --short HEAD 2>/dev/null)")
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := github.com/livetable/livetable/cmd/internal/buildinfo
LDFLAGS   ?= -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE)
STATICCHECK_VERSION ?= v0.8.2

# apt-get needs root; use sudo when we are not root and it exists.
SUDO := $(shell [ "$$(id -u)" -ne 0 ] && command -v sudo)

.PHONY: pgo modtidy contract deps-node deps-asyncapi monitoring deps-promtool package package-check deps-nfpm help run test bench fuzz lint check build deps deps-go deps-mosquitto deps-nats deps-chromium deps-clients scenarios clean

help: ## this list
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# Built, then run. On a terminal, Ctrl-C is sent to the terminal's
# foreground process group: make's own, so make itself died of the SIGINT
# (status 130, "make: *** Interrupt") over tabled's clean stop. A job-control
# shell (bash -m) runs tabled in a process group of its own and makes that
# group the foreground one: Ctrl-C reaches tabled alone, tabled stops
# cleanly and exits 0, and so does make. Without a terminal (CI, nohup),
# or in the background of one (make run &: the recipe's process group is
# not the terminal's foreground group, per /proc/PID/stat's pgrp and
# tpgid; a job-control shell there would stop on SIGTTOU) there is no
# foreground group to hand over and tabled runs as before.
# TestMakeRunCtrlC, TestMakeRunInBackground and TestMakeRunWithoutTerminal
# (cmd/tabled) drive the three through a real pty.
RUN_CMD = $(DIST)/run/tabled --demo --log-format console --data-dir $${DATA_DIR:-var/demo} $(RUNFLAGS)
run: deps-go deps-clients ## a whole demo table: simulated shoe on a pty, GPIO, embedded broker, dealer, players
	@$(GO) build -o $(DIST)/run/tabled ./cmd/tabled
	@if [ -t 0 ] && command -v bash >/dev/null 2>&1 && \
	  stat=$$(cat /proc/$$$$/stat 2>/dev/null) && set -- $${stat##*) } && [ "$$3" = "$$6" ]; then \
	  exec bash -m -c '"$$@"; exit $$?' run $(RUN_CMD); \
	else \
	  exec $(RUN_CMD); \
	fi

test: deps-go deps-mosquitto deps-nats deps-chromium contract monitoring modtidy ## gofmt, go vet and every test with -race (real mosquitto, pty and headless Chromium)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) test $(TESTFLAGS) $(PKGS)

sim: deps-go ## the deterministic simulation (docs/simulation.md): SEEDS seeds (default 10000) on every core, SEED=s replays one with its trace; SIMFLAGS=-power-cuts-only
	@$(GO) build -o $${TMPDIR:-/tmp}/livetable-tablesim ./cmd/tablesim
	@$${TMPDIR:-/tmp}/livetable-tablesim $(SIMFLAGS) $(if $(SEED),-seed $(SEED),-seeds $${SEEDS:-10000})

# bjsim's build reads cmd/bjsim/default.pgo (Go's profile-guided
# optimisation); this remakes it from a run of bjsim rtp on every game.
pgo: deps-go ## remake cmd/bjsim/default.pgo, the profile bjsim's build is optimised with, from a bjsim rtp run
	$(GO) run ./cmd/bjsim rtp --game all --rounds 20000000 --cpuprofile $(CURDIR)/cmd/bjsim/default.pgo

bench: deps-go ## benchmarks and the figures the issues ask for
	$(GO) test -run '^$$' -bench . -benchmem ./table/round/ ./table/sidebets/ ./table/strategy/ ./firmware-protocols/shoeproto/
	$(GO) test -run '^$$' -bench Analyze -cpu 1 ./table/strategy/exact/
	$(GO) test -run '^$$' -bench Append -benchmem -benchtime=200x ./table/journal/
	$(GO) test -run '^$$' -bench Recovery -benchmem -benchtime=1x ./table/journal/
	$(GO) test -run '^$$' -bench Restart100kRounds -benchtime=1x -timeout 10m ./table/
	$(GO) test -run '^$$' -bench Restart7Seat -benchtime=20x -timeout 30m ./table/
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=3x ./shoereader/
	$(GO) test -run '^$$' -bench 'EventToSubscriber|BareHop|OutboxAppend' -benchmem -benchtime=200x ./studio/mqttlink/
	$(GO) test -run '^$$' -bench StudioTables -benchtime=1x -timeout 30m ./cmd/tabled/
	$(GO) test -run '^$$' -bench CardToState -benchtime=10000x -count=3 -timeout 20m ./cmd/tabled/
	$(GO) test -run '^$$' -bench '^BenchmarkDaemonRSS$$' -benchtime=36000x -timeout 20m ./cmd/tabled/
	$(GO) test -run '^$$' -bench '^BenchmarkCrowdDaemonRSS$$' -benchtime=300x -timeout 20m ./cmd/tabled/
	$(GO) test -run '^$$' -bench CommandFlood -benchtime=1x -timeout 10m ./cmd/tabled/
	$(GO) test -run '^$$' -bench CrowdRound10k -benchtime=1000x -timeout 30m ./cmd/tabled/
	$(GO) test -run '^$$' -bench . -benchmem ./table/rtp/ ./studio/console/
	$(GO) test -run '^$$' -bench Round000 -cpu 1 -pgo=$(CURDIR)/cmd/bjsim/default.pgo ./table/rtp/
	$(GO) run ./cmd/bjsim sidebets --game all
	$(GO) run ./cmd/bjsim rtp --game 000

fuzz: deps-go ## run every fuzz target briefly (FUZZTIME, default 20s each)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-20s} $$pkg || exit 1; \
	  done; \
	done

lint: deps-go ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@command -v staticcheck >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/staticcheck" ] || \
	  $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" staticcheck $(PKGS)

check: lint build ## lint and the cross-builds for the table boxes

build: deps-go ## static binaries (CGO_ENABLED=0) for linux/amd64, linux/arm64, linux/arm v7 in dist/
	@for target in linux/amd64 linux/arm64 linux/arm/7; do \
	  os=$${target%%/*}; rest=$${target#*/}; arch=$${rest%%/*}; arm=$${rest#*/}; \
	  [ "$$arm" = "$$rest" ] && arm=; \
	  out=$(DIST)/$$os-$$arch$${arm:+v$$arm}; mkdir -p $$out; \
	  echo "building $$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOARM=$$arm $(GO) build -trimpath -tags production -ldflags '$(LDFLAGS)' -o $$out/ ./cmd/... || exit 1; \
	done

scenarios: deps-go ## run the hand-written scenarios through tablectl and compare each with its expected result (fails on a difference), and the engine's golden record (20,000 random rounds per game)
	$(GO) test -count=1 -run TestEngineGolden ./table/round/
	@$(GO) build -o $${TMPDIR:-/tmp}/tablectl-scenarios ./cmd/tablectl
	@fail=0; n=0; for f in testdata/scenarios/*.json; do n=$$((n+1)); \
	  if ! $${TMPDIR:-/tmp}/tablectl-scenarios scenario --check < $$f > /dev/null; then echo "FAIL $$f"; fail=$$((fail+1)); fi; \
	done; echo "scenarios: $$n run, $$fail failed"; test $$fail -eq 0

deps: deps-go deps-mosquitto deps-nats deps-chromium ## install everything the tests need

deps-go:
	@$(GO) mod download

# mosquitto is needed by the integration tests (a real broker process).
deps-mosquitto:
	@if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then \
	  echo "installing mosquitto (apt-get)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto mosquitto-clients >/dev/null; \
	fi

# nats-server (JetStream, MQTT listener) runs the 3-node cluster tests.
deps-nats:
	@if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then \
	  echo "installing nats-server (apt-get) for the cluster tests"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null; \
	fi

# Debian's chromium runs the console's browser tests (headless).
deps-chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing chromium (apt-get) for the console's browser tests"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# mosquitto_sub lets you watch the demo; best effort, the demo runs without it.
deps-clients:
	@if ! command -v mosquitto_sub >/dev/null 2>&1; then \
	  echo "installing mosquitto-clients (apt-get) so you can watch with mosquitto_sub"; \
	  ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto-clients >/dev/null) || \
	  echo "could not install mosquitto-clients: the demo runs anyway"; \
	fi

clean: ## remove build output and demo data
	rm -rf $(DIST) var/demo

# The contract (docs/asyncapi.yaml) checked by the official AsyncAPI CLI
# (`asyncapi validate`, with the @asyncapi/parser and governance rules the
# code generators use): any error or warning fails, and a document with a
# broken $ref must fail too (studio/wire/testdata/broken-asyncapi.yaml), so
# the check cannot pass by validating nothing. The CLI is installed from npm
# into a cache outside the repository (node and npm from apt-get when
# absent); 6.2.0 declares node >= 24 but runs on Debian's node 20, which
# make test runs it on. Its anonymous usage metrics are off (CI=true) and
# its node-config files live in the cache. `go test ./studio/wire` checks
# that the document is the one the wire types generate.
ASYNCAPI_CLI_VERSION ?= 6.2.0
ASYNCAPI_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/livetable/asyncapi-cli-$(ASYNCAPI_CLI_VERSION)
ASYNCAPI = env CI=true SUPPRESS_NO_CONFIG_WARNING=1 NODE_CONFIG_DIR=$(ASYNCAPI_DIR)/config \
	ASYNCAPI_METRICS_CONFIG_PATH=$(ASYNCAPI_DIR)/analytics.json $(ASYNCAPI_DIR)/node_modules/.bin/asyncapi

contract: deps-asyncapi ## validate docs/asyncapi.yaml with the official AsyncAPI CLI (0 errors, 0 warnings)
	$(ASYNCAPI) validate docs/asyncapi.yaml --fail-severity warn --score
	@if $(ASYNCAPI) validate studio/wire/testdata/broken-asyncapi.yaml --fail-severity warn >/dev/null 2>&1; then \
	  echo "contract: asyncapi validate passed a document with a broken \$$ref: the check checks nothing"; exit 1; \
	fi

deps-node:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "installing nodejs and npm (apt-get) for the AsyncAPI CLI"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi

deps-asyncapi: deps-node
	@if [ ! -x $(ASYNCAPI_DIR)/node_modules/.bin/asyncapi ]; then \
	  echo "installing @asyncapi/cli@$(ASYNCAPI_CLI_VERSION) (npm) into $(ASYNCAPI_DIR), about a minute"; \
	  mkdir -p $(ASYNCAPI_DIR)/config && echo '{}' >$(ASYNCAPI_DIR)/config/production.json && cd $(ASYNCAPI_DIR) && \
	  npm install --silent --no-audit --no-fund --no-save --prefix . @asyncapi/cli@$(ASYNCAPI_CLI_VERSION) >/dev/null || exit 1; \
	fi

# The Prometheus alert rules, checked and unit-tested by promtool (Debian's
# prometheus package; installed when absent). Grafana's dashboard is
# checked by studio/console's tests (every metric it uses exists).
monitoring: deps-promtool ## promtool check and test the alert rules in deploy/prometheus
	promtool check rules deploy/prometheus/livetable.rules.yml
	cd deploy/prometheus && promtool test rules livetable.rules.test.yml

deps-promtool:
	@if ! command -v promtool >/dev/null 2>&1; then \
	  echo "installing prometheus (apt-get) for promtool"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	  $(SUDO) systemctl disable --now prometheus >/dev/null 2>&1 || true; \
	fi

# Debian packages (nfpm, a Go module installed with go install; v2.45.0 is
# the newest whose dependencies are all on the module proxy).
NFPM_VERSION ?= v2.45.0
NFPM := $(shell $(GO) env GOPATH)/bin/nfpm

package: build deps-nfpm ## .deb files of tabled, tablectl, the unit and the examples for amd64, arm64 and armhf in dist/
	@for a in amd64:amd64 arm64:arm64 armv7:arm7; do dir=$${a%%:*}; arch=$${a#*:}; \
	  sed -e "s#\$${PKG_ARCH}#$$arch#g" -e "s#\$${PKG_DIR}#$(DIST)/linux-$$dir#g" -e 's#\$${PKG_VERSION}#$(VERSION)#g' \
	    deploy/package/nfpm.yaml > $(DIST)/nfpm-$$arch.yaml && \
	  $(NFPM) package -f $(DIST)/nfpm-$$arch.yaml -p deb -t $(DIST)/ || exit 1; \
	done
	@ls -l $(DIST)/*.deb

deps-nfpm:
	@[ -x $(NFPM) ] && $(NFPM) --version 2>&1 | grep -q '$(NFPM_VERSION:v%=%)' || \
	  { echo "installing nfpm $(NFPM_VERSION) (go install)"; $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION); }

# The documented install check (root, on a Debian amd64 machine): the
# package installs with dpkg, systemd verifies the unit as installed (the
# binary in place, every directive known), the binaries run, and the
# package is removed again (its data and config stay).
package-check: package ## install the amd64 .deb with dpkg -i, verify the unit with systemd-analyze, remove it
	$(SUDO) dpkg -i $(DIST)/livetable_*_amd64.deb
	@mkdir -p $(DIST)/check
	systemd-analyze verify /lib/systemd/system/tabled@.service tabled@check.service 2>&1 | tee $(DIST)/check/verify.log
	@if [ -s $(DIST)/check/verify.log ]; then echo "systemd-analyze verify is not clean"; $(SUDO) dpkg -r livetable; exit 1; fi
	/usr/bin/tabled --version && /usr/bin/tablectl --version
	id livetable
	$(SUDO) dpkg -r livetable

# go.mod and go.sum as go mod tidy leaves them (direct dependencies not
# marked indirect, nothing unused).
modtidy: ## fail when go.mod or go.sum is not tidy
	$(GO) mod tidy -diff
