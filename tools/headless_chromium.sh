#!/usr/bin/env bash
# Runs Debian's Chromium headless, off the network and out of the user's
# profile, with the caller's arguments (a page, --screenshot=..., --dump-dom).
# Used by the site's screenshots (tools/docs/screenshot.sh) and the trace
# timeline's render check (tools/trace/render_check.sh).
#
# Usage: tools/headless_chromium.sh [CHROMIUM ARG...]
#
# The flags: a throwaway profile directory, no first-run, no component
# updates, no sync, no background networking, and a proxy that refuses
# everything, so that a page that tried to load anything remote would show
# it. --no-sandbox only when running as root (Chromium refuses otherwise);
# the pages are our own files. Chromium's own chatter goes to /dev/null.
set -euo pipefail

browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "headless_chromium: no chromium (apt-get install chromium)" >&2; exit 1; }

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless=new --disable-gpu --hide-scrollbars --no-first-run
       --no-default-browser-check --disable-extensions --disable-sync
       --disable-background-networking --disable-component-update
       --disable-default-apps --metrics-recording-only
       --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>'
       --user-data-dir="$profile")
[ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox)
timeout 120 "$browser" "${flags[@]}" "$@" 2>/dev/null
