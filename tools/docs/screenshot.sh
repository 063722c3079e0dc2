#!/usr/bin/env bash
# Renders the course site's main page and one chapter with headless Chromium
# (Debian's `chromium`) into PNG files, so that a reviewer can see the site
# without a browser. Optional: `./course docs --screenshot` runs it.
#
# Usage: tools/docs/screenshot.sh SITE_HTML_DIR OUT_DIR [PAGE...]
#        PAGE defaults to index.html and stage3.html.
#
# The flags keep Chromium off the network (CI machines have none) and out of
# the user's profile: a throwaway profile directory, no first-run, no
# component updates, no sync, no background networking, and a proxy that
# refuses everything, so a page that tried to load anything remote would
# show it. --no-sandbox only when running as root (Chromium refuses
# otherwise); the pages are our own files.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 SITE_HTML_DIR OUT_DIR [PAGE...]" >&2; exit 2; }
site=$(readlink -f "$1")
out=$2
shift 2
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(index.html stage3.html)

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "screenshot: no chromium (apt-get install chromium)" >&2; exit 1; }

mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless=new --disable-gpu --hide-scrollbars --no-first-run
       --no-default-browser-check --disable-extensions --disable-sync
       --disable-background-networking --disable-component-update
       --disable-default-apps --metrics-recording-only
       --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>'
       --user-data-dir="$profile" --window-size=1280,1800)
[ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox)

for page in "${pages[@]}"; do
  [ -f "$site/$page" ] || { echo "screenshot: no page $site/$page" >&2; exit 1; }
  png="$out/${page%.html}.png"
  rm -f "$png"
  timeout 120 "$browser" "${flags[@]}" --screenshot="$(readlink -f "$out")/${page%.html}.png" \
    "file://$site/$page" >/dev/null 2>&1 || true
  [ -s "$png" ] || { echo "screenshot: chromium wrote no $png" >&2; exit 1; }
  echo "screenshot: $png"
done
