# skillgate — see README.md.
GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
BIN       := bin
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
STATICCHECK_VERSION := v0.8.2
# A count, not a duration: a duration -fuzztime can fail with "context deadline
# exceeded" at its end on go1.26 (go.dev/issue/75804), with no crasher found.
FUZZTIME  ?= 100000x
LISTEN    ?= 127.0.0.1:7780
export PATH := $(GOBIN):$(PATH)

.PHONY: all build test unit fuzz lint run dev bench minio clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/skillgate ./cmd/skillgate-node ./cmd/skillgate-fleet

## test: vet, every test (MinIO-backed ones included) and a short fuzz run.
test: minio
	$(GO) vet ./...
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

lint:
	$(GO) vet ./...
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	staticcheck ./...
	@test -z "$$(gofmt -l .)" || (echo "gofmt would change:"; gofmt -l .; exit 1)

## minio: install the MinIO server used by the tests, if it is missing.
minio:
	@command -v minio >/dev/null || { echo "installing MinIO $(MINIO_VERSION) (a few minutes the first time)…"; \
		$(GO) install github.com/minio/minio@$(MINIO_VERSION); }

## run: gateway on the example directory store + a local node; prints the prompt block.
run: build
	./scripts/run.sh $(LISTEN)

## dev: the same on a local MinIO started here.
dev: build minio
	./scripts/run.sh --minio $(LISTEN)

bench: build
	./scripts/bench.sh

clean:
	rm -rf $(BIN)
