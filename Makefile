# The OpenStack infrastructure provider for Cluster API, with one API server load balancer per
# availability zone. `make help` lists the targets.

SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# hack/tools.sh installs pinned tools into a cache shared by every checkout on the machine.
TOOLS_BIN := $(shell source $(ROOT)/hack/lib.sh && echo $$TOOLS_BIN)
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen
MOCKGEN := $(TOOLS_BIN)/mockgen
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint
GINKGO := $(TOOLS_BIN)/ginkgo
KUSTOMIZE := $(TOOLS_BIN)/kustomize

BIN_DIR := $(ROOT)/bin
GO_TEST_FLAGS ?=

##@ General

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Tools

.PHONY: tools
tools: ## Install the pinned developer tools from the Go module proxy (cached, idempotent).
	hack/tools.sh >/dev/null

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd for envtest from the Go module proxy (cached).
	hack/envtest-assets.sh >/dev/null

##@ Generate

.PHONY: generate
generate: generate-go manifests ## Regenerate everything that is generated: deepcopy, mocks, CRDs, webhook and RBAC manifests.

.PHONY: generate-go
generate-go: ## Regenerate deepcopy functions and mocks.
	@hack/tools.sh controller-gen mockgen >/dev/null
	rm -f api/v1beta1/zz_generated.deepcopy.go pkg/clients/mock/*.go
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate/boilerplate.go.txt paths=./api/...
	PATH="$(TOOLS_BIN):$$PATH" go generate ./...

.PHONY: manifests
manifests: ## Regenerate the CRDs, the webhook configuration and the RBAC role under config/.
	@hack/tools.sh controller-gen >/dev/null
	rm -f config/crd/bases/*.yaml config/webhook/manifests.yaml config/rbac/role.yaml
	$(CONTROLLER_GEN) \
		crd paths=./api/... output:crd:artifacts:config=config/crd/bases \
		webhook paths=./pkg/webhooks/... output:webhook:artifacts:config=config/webhook \
		rbac:roleName=manager-role paths=./... output:rbac:artifacts:config=config/rbac

BENCH_TIME ?= 5x

##@ Demo and end-to-end

.PHONY: demo
demo: ## The local demo: a real OpenStack on 127.0.0.1, a Cluster API management plane, and a two-zone cluster with three control plane machines; prints the load balancers per zone and the DNS records to publish.
	hack/demo.sh up

.PHONY: demo-down
demo-down: ## Delete the demo cluster, then stop the management plane and the local OpenStack (data kept for a fast restart).
	hack/demo.sh down

.PHONY: test-e2e
test-e2e: ## End-to-end suite and real-cloud contract suite against the local OpenStack (or CAPO_E2E_CLOUDS_YAML's cloud), with a fresh management plane; logs in _artifacts/e2e on failure.
	hack/e2e.sh

.PHONY: local-openstack-up
local-openstack-up: ## Install (once) and start a real OpenStack on 127.0.0.1: Keystone, Neutron, Nova (fake driver), Octavia, zones az1/az2.
	hack/local-openstack/up.sh

.PHONY: local-openstack-down
local-openstack-down: ## Stop the local OpenStack, keeping its data; PURGE=1 deletes its data too.
	hack/local-openstack/down.sh $(if $(PURGE),--purge)

.PHONY: mgmt-up
mgmt-up: ## Start the local management plane: kube-apiserver, etcd, the Cluster API core manager and this provider's manager.
	hack/mgmt/up.sh

.PHONY: mgmt-down
mgmt-down: ## Stop the local management plane.
	hack/mgmt/down.sh

##@ Build and test

.PHONY: build
build: ## Build the manager binary into bin/manager.
	go build -trimpath -o $(BIN_DIR)/manager .

.PHONY: test
test: ## Run every test: unit, webhook, API validation, envtest and fake-OpenStack contract suites (builds envtest binaries on first use).
	@assets="$$(hack/envtest-assets.sh)"; \
	KUBEBUILDER_ASSETS="$$assets" go test $(GO_TEST_FLAGS) -tags contract ./...

.PHONY: test-contract
test-contract: ## Run the fake-vs-real contract suite; set CAPO_CONTRACT_CLOUDS_YAML and CAPO_CONTRACT_CLOUD for a real cloud.
	go test -count=1 -v -tags contract ./test/contract/

.PHONY: bench
bench: ## Benchmark the cluster reconciler against the fake OpenStack (1, 3, 6 zones): simulated time to converge and to delete, OpenStack calls per steady reconcile.
	go test -run '^$$' -bench . -benchtime $(BENCH_TIME) ./test/benchmark/

.PHONY: test-unit
test-unit: ## Run only the tests that need no API server.
	go test -short $(GO_TEST_FLAGS) ./...

.PHONY: lint
lint: ## Run golangci-lint.
	@hack/tools.sh golangci-lint >/dev/null
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: ## Fail when go.mod, gofmt or any generated file is out of date.
	go mod tidy -diff
	@out="$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))"; \
		if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(MAKE) generate
	@if [ -n "$$(git status --porcelain -- api config pkg)" ]; then \
		echo "generated files are out of date; run 'make generate' and commit:"; \
		git status --porcelain -- api config pkg; git diff -- api config pkg | head -50; exit 1; fi

.PHONY: clean
clean: ## Remove build output (the tool cache is kept).
	rm -rf $(BIN_DIR)
