#!/usr/bin/env bash
# Debian packages the platform needs: fonts the puzzles are drawn with, libjpeg-turbo's TurboJPEG
# (imported JPEGs imprinted without re-encoding: puzzles/jpeg_coefficients.py), and Chromium
# (Playwright cannot download its own browsers on these machines): its headless shell for the pages
# the platform drives itself (replay, agent runs, the environment, browser tests), the full browser
# to check that both draw the same pixels (annotation/agents/browser.py).
set -euo pipefail
packages=(chromium chromium-headless-shell fonts-noto-color-emoji fonts-dejavu-core libturbojpeg0)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
  echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
