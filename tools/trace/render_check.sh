#!/usr/bin/env bash
# Loads a trace's HTML timeline in headless Chromium and checks that it
# rendered: the page's lanes are the trace's P and M tracks, in order, and
# it drew slices. With PNG, also saves a screenshot of the page.
#
# Usage: tools/trace/render_check.sh TRACE.json TRACE.html [PNG]
#
# The page reports what it drew on <body>: data-lanes="P0,P1,M0,..." and
# data-rendered="<slices drawn>" (timeline_template.html's render()).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 TRACE.json TRACE.html [PNG]" >&2; exit 2; }
trace=$1
html=$(readlink -f "$2")
png=${3:-}
here=$(dirname "$0")
chromium=$here/../headless_chromium.sh

expected=$(python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import timeline
print(",".join(timeline.lane_names(json.load(open(sys.argv[2])))))
' "$here" "$trace")

dom=$("$chromium" --virtual-time-budget=5000 --dump-dom "file://$html")
body=$(grep -o '<body[^>]*>' <<<"$dom" | head -1)
lanes=$(sed -n 's/.*data-lanes="\([^"]*\)".*/\1/p' <<<"$body")
drawn=$(sed -n 's/.*data-rendered="\([0-9]*\)".*/\1/p' <<<"$body")

status=0
if [ "$lanes" != "$expected" ]; then
  echo "render_check: the page shows lanes [$lanes], the trace has [$expected]"
  status=1
fi
if [ -z "$drawn" ] || [ "$drawn" -eq 0 ]; then
  echo "render_check: the page drew no slice (body: $body)"
  status=1
fi
if [ -n "$png" ]; then
  rm -f "$png"
  "$chromium" --window-size=1400,${RENDER_HEIGHT:-420} \
    --screenshot="$(readlink -f "$(dirname "$png")")/$(basename "$png")" \
    "file://$html" >/dev/null || true
  [ -s "$png" ] || { echo "render_check: chromium wrote no $png"; status=1; }
fi
[ $status -eq 0 ] && echo "render_check: $(basename "$html"): lanes $lanes; $drawn slices drawn"
exit $status
