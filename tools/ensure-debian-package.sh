#!/usr/bin/env bash
# Installs a Debian package when its command is absent (as root, or through sudo); nothing is
# downloaded but Debian packages. Usage: ensure-debian-package.sh <command> <package> <what needs it>
set -euo pipefail
cmd=$1 pkg=$2 what=$3
if command -v "$cmd" >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "$pkg"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y "$pkg"
else
  echo "$cmd is not installed and this user cannot install it: apt-get install -y $pkg; $what will fail" >&2
fi
