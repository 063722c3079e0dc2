#!/usr/bin/env bash
# Renders the course site's main page and one chapter with headless Chromium
# (Debian's `chromium`) into PNG files, so that a reviewer can see the site
# without a browser. Optional: `./course docs --screenshot` runs it.
#
# Usage: tools/docs/screenshot.sh SITE_HTML_DIR OUT_DIR [PAGE...]
#        PAGE defaults to index.html and stage3.html.
#
# Chromium runs through tools/headless_chromium.sh: off the network, with
# a throwaway profile.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 SITE_HTML_DIR OUT_DIR [PAGE...]" >&2; exit 2; }
site=$(readlink -f "$1")
out=$2
shift 2
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(index.html stage3.html)

chromium=$(dirname "$0")/../headless_chromium.sh
mkdir -p "$out"

for page in "${pages[@]}"; do
  [ -f "$site/$page" ] || { echo "screenshot: no page $site/$page" >&2; exit 1; }
  png="$out/${page%.html}.png"
  rm -f "$png"
  # The navigation tree is built by scripts after the page loads: the
  # virtual time budget lets them finish before the picture is taken
  # (without it the tree was there in some shots and empty in others).
  "$chromium" --window-size=1280,1800 --virtual-time-budget=10000 \
    --screenshot="$(readlink -f "$out")/${page%.html}.png" \
    "file://$site/$page" >/dev/null || true
  [ -s "$png" ] || { echo "screenshot: chromium wrote no $png" >&2; exit 1; }
  echo "screenshot: $png"
done
