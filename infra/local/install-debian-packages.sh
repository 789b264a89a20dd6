#!/usr/bin/env bash
# Debian packages the tests and benchmarks use: chromium (the audit report rendered headless)
# and kcat (an independent Kafka client for the benchmarks). Installs only what is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v kcat >/dev/null || missing+=(kcat)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} — run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends "${missing[@]}" >/dev/null; }; then
  echo "could not install the Debian packages ${missing[*]} (no network or no package mirror?):" \
    "install them by other means, then run the command again" >&2
  exit 1
fi
