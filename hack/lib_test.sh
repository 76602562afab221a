#!/usr/bin/env bash
# Checks that hack/lib.sh's phase passes its command's exit status on, in every way CI's scripts
# call it, and that no script CI runs defines a phase of its own. Run by `make verify`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# 1. Collected status (hack/e2e.sh's `phase ... || rc=$?`, where bash ignores errexit inside).
rc=0
(source "$root/hack/lib.sh"; phase "fails" false) >/dev/null || rc=$?
[ "$rc" -ne 0 ] || fail "phase false || rc=\$? left rc at 0"
rc=0
(source "$root/hack/lib.sh"; rc=0; phase "exit 3" sh -c 'exit 3' || rc=$?; exit "$rc") >/dev/null || rc=$?
[ "$rc" -eq 3 ] || fail "phase of 'exit 3' collected $rc, want 3"

# 2. Under errexit (hack/test.sh, .ci/run): the script stops at the failed phase.
out=$(bash -c "set -euo pipefail; source '$root/hack/lib.sh'; phase fails false; echo next-step-ran" 2>&1) && fail "a script under errexit went on after a failed phase"
case "$out" in *next-step-ran*) fail "a script under errexit ran the step after a failed phase" ;; esac
case "$out" in *"fails: FAILED (exit status 1)"*) ;; *) fail "the failed phase's closing line does not say it failed: $out" ;; esac

# 3. A function whose inner step fails is as failed as the step (errexit is off inside phase).
rc=0
(source "$root/hack/lib.sh"; inner() { false || return; echo "never"; }; phase "inner" inner) >/dev/null || rc=$?
[ "$rc" -ne 0 ] || fail "a function that returns its failed step's status passed through phase as 0"

# 4. Success stays success, and the closing line carries the time.
out=$(source "$root/hack/lib.sh"; phase "ok" true) || fail "phase true failed"
case "$out" in *"=== ok: "*s) ;; *) fail "phase true printed: $out" ;; esac

# 5. One phase for every script CI runs.
for f in "$root/.ci/run" "$root"/hack/*.sh "$root"/hack/*/*.sh; do
  [ "$f" = "$root/hack/lib.sh" ] && continue
  if grep -qE '^[[:space:]]*(function[[:space:]]+)?phase[[:space:]]*\(\)' "$f"; then
    fail "${f#"$root"/} defines its own phase(); use hack/lib.sh's"
  fi
done

[ "$failures" -eq 0 ] || exit 1
echo "hack/lib_test.sh: phase passes exit statuses on"
