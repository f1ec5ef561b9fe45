#!/usr/bin/env bash
# Before the tests: the report test drives Debian's chromium (playwright's own browser download does not
# work here). Installs it when missing and this user can; otherwise says how.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report test…" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "the report test needs Debian's chromium: sudo apt-get install chromium (or set CHROMIUM_PATH)" >&2
fi
