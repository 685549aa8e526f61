# Postbox: `make run` starts the whole stack locally, `make test` runs the whole suite.
SHELL := /bin/bash

# The Temporal CLI (dev server and Web UI), pinned. Later versions cannot be `go install`ed
# (their go.mod has a replace directive).
TEMPORAL_VERSION := v1.5.1
BIN := $(CURDIR)/bin
TEMPORAL := $(BIN)/temporal

export POSTBOX_TEMPORAL_CLI := $(TEMPORAL)

.PHONY: run test bench fuzz lint build deps clean

run: deps $(TEMPORAL) build
	scripts/run.sh

test: deps $(TEMPORAL)
	scripts/test.sh

bench: deps $(TEMPORAL)
	scripts/test.sh bench

fuzz: deps
	go test -run '^$$' -fuzz FuzzParseFilter -fuzztime 60s ./odata/

lint: deps
	go vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }

build: deps
	go build -o $(BIN)/postbox ./cmd/postbox

# System packages: libxml2 for XSD validation (cgo), and a PostgreSQL server when no database answers.
deps:
	@scripts/deps.sh

# The version is part of the stamp, so changing TEMPORAL_VERSION rebuilds it.
$(TEMPORAL): $(BIN)/.temporal-$(TEMPORAL_VERSION)
$(BIN)/.temporal-$(TEMPORAL_VERSION):
	@echo "building the Temporal CLI $(TEMPORAL_VERSION) into ./bin (the first time takes a few minutes)"
	GOBIN=$(BIN) go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_VERSION)
	@rm -f $(BIN)/.temporal-* && touch $@

clean:
	scripts/pg.sh stop || true
	rm -rf .data bin
