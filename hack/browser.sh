#!/usr/bin/env bash
# Installs Debian's chromium for the UI's browser tests (internal/cli
# TestUIBrowser*), as a user would: apt-get, unless a chromium is on PATH already
# (CONVOY_CHROMIUM names another binary). Idempotent; a few seconds when present.
set -euo pipefail
if [[ -n "${CONVOY_CHROMIUM:-}" ]] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [[ "$(id -u)" != 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "hack/browser.sh: chromium is missing and you are not root: apt-get install chromium (Debian), or set CONVOY_CHROMIUM to a Chrome or Chromium binary" >&2
    exit 1
  fi
  sudo=sudo
fi
echo "hack/browser.sh: installing Debian's chromium for the browser tests" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
