# skillgate — see README.md.
GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
BIN       := bin
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
NATS_VERSION := v2.15.2
STATICCHECK_VERSION := v0.8.2
# A count, not a duration: a duration -fuzztime can fail with "context deadline
# exceeded" at its end on go1.26 (go.dev/issue/75804), with no crasher found.
FUZZTIME  ?= 100000x
LISTEN    ?= 127.0.0.1:7780
export PATH := $(GOBIN):$(PATH)

.PHONY: all build test unit fuzz lint run cluster dev bench govbench minio nats test-tools clean dist

# make dist: release binaries. Static (CGO_ENABLED=0), -trimpath, stamped with
# the commit: -buildvcs=true fails outside a git checkout (BUILDVCS=false builds
# anyway); VERSION=1.2.3 sets the version outright. In a linked git worktree
# (.git is a file) go build cannot stamp the commit (go.dev/issue/58218), so
# dist stamps the version string internal/version would derive with -ldflags.
DIST           ?= dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST_NODE_ONLY ?= windows/amd64
BUILDVCS       ?= true
VERSION        ?=
SHA256SUM      ?= $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/skillgate ./cmd/skillgate-node ./cmd/skillgate-fleet

# go vet compiles like make dist, the Dockerfile and the programs the tests
# run (internal/testkit): CGO_ENABLED=0 and -trimpath. One compile of every
# package then serves them all, and, free of the checkout's path, every
# clone of the repository (a fresh clone reuses the build cache).
VET := CGO_ENABLED=0 $(GO) vet -trimpath

## test: vet, every test (MinIO-backed ones included) and a short fuzz run.
test: minio nats test-tools
	$(VET) ./...
	$(GO) test -race -count=1 -timeout 15m ./...
	$(MAKE) fuzz

unit:
	$(GO) test -count=1 ./...

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./skill
	$(GO) test -run '^$$' -fuzz '^FuzzMetadataHuJSON$$' -fuzztime $(FUZZTIME) ./skill
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFrame$$' -fuzztime $(FUZZTIME) ./protocol
	$(GO) test -run '^$$' -fuzz '^FuzzCheckReadPath$$' -fuzztime $(FUZZTIME) ./gateway
	$(GO) test -run '^$$' -fuzz '^FuzzFactsScan$$' -fuzztime $(FUZZTIME) ./protocol
	$(GO) test -run '^$$' -fuzz '^FuzzSplitObject$$' -fuzztime $(FUZZTIME) ./internal/jsonscan
	$(GO) test -run '^$$' -fuzz '^FuzzHostParser$$' -fuzztime $(FUZZTIME) ./cmd/skillgate
	$(GO) test -run '^$$' -fuzz '^FuzzHuJSONReader$$' -fuzztime $(FUZZTIME) ./internal/cli
	$(GO) test -run '^$$' -fuzz '^FuzzScan$$' -fuzztime $(FUZZTIME) ./governance
	$(GO) test -run '^$$' -fuzz '^FuzzArchive$$' -fuzztime $(FUZZTIME) ./governance
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./config
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) ./publisher
	$(GO) test -run '^$$' -fuzz '^FuzzVerifyBlob$$' -fuzztime $(FUZZTIME) ./publisher
	$(GO) test -run '^$$' -fuzz '^FuzzParseAnswer$$' -fuzztime $(FUZZTIME) ./scanners

lint:
	$(VET) ./...
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	staticcheck ./...
	@test -z "$$(gofmt -l .)" || (echo "gofmt would change:"; gofmt -l .; exit 1)

## test-tools: install chromium, systemd-analyze, ssh-keygen, yara and Node.js (apt-get), and the MCP
## TypeScript SDK (npm ci in testdata/mcp), if missing.
test-tools:
	@./scripts/test-tools.sh

## minio: install the MinIO server used by the tests, if it is missing.
minio:
	@command -v minio >/dev/null || { echo "installing MinIO $(MINIO_VERSION) (a few minutes the first time)…"; \
		$(GO) install github.com/minio/minio@$(MINIO_VERSION); }

## nats: install the NATS server used by the tests, if it is missing.
nats:
	@command -v nats-server >/dev/null || $(GO) install github.com/nats-io/nats-server/v2@$(NATS_VERSION)

## run: gateway on the example directory store + a local node; prints the prompt block.
run: build
	./scripts/run.sh $(LISTEN)

## cluster: NATS with JetStream, three gateway replicas sharing the fleet, two nodes.
cluster: build nats
	./scripts/cluster.sh

## dev: the same on a local MinIO started here.
dev: build minio
	./scripts/run.sh --minio $(LISTEN)

bench: build
	./scripts/bench.sh

## govbench: the governance scanner on the labelled public skill sets
## (../shared/corpus/external): held / blocked / flagged per set and label,
## hits per rule; rewrites its section of BENCHMARKS.md. GOVBENCH_FLAGS=-v
## also lists the malicious skills not held.
govbench:
	./scripts/govbench.sh $(GOVBENCH_FLAGS)

## dist: skillgate and skillgate-node for $(DIST_PLATFORMS), skillgate-node for
## $(DIST_NODE_ONLY), as $(DIST)/PROGRAM_OS_ARCH[.exe], and $(DIST)/SHA256SUMS.
dist:
	rm -rf $(DIST)
	mkdir -p $(DIST)
	@# Untracked files would stamp the following builds as modified (.dirty).
	echo '*' > $(DIST)/.gitignore
	@set -e; vcs='$(BUILDVCS)'; stamp='$(VERSION)'; \
	if [ -z "$$stamp" ] && [ "$$vcs" != false ] && [ -f .git ]; then \
		stamp=$$(sed -n 's/^const Base = "\(.*\)"$$/\1/p' internal/version/version.go)+$$(git rev-parse HEAD | cut -c1-12); \
		[ -z "$$(git status --porcelain)" ] || stamp=$$stamp.dirty; \
		vcs=false; \
		echo "linked git worktree: go build cannot stamp the commit; -X version.stamp=$$stamp"; \
	fi; \
	for p in $(DIST_PLATFORMS:%=skillgate/%) $(DIST_PLATFORMS:%=skillgate-node/%) $(DIST_NODE_ONLY:%=skillgate-node/%); do \
		prog=$${p%%/*}; os=$${p#*/}; arch=$${os#*/}; os=$${os%%/*}; \
		out=$(DIST)/$${prog}_$${os}_$${arch}; [ $$os != windows ] || out=$$out.exe; \
		echo "build $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=$$vcs \
			-ldflags "-s -w -X github.com/skillgate/skillgate/internal/version.stamp=$$stamp" \
			-o $$out ./cmd/$$prog; \
	done
	cd $(DIST) && $(SHA256SUM) skillgate* > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

clean:
	rm -rf $(BIN) $(DIST)
