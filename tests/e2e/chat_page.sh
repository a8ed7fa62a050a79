#!/usr/bin/env bash
# The chat page at GET / of `minimax serve`, in a real browser: Debian's headless Chromium driven by
# playwright-core (tools/browser_test/chat_page_test.mjs) against a server on the bundled trained
# model with an API key, served under a path-like name so that the header's short name shows.
# First, with curl: the page and its files need no key and carry their Content-Type and
# Cache-Control, while the API routes still need the key. Fails (never skips) when the browser or
# the npm package is missing, naming the command that installs it. The browser test writes its
# desktop and phone screenshots into the scratch dir, or into CHAT_PAGE_SCREENSHOTS=DIR (the ones
# in docs/ come from CHAT_PAGE_SCREENSHOTS=$PWD/docs).
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
KEY=sk-page-key
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $CHROMIUM ]]; then
  echo "FAIL: no Chromium at $CHROMIUM: run scripts/setup.sh (Debian's chromium package)"
  exit 1
fi
if ! command -v node >/dev/null || [[ ! -d $ROOT/tools/browser_test/node_modules/playwright-core ]]; then
  echo "FAIL: tools/browser_test/node_modules/playwright-core missing:" \
    "run (cd tools/browser_test && npm install), as scripts/test.sh does"
  exit 1
fi
if [[ ! -f $ROOT/models/minimax-m3-tiny/config.json ]]; then
  echo "FAIL: the bundled model models/minimax-m3-tiny is missing"
  exit 1
fi

start_server "$WORK/server.log" "$ROOT/models/minimax-m3-tiny" \
  --served-model-name MiniMaxAI/minimax-m3-tiny --threads 2 --api-key "$KEY" --max-model-len 2048
URL=http://127.0.0.1:$PORT
fails=0
expect_head() {  # expect_head PATH STATUS HEADER-PATTERN...: curl -D, each pattern on its own line
  local path=$1 status=$2
  shift 2
  local got
  got=$(curl -s -o /dev/null -D "$WORK/head" -w '%{http_code}' "$URL$path")
  local ok=1
  [[ $got == "$status" ]] || ok=0
  for pattern in "$@"; do tr -d '\r' <"$WORK/head" | grep -qix "$pattern" || ok=0; done
  if [[ $ok == 1 ]]; then echo "ok   GET $path → $status $*"; else
    echo "FAIL GET $path: got $got"; cat "$WORK/head"; fails=$((fails + 1)); fi
}
expect_head / 200 "Content-Type: text/html; charset=utf-8" "Cache-Control: no-cache" \
  "Content-Security-Policy: default-src 'self'.*"
expect_head /chat.js 200 "Content-Type: text/javascript; charset=utf-8" "Cache-Control: no-cache"
expect_head /chat.css 200 "Content-Type: text/css; charset=utf-8" "Cache-Control: no-cache"
# A path the route table does not know needs the key too: 401 before 404 (docs/api.md "Auth").
expect_head /nothing.js 401
expect_head /v1/models 401
if curl -s "$URL/" | grep -q "<script type=\"module\" src=\"chat.js\">"; then echo "ok   GET / is the page"
else echo "FAIL GET / does not look like the page"; fails=$((fails + 1)); fi

node "$ROOT/tools/browser_test/chat_page_test.mjs" --url "$URL" --key "$KEY" \
  --model MiniMaxAI/minimax-m3-tiny --chromium "$CHROMIUM" \
  --screenshots "${CHAT_PAGE_SCREENSHOTS:-$WORK}" || fails=$((fails + 1))

if grep -q "ERROR\|Assertion\|terminate called" "$WORK/server.log"; then
  echo "FAIL server log has errors"; fails=$((fails + 1))
fi
[[ $fails == 0 ]] && echo "chat page e2e: all passed"
exit $fails
