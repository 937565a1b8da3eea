#!/usr/bin/env bash
# Render a demo report and screenshot it in headless Chromium, to look at.
#
#   benchmarks/render_report.sh [RESULTS_DIR] [OUT_PNG]
#
# Without RESULTS_DIR it first runs the demo (concurrency 1, 4, 16, 64, 160 requests a
# step, every step decided; about 40 s on 2 cores). Needs Debian's chromium
# (apt-get install -y chromium). Prints the paths of the report and screenshot.
set -euo pipefail
results=${1:-}
shot=${2:-/tmp/loadgen-report.png}
if [[ -z $results ]]; then
  results=$(mktemp -d /tmp/loadgen-demo.XXXX)
  loadgen run scenarios/demo.yaml --out "$results" --quiet
fi
loadgen report "$results" >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --no-first-run --hide-scrollbars --window-size=1280,5200 \
  --screenshot="$shot" "file://$(realpath "$results")/report.html" 2>/dev/null
echo "report: $results/report.html"
echo "screenshot: $shot"
