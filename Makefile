# Postbox: `make run` starts the whole stack locally, `make test` runs the whole suite.
SHELL := /bin/bash

# The Temporal CLI (dev server and Web UI), pinned. Later versions cannot be `go install`ed
# (their go.mod has a replace directive).
TEMPORAL_VERSION := v1.5.1
BIN := $(CURDIR)/bin
TEMPORAL := $(BIN)/temporal
# Temporal's static checker of workflow code (non-determinism: time, goroutines, maps, I/O), pinned.
WORKFLOWCHECK_VERSION := v0.6.0
WORKFLOWCHECK := $(BIN)/workflowcheck
# staticcheck: its checks of bugs, simplifications and dead code (U1000) over the whole module, pinned.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/staticcheck
# Mailpit: the SMTP server (with a web UI and an API) notifications go to in make run, the tests and make
# chaos, pinned.
MAILPIT_VERSION := v1.33.1
MAILPIT := $(BIN)/mailpit
# versitygw: the S3-compatible object store (a gateway serving a folder) that keeps file bytes in make run,
# the tests and make chaos, pinned. Versity releases it about monthly and it installs with `go install`
# (SeaweedFS cannot: replace directives); docs/files.md says why not the others.
VERSITYGW_VERSION := v1.8.0
VERSITYGW := $(BIN)/versitygw
NPM_TOOLS := api/docs/node_modules/.package-lock.json

export POSTBOX_TEMPORAL_CLI := $(TEMPORAL)
export POSTBOX_MAILPIT := $(MAILPIT)
export POSTBOX_VERSITYGW := $(VERSITYGW)

.PHONY: run test bench bench-load fuzz chaos lint docs-check docs-assets build deps clean workflowcheck staticcheck

run: deps $(TEMPORAL) $(MAILPIT) $(VERSITYGW) build
	scripts/run.sh

# The whole suite: vet, gofmt, staticcheck, workflowcheck and every test under the race detector
# (scripts/test.sh), with Chromium for the reference page's test.
test: deps $(TEMPORAL) $(MAILPIT) $(VERSITYGW) $(WORKFLOWCHECK) $(STATICCHECK)
	@scripts/deps.sh chromium
	scripts/test.sh

bench: deps $(TEMPORAL) $(MAILPIT) $(VERSITYGW)
	scripts/test.sh bench

# The API under load over real HTTP (cmd/benchload): `postbox api` on a loopback port driven by wrk (the
# Debian package, installed here; --generator vegeta or both for vegeta as a library) at 32 clients, each endpoint beside its bare SQL, on the database of POSTBOX_DATABASE_URL filled by
# `postbox seed` and `postbox gen` (docs/performance.md). Not part of `make test`.
bench-load: deps build
	@scripts/deps.sh wrk
	go run ./cmd/benchload

# Crashes every component under load and checks that no form task is lost or doubled (cmd/chaos, about
# five minutes, at most ten). Not part of `make test`.
chaos: deps $(TEMPORAL) $(MAILPIT) $(VERSITYGW)
	scripts/chaos.sh

fuzz: deps
	go test -run '^$$' -fuzz FuzzParseFilter -fuzztime 60s ./odata/

# The deployment files (scripts/lint-deploy.sh: docker compose config, Caddyfile, kustomize | kubeconform, the
# dashboard's metric names), the OpenAPI document (Spectral, pinned in api/docs/package.json, ruleset
# api/docs/spectral.yaml) and the reference page (docs-check). Not part of `make test`.
lint: deps $(NPM_TOOLS)
	scripts/lint-deploy.sh
	api/docs/node_modules/.bin/spectral lint --ruleset api/docs/spectral.yaml --fail-severity warn client/openapi.json
	$(MAKE) docs-check

# The reference page GET /api/docs: the committed Redoc bundle is the npm package api/docs/package-lock.json
# pins, and headless Chromium (Debian's, installed when missing) renders every operation of the document
# with nothing refused on its console. `make test` runs the page test too when chromium is on PATH.
docs-check: deps $(TEMPORAL) $(MAILPIT) $(VERSITYGW) $(NPM_TOOLS)
	@scripts/deps.sh chromium
	scripts/docs-assets.sh check
	POSTBOX_TEST_CHROMIUM=$$(command -v chromium) scripts/test.sh -run '^TestDocsPage' ./api/

# Copies the Redoc bundle of the locked version into api/docs (after changing it in package.json).
docs-assets: $(NPM_TOOLS)
	scripts/docs-assets.sh

# The npm tools of the documentation (Redoc, Spectral), as api/docs/package-lock.json pins them; npm writes
# node_modules/.package-lock.json on every install, so a changed lock installs again.
$(NPM_TOOLS): api/docs/package-lock.json
	@scripts/deps.sh npm
	cd api/docs && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

build: deps
	go build -o $(BIN)/postbox ./cmd/postbox

# System packages: libxml2 for XSD validation (cgo), jq for the README's examples, and a PostgreSQL server
# when no database answers.
deps:
	@scripts/deps.sh

# The version is part of the stamp, so changing TEMPORAL_VERSION rebuilds it.
$(TEMPORAL): $(BIN)/.temporal-$(TEMPORAL_VERSION)
$(BIN)/.temporal-$(TEMPORAL_VERSION):
	@echo "building the Temporal CLI $(TEMPORAL_VERSION) into ./bin (the first time takes a few minutes)"
	GOBIN=$(BIN) go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)
	@rm -f $(BIN)/.temporal-* && touch $@

$(MAILPIT): $(BIN)/.mailpit-$(MAILPIT_VERSION)
$(BIN)/.mailpit-$(MAILPIT_VERSION):
	GOBIN=$(BIN) go install github.com/axllent/mailpit@$(MAILPIT_VERSION)
	@rm -f $(BIN)/.mailpit-* && touch $@

$(VERSITYGW): $(BIN)/.versitygw-$(VERSITYGW_VERSION)
$(BIN)/.versitygw-$(VERSITYGW_VERSION):
	GOBIN=$(BIN) go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)
	@rm -f $(BIN)/.versitygw-* && touch $@

workflowcheck: $(WORKFLOWCHECK)
$(WORKFLOWCHECK): $(BIN)/.workflowcheck-$(WORKFLOWCHECK_VERSION)
$(BIN)/.workflowcheck-$(WORKFLOWCHECK_VERSION):
	GOBIN=$(BIN) go install go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION)
	@rm -f $(BIN)/.workflowcheck-* && touch $@

staticcheck: $(STATICCHECK)
$(STATICCHECK): $(BIN)/.staticcheck-$(STATICCHECK_VERSION)
$(BIN)/.staticcheck-$(STATICCHECK_VERSION):
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@rm -f $(BIN)/.staticcheck-* && touch $@

clean:
	scripts/pg.sh stop || true
	rm -rf .data bin api/docs/node_modules
