# convoy — the commands of docs/development.md.
# `make dev` runs convoy on a local control plane; `make test` runs every test.

SHELL := /usr/bin/env bash -o pipefail
GO ?= go
KUBE_VERSION := v1.37.2
KUBE_BIN := $(CURDIR)/bin/k8s/$(KUBE_VERSION)
TOOLS_BIN := $(CURDIR)/bin/tools
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
TEST_TIMEOUT ?= 45m
# Go packages to test (override to run a subset: make test PKGS=./internal/policy/...).
PKGS ?= ./...

.PHONY: all dev test test-unit build kube generate lint verify verify-codegen clean

all: build

## dev: build kubectl-convoy into bin/, then start a local control plane with simulated nodes and convoy on it (state in .convoy/dev)
dev:
	$(GO) build -o bin/ ./cmd/kubectl-convoy
	$(GO) run ./cmd/convoy dev

## test: build the Kubernetes binaries if missing, install chromium for the UI's browser tests if missing, vet, then run every test
test: kube browser
	$(GO) vet $(PKGS)
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

## test-unit: only the tests that need no control plane
test-unit:
	$(GO) test -count=1 -short $(PKGS)

## build: compile convoy and the kubectl plugin into bin/
build:
	$(GO) build -o bin/ ./cmd/...

## browser: install Debian's chromium for the UI's browser tests if it is missing (hack/browser.sh)
.PHONY: browser
browser:
	bash hack/browser.sh

## ui: rebuild the UI's front-end (internal/ui/web, npm ci + esbuild) into internal/ui/dist, which is committed and embedded
.PHONY: ui
ui:
	$(GO) generate ./internal/ui

## test-ui-scale: the UI's browser test at 1,000 Releases (list load, virtualised rows, a live change, scrolling); figures in the test log
.PHONY: test-ui-scale
test-ui-scale: kube browser
	CONVOY_UI_SCALE=1000 CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) test -count=1 -v -run TestUIBrowserManyReleases ./internal/cli/

## kube: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok into bin/k8s/
kube:
	bash hack/kube/build.sh

## generate: regenerate deepcopy and OpenAPI code and docs/reference/ (API: crd-ref-docs; constants: go/doc; commands: cobra/doc) with the pinned generators
generate:
	bash hack/update-codegen.sh

## lint: golangci-lint (pinned, installed from the module proxy into bin/tools)
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_BIN)/golangci-lint $(GOLANGCI_LINT)

## verify: fail when generated code is stale, go.mod is untidy, or lint finds something
verify: verify-codegen lint
	$(GO) mod tidy -diff

verify-codegen:
	bash hack/verify-codegen.sh

clean:
	rm -rf bin/ .convoy/

## bench-apiserver: benchmark convoy apiserver through the aggregator (/sync, list and watch of 10,000 Releases); flags: BENCH_FLAGS='-requests=500'. Figures: docs/notes/performance-log.md
.PHONY: bench-apiserver
bench-apiserver: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/apiserver $(BENCH_FLAGS)

## bench-api-vs-crd: convoy's Release through the aggregator against a CRD of the same shape served by kube-apiserver, same run, same control plane (sequential and 16-client creates, kubectl create -f, get, list, watch latency, status, /sync), as a non-admin user; flags: BENCH_FLAGS='-list=10000 -profile-dir=/tmp/p'. Figures: docs/performance.md
.PHONY: bench-api-vs-crd
bench-api-vs-crd: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/apivscrd $(BENCH_FLAGS)

## bench-controller: benchmark convoy controller (N Releases of a podinfo-shaped chart to Applied, RSS, API requests per Release, steady-state writes); flags: BENCH_FLAGS='-releases=100'. Figures: docs/notes/performance-log.md
.PHONY: bench-controller
bench-controller: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/controller $(BENCH_FLAGS)

## bench-git: benchmark charts from Git (N Releases of one chart folder of one Git repository against the same from a Helm repository: time to Ready, Git requests per interval, a new commit); flags: BENCH_FLAGS='-releases=100'. Figures: docs/notes/git-bench.md
.PHONY: bench-git
bench-git: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/git $(BENCH_FLAGS)

## bench-observer: benchmark convoy observer (N Releases of a two-wave chart in manual mode: observer RSS and CPU, wave Healthy → its /sync p50/p99, steady-state writes); flags: BENCH_FLAGS='-releases=100'. Figures: docs/notes/performance-log.md
.PHONY: bench-observer
bench-observer: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/observer $(BENCH_FLAGS)

## bench-e2e: benchmark convoy as users get it (processes as convoy dev runs them, default flags, observer on): N Releases create → all Ready, p50/p99, CPU and RSS of every process, API requests per Release by server, steady-state writes; flags: BENCH_FLAGS='-n=100'. Figures: docs/performance.md
.PHONY: bench-e2e
bench-e2e: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/e2e $(BENCH_FLAGS)

## bench-fleet: benchmark convoy across a local fleet (default 10 target clusters, 100 Releases): on one cluster vs spread over the fleet, create → all Ready, a new revision canary first, RSS and goroutines of controller and observer per added cluster, connections and requests per Release per cluster; flags: BENCH_FLAGS='-clusters=10 -releases=20'. Figures: docs/notes/fleet-benchmark.md
.PHONY: bench-fleet
bench-fleet: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/fleet $(BENCH_FLAGS)

## bench-largechart: one large chart end to end (test/corpus large-umbrella with ci/large-values.yaml: ~150 objects, four subcharts, CRDs of 1.1 and 0.5 MB): install and upgrade → Ready, a steady window's writes, the deletion, peak RSS of controller and observer; flags: BENCH_FLAGS='-steady=30s'. Figures: docs/performance.md
.PHONY: bench-largechart
bench-largechart: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/largechart $(BENCH_FLAGS)

## bench-storage: what convoy keeps in its etcd: N Releases of a 20-object chart to Ready, then upgraded once, with convoy apiserver on an etcd of its own at the chart's flags: dbSize, dbSizeInUse, keys and bytes per resource (Releases, Renders, inventories), before and after compaction and defrag; flags: BENCH_FLAGS='-releases=1000,10000'. Figures: docs/notes/storage-sizing.md
.PHONY: bench-storage
bench-storage: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) run ./bench/storage $(BENCH_FLAGS)

## dist: kubectl-convoy archives for every krew platform (linux, darwin, windows; amd64, arm64; CGO_ENABLED=0) and the krew manifest with their sha256 into dist/; VERSION=v0.1.0 is required. hack/release; test/deploy's TestKrewPackage runs it for one platform
.PHONY: dist
dist:
	@test -n "$(VERSION)" || { echo 'make dist needs VERSION, a semantic version with a leading v: make dist VERSION=v0.1.0'; exit 2; }
	rm -rf dist
	$(GO) run ./hack/release -version $(VERSION) -out dist

## rbac-matrix: run test/rbac against a local control plane and write the RBAC table it observes into docs/security.md (after a deliberate change of deploy/rbac)
.PHONY: rbac-matrix
rbac-matrix: kube
	CONVOY_UPDATE_RBAC_MATRIX=1 CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) test -count=1 -run TestRBACMatrix ./test/rbac/

# The fuzz targets, package:Function. `make test` runs their committed corpora
# (testdata/fuzz/<Function>/ and the f.Add seeds) as ordinary tests.
FUZZ_TARGETS := \
	./internal/apiserver:FuzzDecodeAndValidate \
	./internal/apiserver:FuzzSyncOptions \
	./internal/apiserver/registry/release:FuzzReleaseWrites \
	./internal/apiserver/registry/release:FuzzSyncRequest \
	./internal/apiserver/registry/render:FuzzRedactSecrets \
	./internal/targets:FuzzKubeconfig \
	./internal/render:FuzzMutation \
	./internal/render:FuzzMergeValues
FUZZTIME ?= 2m

## fuzz: run every fuzz target for FUZZTIME each (default 2m; make fuzz FUZZTIME=30s); a failure leaves its input in the package's testdata/fuzz/ (commit it with the fix). docs/security.md lists the targets
.PHONY: fuzz
fuzz:
	@set -e; for target in $(FUZZ_TARGETS); do \
		pkg=$${target%%:*}; name=$${target##*:}; \
		echo "== $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -short -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done
## image: the OCI image of convoy for IMAGE_PLATFORMS (default linux/amd64,linux/arm64) built without a container runtime (hack/image: CGO_ENABLED=0, user 65532, CA roots, OCI labels; reproducible per commit) into the OCI layout bin/image; VERSION=v0.1.0 to stamp a version (default: git describe)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_FLAGS = -out bin/image -platforms $(IMAGE_PLATFORMS) $(if $(VERSION),-version $(VERSION))
.PHONY: image image-push image-test
image:
	$(GO) run ./hack/image $(IMAGE_FLAGS)

## image-push: make image, then push it to IMAGE=registry/name:tag (credentials from the Docker config)
image-push:
	@test -n "$(IMAGE)" || { echo 'make image-push needs IMAGE, a reference to push to: IMAGE=registry.example.com/convoy:v0.1.0 make image-push'; exit 2; }
	$(GO) run ./hack/image $(IMAGE_FLAGS) -push $(IMAGE)

## image-test: hack/image's tests for every platform of IMAGE_PLATFORMS (make test builds linux/amd64 only: an arm64 build of the module takes minutes on a cold cache)
image-test:
	CONVOY_IMAGE_PLATFORMS=$(IMAGE_PLATFORMS) $(GO) test -count=1 -timeout 30m ./hack/image

## chaos: test/chaos's full run: 300 Releases on the host and a remote Cluster, 10 minutes of faults (process kills, leader handovers between two controller replicas, etcd and kube-apiserver restarts, the remote cluster down, chart repository and proxy faults) while a driver changes them, then the invariants; CHAOS_FLAGS='-seed=N' replays a run. Figures: docs/reliability.md
CHAOS_FLAGS ?=
.PHONY: chaos soak
chaos: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) test -count=1 -timeout 60m -v -run '^TestChaos$$' ./test/chaos \
		-releases=300 -namespaces=10 -nodes=3 -workers=16 -steps=4000 -duration=10m -faults=200 -fault-gap=3s -converge=10m -quiet=60s -health-timeout=2m -seed=0 $(CHAOS_FLAGS)

## chaos-seeds: test/chaos's short run (make test's) on the regression seeds of test/chaos/testdata/seeds, then on CHAOS_SEEDS seeds drawn at random (default 20), one after the other; prints each seed and its outcome, then the failed ones with the command that replays each. SEEDS='1 2' runs those instead; CHAOS_FLAGS adds flags. docs/reliability.md
CHAOS_SEEDS ?= 20
.PHONY: chaos-seeds
chaos-seeds: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) CHAOS_FLAGS='$(CHAOS_FLAGS)' bash test/chaos/seeds.sh $(CHAOS_SEEDS)

## soak: test/chaos for 30 minutes with chart repository and proxy faults only (no process restarts), to compare RSS and goroutines of every process at start and end; CHAOS_FLAGS='-seed=N' replays a run
soak: kube
	CONVOY_KUBE_BIN_DIR=$(KUBE_BIN) $(GO) test -count=1 -timeout 90m -v -run '^TestChaos$$' ./test/chaos \
		-releases=200 -namespaces=8 -nodes=3 -workers=8 -steps=9000 -duration=30m -faults=600 -fault-gap=4s -kinds=network -converge=10m -quiet=60s -health-timeout=2m -seed=0 $(CHAOS_FLAGS)
