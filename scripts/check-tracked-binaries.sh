#!/usr/bin/env bash
# Fails if git tracks an executable binary (ELF, Mach-O or PE): build
# outputs belong in bin/ (ignored), never in the repository.
#   scripts/check-tracked-binaries.sh [REPO]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-tracked-binaries: not a git checkout; nothing to check" >&2
  exit 0
fi
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  magic=$(head -c 4 -- "$f" | od -An -tx1 | tr -d ' \n')
  kind=
  case "$magic" in
    7f454c46) kind=ELF ;;
    feedface | feedfacf | cefaedfe | cffaedfe) kind=Mach-O ;;
    cafebabe) kind="Mach-O universal" ;;
    4d5a*) kind=PE ;;
  esac
  if [ -n "$kind" ]; then
    echo "tracked executable binary ($kind): $f — remove it (git rm --cached) and ignore it" >&2
    bad=1
  fi
done < <(git ls-files -z)
exit $bad
