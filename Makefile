# Reins: `make run` and `make test` set up a fresh Debian/Ubuntu machine,
# build, and run. Everything else here is a building block of those two.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Pin the Go build cache before anything moves XDG_CACHE_HOME (Mesa writes
# its shader cache there, and tests point it at a temp dir).
export GOCACHE := $(shell go env GOCACHE 2>/dev/null)
export GOFLAGS := -buildvcs=false

VERSION := $(shell sed -n 's/^ *Version *= *"\(.*\)"/\1/p' FyneApp.toml)
LDFLAGS := -s -w -X github.com/reinshq/reins/app.Version=$(VERSION)
BIN := $(CURDIR)/bin/reins
# The server build: the same reins without the tray, no cgo, one static
# binary that needs no display libraries (for servers, and the companion's
# own memory figures).
SERVER_BIN := $(CURDIR)/bin/server/reins
CHROMIUM ?= /usr/lib/chromium/chromium

# Debian packages: build (Fyne needs cgo, GL and X11 headers), browsers and
# display for the end-to-end and UI tests, and a real Secret Service.
APT_BUILD := gcc pkg-config libgl1-mesa-dev xorg-dev libxkbcommon-dev
APT_RUN   := dbus dbus-x11 gnome-keyring
APT_TEST  := chromium xvfb xauth imagemagick x11-utils xdotool libsecret-tools firefox-esr

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help deps deps-run deps-test build run check test test-unit test-race test-ui test-node test-keychain test-e2e \
	conformance bench bench-peers soak fuzz lint vet staticcheck fmt clean extension-firefox \
	deps-dist dist dist-check dist-deb dist-tarxz dist-server dist-windows dist-extension test-dist screenshots

# Every public target, one line each (a test checks that none is missing).
help:
	@echo "Start here:"
	@echo "  make run              install what is missing, build, start Reins (headless when there is no display)"
	@echo "  make check            the inner loop, under 2 minutes on a warm cache: gofmt, vet, staticcheck,"
	@echo "                        the unit tests of every package that needs no browser, and the extension's node tests"
	@echo "  make test             install what is missing, build, run every test (what CI runs)"
	@echo "  make help             this list"
	@echo "Building:"
	@echo "  make build            bin/reins, and bin/server/reins (the server build: no tray, no cgo, static)"
	@echo "  make extension-firefox  build/firefox, the loadable Firefox extension"
	@echo "  make deps             install the build, run and test dependencies (deps-run, deps-test)"
	@echo "  make fmt              gofmt every Go file"
	@echo "  make clean            remove bin/ and the test scratch dir"
	@echo "The parts of check and test:"
	@echo "  make lint             gofmt check, go vet and staticcheck (also: make vet, make staticcheck)"
	@echo "  make test-unit        check's Go tests: every package that needs no browser, display or keychain"
	@echo "  make test-race        the companion's tests with the race detector"
	@echo "  make test-ui          the tray UI, app and command tests"
	@echo "  make test-node        the extension's node tests"
	@echo "  make test-keychain    the token store against a real Secret Service"
	@echo "  make test-e2e         real reins, Chromium and Firefox with the real extension"
	@echo "  make conformance      the official MCP conformance suite against /mcp"
	@echo "  make bench            the benchmarks, with the speed table (p50 beside the direct-CDP floor and the target)"
	@echo "  make bench-peers      the same ops through chrome-devtools-mcp, Playwright MCP and Reins, with the ratios"
	@echo "  make soak             the fault suite for SOAK (30m) with SOAK_AGENTS (10) agents, sampling memory"
	@echo "  make fuzz             every fuzz target for FUZZTIME (30s) each"
	@echo "  make screenshots      the README's pictures of the tray app"
	@echo "Packaging (packaging/README.md):"
	@echo "  make dist             every installer into dist/ (dist-deb, dist-tarxz, dist-server, dist-windows, dist-extension)"
	@echo "  make dist-check       the extension folder carries FyneApp.toml's version"
	@echo "  make deps-dist        the packaging tools"
	@echo "  make test-dist        build the installers signed with a throwaway key, install and run them"

# apt-get only runs when a package is missing, so repeated runs are quick.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq; \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps-run:
	@command -v go >/dev/null || { echo "Go 1.26 or newer is required: https://go.dev/dl/"; exit 1; }
	$(call apt_install,$(APT_BUILD) $(APT_RUN))

deps-test: deps-run
	$(call apt_install,$(APT_TEST))
	@command -v node >/dev/null || { echo "installing nodejs"; $(SUDO) apt-get install -y -qq nodejs; }
	@[ "$$(node -p 'require("$(TEST_TMP)/npm/node_modules/web-ext/package.json").version' 2>/dev/null)" = "$(WEB_EXT_VERSION)" ] || \
		{ echo "installing web-ext $(WEB_EXT_VERSION)"; command -v npm >/dev/null || $(SUDO) apt-get install -y -qq npm; \
		  npm install --prefix $(TEST_TMP)/npm --no-audit --no-fund --loglevel=error web-ext@$(WEB_EXT_VERSION); }

deps: deps-test

build: deps-run
	@mkdir -p bin
	go build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/reins
	CGO_ENABLED=0 go build -tags nogui -ldflags '$(LDFLAGS)' -o $(SERVER_BIN) ./cmd/reins
	@echo "built $(BIN) and $(SERVER_BIN) $(VERSION)"

run: build
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
		echo "no display: starting reins headless"; \
		exec $(BIN) headless --keyring file; \
	else \
		exec $(BIN); \
	fi

# Unit and in-process tests of every package, with the race detector where
# it matters (the daemon) and without cgo for the UI (Fyne's test driver
# needs no display).
TEST_TMP := $(CURDIR)/.test-tmp
TEST_ENV := XDG_CACHE_HOME=$(TEST_TMP)/cache REINS_BIN=$(BIN) REINS_CHROMIUM=$(CHROMIUM)
# The same with the server build under test (bench, bench-peers, soak).
SERVER_TEST_ENV := $(subst REINS_BIN=$(BIN),REINS_BIN=$(SERVER_BIN),$(TEST_ENV))

test: deps-test build lint test-node test-race test-ui test-keychain test-e2e conformance test-dist
	@echo "all tests passed"

# The inner loop. Go's test cache reruns only the packages a change
# touched; staticcheck and the node tests run beside the Go tests.
check:
	@$(MAKE) --no-print-directory vet
	@$(MAKE) --no-print-directory -j3 -O staticcheck test-unit test-node
	@echo "check passed"

lint: vet staticcheck

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	@# Every rule with a plain name is a public target: phony, and in make help.
	@help=$$($(MAKE) --no-print-directory -s help); phony=" $$(sed -n '/^\.PHONY:/,/[^\\]$$/p' $(firstword $(MAKEFILE_LIST)) | tr -d '\\' | sed 's/^\.PHONY://' | tr '\n\t' '  ') "; \
	for t in $$(grep -oE '^[a-z][a-z0-9-]*:([^=]|$$)' $(firstword $(MAKEFILE_LIST)) | cut -d: -f1 | sort -u); do \
		case "$$phony" in *" $$t "*) ;; *) echo "Makefile: $$t is not in .PHONY"; exit 1;; esac; \
		grep -qE "(^|[ (,])$$t([ ),]|$$)" <<<"$$help" || { echo "Makefile: make help does not name $$t"; exit 1; }; \
	done
	go vet ./...
	CGO_ENABLED=0 go vet -tags nogui ./app/... ./cmd/...

# Pinned in go.mod's tool block; its default checks include the unused-code
# ones (U1000).
staticcheck:
	go tool staticcheck ./...

test-node:
	node --test extension/test/

RACE_PKGS = $$(go list ./companion/... | grep -v -e /keychaintest -e /e2e)

# Every package whose tests need no browser, display or Secret Service:
# the end-to-end tests, the dev browser and the tool engine (both drive a
# real Chromium), the desktop tests (Xvfb and bin/reins), the keychain and
# the packaging tests (tagged) are left to make test.
# TEST_FLAGS=-count=1 reruns every package, cached or not.
UNIT_PKGS = $$(go list ./... | grep -v -e /e2e -e /devbrowser -e /companion/tools -e /keychaintest -e /desktoptest -e /disttest)

test-unit:
	@mkdir -p $(TEST_TMP)/cache
	$(TEST_ENV) go test $(TEST_FLAGS) -timeout 10m $(UNIT_PKGS)
	@# The tool engine's fuzz seeds run against a fake extension: no browser.
	$(TEST_ENV) go test $(TEST_FLAGS) -timeout 5m -run '^Fuzz' ./companion/tools/
	@# The command line as the server build has it (no tray, no cgo).
	CGO_ENABLED=0 go test $(TEST_FLAGS) -tags nogui -timeout 5m ./app/

test-race:
	@mkdir -p $(TEST_TMP)/cache
	$(TEST_ENV) go test -race -count=1 -timeout 20m $(RACE_PKGS)

# The GUI side: Fyne's test driver needs no display. app/ links the real
# driver, so it shares the cgo build cache of bin/reins (no -race there);
# then app/ again as the server build compiles it.
test-ui:
	@mkdir -p $(TEST_TMP)/cache
	$(TEST_ENV) go test -count=1 -timeout 10m ./ui/... ./assets/... ./app/... ./cmd/...
	$(TEST_ENV) CGO_ENABLED=0 go test -count=1 -tags nogui -timeout 5m ./app/

# The keychain tests need a real Secret Service: a private session bus with
# an unlocked gnome-keyring, torn down when the tests end.
test-keychain:
	@mkdir -p $(TEST_TMP)/cache
	@rm -rf $(TEST_TMP)/keyring && mkdir -p $(TEST_TMP)/keyring
	$(TEST_ENV) XDG_DATA_HOME=$(TEST_TMP)/keyring dbus-run-session -- sh -c 'echo -n reins-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && go test -count=1 -timeout 5m ./companion/tokens/keychaintest/'

# Real reins headless, real Chromium with the real extension/, and real
# Firefox with build/firefox (the Firefox variables are defined below).
test-e2e: build extension-firefox
	@mkdir -p $(TEST_TMP)/cache
	$(TEST_ENV) REINS_FIREFOX=$(FIREFOX) REINS_FIREFOX_EXT=$(FIREFOX_BUILD) REINS_WEB_EXT=$(WEB_EXT) \
		go test -count=1 -timeout 30m ./companion/e2e/...

# The official MCP conformance suite against /mcp of a real reins headless
# (the server build; test-e2e runs the desktop build) with a real agent
# token. npm installs the suite and a Node 22 binary into
# ~/.cache/reins/conformance (never globally); companion/mcp/conformance/
# baseline.yml lists the scenarios that do not apply to Reins, and why.
conformance: build
	@command -v npm >/dev/null || { echo "installing npm"; $(SUDO) apt-get update -qq; $(SUDO) apt-get install -y -qq --no-install-recommends npm; }
	REINS_BIN=$(SERVER_BIN) bash companion/mcp/conformance/run.sh

# The companion's figures are the server build's (a server runs it; the
# desktop build carries the tray and its libraries in the same process, and
# app/desktoptest measures that one idle).
bench: build
	@mkdir -p $(TEST_TMP)/cache
	$(SERVER_TEST_ENV) go test -run '^$$' -bench . -benchmem -benchtime 2s ./companion/hub/ ./companion/e2e/... ./companion/tools/...
	$(TEST_ENV) go test -run '^$$' -bench . -benchmem -benchtime 2s ./app/desktoptest/

# The peers, pinned, under .test-tmp (never globally), each driving a fresh
# headless Chromium of its own. Not part of make test or CI.
PEERS_DIR := $(TEST_TMP)/peers
CDM_VERSION := 1.11.0
PLAYWRIGHT_MCP_VERSION := 0.0.83

bench-peers: build
	@mkdir -p $(TEST_TMP)/cache
	@[ "$$(node -p 'require("$(PEERS_DIR)/node_modules/chrome-devtools-mcp/package.json").version' 2>/dev/null)" = "$(CDM_VERSION)" ] && \
	 [ "$$(node -p 'require("$(PEERS_DIR)/node_modules/@playwright/mcp/package.json").version' 2>/dev/null)" = "$(PLAYWRIGHT_MCP_VERSION)" ] || \
		npm install --prefix $(PEERS_DIR) --no-audit --no-fund --loglevel=error \
			chrome-devtools-mcp@$(CDM_VERSION) @playwright/mcp@$(PLAYWRIGHT_MCP_VERSION)
	$(SERVER_TEST_ENV) REINS_PEERS_DIR=$(PEERS_DIR) go test -tags peers -run '^$$' -bench '^BenchmarkPeers$$' -benchtime 1x -timeout 30m ./companion/e2e/

# The fault suite (companion/e2e/faults_test.go) for SOAK: agents on
# Chromium through the extension and on the dev browser while the injector
# stops the worker, closes tabs, pauses, crashes renderers (and kills the
# companion once); the companion's RSS, goroutines and tab states are
# sampled every minute and must stay flat. It runs the server build, as bench
# does.
SOAK ?= 30m
SOAK_AGENTS ?= 10
soak: build
	@mkdir -p $(TEST_TMP)/cache
	$(SERVER_TEST_ENV) REINS_SOAK=$(SOAK) REINS_SOAK_AGENTS=$(SOAK_AGENTS) go test -tags soak -count=1 -v -timeout 0 -run '^TestSoak$$' ./companion/e2e/

# Every fuzz target, one after another, each for FUZZTIME; their seeds run
# as ordinary tests in make check and make test. A crasher lands in the
# package's testdata/fuzz/ and stays there as a seed.
FUZZTIME ?= 30s
FUZZ_TARGETS := ./companion/hub:FuzzHandshake ./companion/hub:FuzzLinkFrames ./companion/nativemsg:FuzzReadMessage \
	./companion/nativemsg:FuzzServe ./companion/tools:FuzzToolArguments ./companion:FuzzAdminRoutes ./companion/live:FuzzViewerMessages
fuzz:
	@mkdir -p $(TEST_TMP)/cache
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzzing $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		$(TEST_ENV) go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}" || exit 1; \
	done

# The README's pictures of the tray app: the real binary under Xvfb with fake
# browsers, real MCP agents and a paired reference backend.
screenshots: deps-test build
	@mkdir -p $(TEST_TMP)/cache
	$(TEST_ENV) REINS_SCREENSHOTS=$(CURDIR)/assets/screenshots go test -count=1 -run '^(TestDashboardScreenshots|TestFirstRunGuide)$$' ./app/desktoptest/
	REINS_SCREENSHOTS=$(CURDIR)/assets/screenshots go test -count=1 -run '^TestGuideLoadUnpackedPicture$$' ./ui/
	convert assets/screenshots/guide-load-unpacked.png -strip -colors 256 -define png:compression-level=9 PNG8:assets/screenshots/guide-load-unpacked.png

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin $(TEST_TMP)

# ---------------------------------------------------------------------------
# Packaging (packaging/README.md): `make dist` builds every installer into
# dist/, `make test-dist` builds them signed with a throwaway certificate
# into $(TEST_TMP)/dist and installs, inspects and runs them.

DIST ?= $(CURDIR)/dist
# Build tools live in the repository's build cache, never in the person's
# GOPATH/bin, and at pinned versions; the version is in the path, so bumping
# it installs the new one.
TOOLS := $(CURDIR)/bin/tools
FYNE_CLI_VERSION := v1.7.4
GOWINRES_VERSION := v0.3.3
FYNE_CLI := $(TOOLS)/fyne-$(FYNE_CLI_VERSION)/fyne
GOWINRES := $(TOOLS)/go-winres-$(GOWINRES_VERSION)/go-winres
FYNE_BUILD := $(shell sed -n 's/^ *Build *= *\([0-9]*\).*/\1/p' FyneApp.toml)
APP_ID := $(shell sed -n 's/^ *ID *= *"\(.*\)"/\1/p' FyneApp.toml)
APT_DIST := dpkg-dev binutils xz-utils desktop-file-utils gcc-mingw-w64-x86-64 nsis p7zip-full osslsigncode openssl
# Only the tests: Wine runs the real installer, reins.exe and the uninstaller.
APT_DIST_TEST := wine64

deps-dist: deps-run
	$(call apt_install,$(APT_DIST))

$(FYNE_CLI):
	GOBIN=$(dir $@) go install fyne.io/tools/cmd/fyne@$(FYNE_CLI_VERSION)

$(GOWINRES):
	GOBIN=$(dir $@) go install github.com/tc-hib/go-winres@$(GOWINRES_VERSION)

# FyneApp.toml is the one version; the extension folder must already carry
# it (Chromium loads that folder as is), so a mismatch fails the build.
dist-check:
	go run ./packaging/cmd/extpack check

dist-deb: deps-dist dist-check build
	packaging/linux/build-deb.sh $(BIN) $(DIST)

# fyne's own Linux archive (extract, then `sudo make install`).
dist-tarxz: dist-check build $(FYNE_CLI)
	@mkdir -p $(DIST)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && cd "$$tmp" && \
	$(FYNE_CLI) package --os linux --src $(CURDIR)/cmd/reins --exe $(BIN) --name Reins --app-id $(APP_ID) \
		--app-version $(VERSION) --app-build $(FYNE_BUILD) --icon $(CURDIR)/assets/icon.png --release && \
	mv Reins.tar.xz $(DIST)/reins-$(VERSION)-linux-amd64.tar.xz
	@echo "built $(DIST)/reins-$(VERSION)-linux-amd64.tar.xz"

# The server build alone (no tray, no cgo, static): reins-server/reins.
dist-server: dist-check build
	@mkdir -p $(DIST)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && mkdir "$$tmp/reins-server" && \
	cp $(SERVER_BIN) "$$tmp/reins-server/reins" && \
	tar -cJf $(DIST)/reins-server-$(VERSION)-linux-amd64.tar.xz -C "$$tmp" --owner=0 --group=0 reins-server
	@echo "built $(DIST)/reins-server-$(VERSION)-linux-amd64.tar.xz"

dist-windows: deps-dist dist-check $(GOWINRES)
	GOWINRES=$(GOWINRES) packaging/windows/build.sh $(DIST)

dist-extension: dist-check
	go run ./packaging/cmd/extpack chrome -o $(DIST)/reins-extension-chrome-$(VERSION).zip
	go run ./packaging/cmd/extpack firefox -o $(DIST)/reins-extension-firefox-$(VERSION).xpi

dist: dist-deb dist-tarxz dist-server dist-windows dist-extension
	@ls -l $(DIST)

# The throwaway certificate and CRX key exist only for this run; signing
# with them proves the signing paths end to end, and osslsigncode verifies
# against the certificate. A release sets REINS_CRX_KEY to the extension's
# own key (never in the repository).
TEST_DIST := $(TEST_TMP)/dist
TEST_SIGN := $(TEST_TMP)/sign

test-dist: deps-dist deps-test
	$(call apt_install,$(APT_DIST_TEST))
	go test -count=1 ./packaging/...
	@rm -rf $(TEST_DIST) $(TEST_SIGN) && mkdir -p $(TEST_SIGN) $(TEST_TMP)/cache
	openssl req -x509 -newkey rsa:3072 -nodes -days 2 -subj "/CN=Reins throwaway test signing" \
		-addext "extendedKeyUsage=codeSigning" -keyout $(TEST_SIGN)/key.pem -out $(TEST_SIGN)/cert.pem 2>/dev/null
	go run ./packaging/cmd/extpack newkey -o $(TEST_SIGN)/crx.pem >/dev/null
	SIGN_CERT=$(TEST_SIGN)/cert.pem SIGN_KEY=$(TEST_SIGN)/key.pem REINS_CRX_KEY=$(TEST_SIGN)/crx.pem \
		$(MAKE) --no-print-directory dist DIST=$(TEST_DIST)
	$(TEST_ENV) REINS_DIST_DIR=$(TEST_DIST) REINS_SIGN_CA=$(TEST_SIGN)/cert.pem \
		go test -tags disttest -count=1 -timeout 20m -v ./packaging/disttest/
	@rm -rf $(TEST_SIGN)

# ---------------------------------------------------------------------------
# Firefox: build/firefox/ is the loadable extension folder, made by extpack
# from the one source in extension/ (the manifest variant, plus the tool
# engine's page helper that the Firefox adapter injects). Load it from
# about:debugging, or with `web-ext run --source-dir build/firefox`, which is
# what the end-to-end tests do (web-ext is a test dependency in .test-tmp).

FIREFOX ?= /usr/bin/firefox-esr
FIREFOX_BUILD := $(CURDIR)/build/firefox
WEB_EXT_VERSION := 10.7.0
WEB_EXT := $(TEST_TMP)/npm/node_modules/.bin/web-ext

extension-firefox:
	@rm -rf $(FIREFOX_BUILD)
	go run ./packaging/cmd/extpack firefox-dir -o $(FIREFOX_BUILD) -data-collection none
