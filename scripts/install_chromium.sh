#!/usr/bin/env bash
# The web UI's browser tests drive the system's Chromium (Playwright cannot fetch its own
# browser here). Install Debian's package where we may; otherwise say what the tests will do.
set -euo pipefail
for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    echo "    chromium: $(command -v "$name")"
    exit 0
  fi
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing chromium (Debian package) for the web UI's browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  echo "    chromium: $(command -v chromium)"
else
  echo "    no chromium and no root apt-get here: the browser tests will skip"
  echo "    (install Debian's chromium, or set CHARMEMORY_CHROMIUM to a Chromium binary)"
fi
