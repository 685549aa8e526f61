# syntax=docker/dockerfile:1
# Postbox: one image for every role (api, worker, migrate, seed). Build from the repository root:
#   docker build -t postbox:dev .
# Both stages use the same Debian release (trixie), so the libxml2 the binary was linked against (cgo,
# XSD validation) is the one the runtime image installs.

FROM golang:1.26-trixie AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libxml2-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -ldflags='-s -w' -o /out/postbox ./cmd/postbox

FROM debian:trixie-slim
# libxml2: XSD validation; ca-certificates: TLS to the token issuer's JWKS URL, OTLP and PostgreSQL;
# curl: only for the Compose health checks (Kubernetes probes use httpGet).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libxml2 ca-certificates curl tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /srv --no-create-home --shell /usr/sbin/nologin postbox
COPY --from=build /out/postbox /usr/local/bin/postbox
# The demo dataset (postbox seed --file /srv/demo/demo.json), its XSDs and test certificates.
# Never trust the demo's certificates or token issuer in production: set POSTBOX_TOKEN_* and POSTBOX_TLS_*.
COPY deploy/demo /srv/demo
WORKDIR /srv
USER 10001:10001
ENV POSTBOX_HTTP_ADDR=0.0.0.0:8080 \
    POSTBOX_ADMIN_ADDR=0.0.0.0:9090 \
    POSTBOX_LOG_FORMAT=json
# 8080 HTTP API, 8443 TLS with enterprise certificates (when POSTBOX_TLS_ADDR is set), 9090 /metrics.
EXPOSE 8080 8443 9090
ENTRYPOINT ["postbox"]
CMD ["api"]
