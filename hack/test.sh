#!/usr/bin/env bash
# `make test`: every suite CI runs, in order, each phase timed. Run it as root on a Debian machine
# (the image build and the local OpenStack install Debian packages); everything else it needs is
# built from the Go module proxy on first use and cached (hack/lib.sh).
#
#   go          unit, webhook, API validation, manager start-up, the controllers against the fake
#               OpenStack (envtest), the fake's contract suite
#   bench       the reconciler against the fake OpenStack, once: fails when a cluster does not
#               converge or leaves something behind
#   image       the manager's image, built without a container engine, and what it holds
#   clusterctl  the release with the real clusterctl: init, generate every flavor, move
#   e2e         the end-to-end suite against a real OpenStack (the local one unless
#               CAPO_E2E_CLOUDS_YAML says otherwise), with the provider running from its image;
#               then the contract suite against the same cloud
#
# CAPO_TEST_PHASES="go bench" runs only those phases. GO_TEST_FLAGS go to the go phase.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/lib.sh"
cd "$root"
phases=(${CAPO_TEST_PHASES:-go bench image clusterctl e2e})

# go: the verbose log is kept; the package verdicts, each failing test's output and a count are
# printed.
go_suites() {
  local log rc=0 assets
  log="$(mktemp)"
  assets="$(hack/envtest-assets.sh)" || return
  KUBEBUILDER_ASSETS="$assets" go test ${GO_TEST_FLAGS:--count=1} -v -tags contract ./... >"$log" 2>&1 || rc=$?
  grep -E '^(ok|FAIL|---)|^panic' "$log" | grep -vE '^--- PASS' || true
  if [ "$rc" -ne 0 ]; then
    echo "--- failures (each failing test's output) and the end of the log:"
    # In verbose mode a test's messages come before its "--- FAIL" line: print each failing
    # top-level test from its "=== RUN" line on, without the RUN/PAUSE/CONT lines of its
    # parallel subtests (hundreds of them would hide the failure).
    for t in $(grep -E '^--- FAIL' "$log" | awk '{print $3}' | sort -u); do
      awk -v t="$t" '$0 == "=== RUN   " t {p=1} p {print} p && $0 ~ "^--- FAIL: " t " " {exit}' "$log" |
        { grep -vE '^=== (RUN|PAUSE|CONT|NAME) ' | grep -vE '^\s*--- PASS' || true; } | head -150
    done
    tail -40 "$log"
  fi
  echo "$(grep -cE '^\s*--- PASS' "$log" || true) passed, $(grep -cE '^\s*--- FAIL' "$log" || true) failed"
  rm -f "$log"
  return "$rc"
}

for p in "${phases[@]}"; do
  case "$p" in
  go) phase "go: unit, webhook, API validation, envtest, contract (fake)" go_suites ;;
  bench) phase "bench: the reconciler against the fake OpenStack" make --no-print-directory bench BENCH_TIME=1x ;;
  image) phase "image: build and contents" make --no-print-directory test-image ;;
  clusterctl) phase "clusterctl: init, generate, move" make --no-print-directory test-clusterctl ;;
  e2e) phase "end to end: real OpenStack, provider from its image" make --no-print-directory test-e2e ;;
  *) log "unknown phase $p (go bench image clusterctl e2e)"; exit 2 ;;
  esac
done
