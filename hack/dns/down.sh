#!/usr/bin/env bash
# Stops the DNS server hack/dns/up.sh started. Its zone goes with it.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/hack/lib.sh"
dir="${CAPO_DNS_DIR:-/var/tmp/capo-dns}"
pid=$(cat "$dir/named.pid" 2>/dev/null || true)
rm -f "$dir/env"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  deadline=$((SECONDS + 20))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { kill -KILL "$pid" 2>/dev/null || true; break; }
    sleep 0.2
  done
  log "stopped"
fi
