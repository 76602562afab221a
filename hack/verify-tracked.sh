#!/usr/bin/env bash
# Fails when a file git tracks is binary or larger than 1 MiB (`make verify`): build output (the
# manager, an image archive) belongs under bin/ or out/, which .gitignore keeps out, never in the
# repository every clone carries. Also fails when a script that is run by its path (every *.sh but
# the sourced lib.sh files, and .ci/run) is not executable in git: a fresh clone could not run it.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1024 * 1024))
rc=0
# git grep -I lists the tracked files with text in them; the others are binary.
text=$(git grep -I -l -e '' -- . | sort)
while IFS= read -r f; do
  [ -e "$f" ] || continue
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$limit" ]; then
    echo "$f: $size bytes, over the 1 MiB a tracked file may have"; rc=1
  elif [ "$size" -gt 0 ] && ! grep -qxF -- "$f" <<<"$text"; then
    echo "$f: a binary file; build output goes under bin/ or out/ (ignored), not into the repository"; rc=1
  fi
done < <(git ls-files)
while read -r mode _ _ f; do
  case "$f" in */lib.sh) continue ;; esac
  [ "$mode" = 100755 ] || { echo "$f: not executable (mode $mode): git update-index --chmod=+x $f"; rc=1; }
done < <(git ls-files -s -- '*.sh' .ci/run)
exit "$rc"
