#!/usr/bin/env bash
# Exits 0 when every daemon of the local OpenStack runs (prints where clouds.yaml is), 1 if not
# (prints what does not run).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
down=()
for name in "${SERVICES[@]}"; do running "$name" || down+=("$name"); done
if [ ${#down[@]} -gt 0 ]; then
  echo "not running: ${down[*]}"
  exit 1
fi
echo "running; clouds.yaml: $STATE_DIR/clouds.yaml"
