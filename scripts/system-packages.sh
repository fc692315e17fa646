#!/usr/bin/env bash
# Debian packages the platform needs: fonts the puzzles are drawn with, libjpeg-turbo's TurboJPEG
# (imported JPEGs imprinted without re-encoding: puzzles/jpeg_coefficients.py), and Chromium for
# browser tests and replay (Playwright cannot download its own browsers on these machines).
set -euo pipefail
packages=(chromium fonts-noto-color-emoji fonts-dejavu-core libturbojpeg0)
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
