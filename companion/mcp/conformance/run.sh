#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against /mcp of a real `reins headless` holding a real agent token.
#
# The suite and a Node 22 binary (it needs Node >= 22; the npm package
# node-<os>-<arch> ships one) are installed with npm into a cache dir, never
# globally. The suite cannot send request headers, so auth-preload.cjs adds
# the bearer token to the runner's requests to our port. baseline.yml lists
# the scenarios that do not apply to Reins, with the reason for each.
#
# Environment:
#   REINS_BIN                 a built reins binary (default: go build into a temp dir)
#   REINS_CONFORMANCE_CACHE   install dir (default: ~/.cache/reins/conformance)
#   CONFORMANCE_ARGS          extra arguments for the suite, e.g. "--scenario ping"
set -euo pipefail

CONFORMANCE_VERSION=0.1.16
NODE_MAJOR=22
NODE_VERSION=22.23.5

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache=${REINS_CONFORMANCE_CACHE:-${HOME}/.cache/reins/conformance}

case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) echo "conformance: unsupported OS $(uname -s)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "conformance: unsupported CPU $(uname -m)" >&2; exit 1 ;;
esac

want="$CONFORMANCE_VERSION node-$os-$arch@$NODE_VERSION"
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$want" ]; then
	command -v npm >/dev/null || { echo "conformance: npm is required to install the suite" >&2; exit 1; }
	echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION and Node $NODE_VERSION into $cache"
	mkdir -p "$cache"
	npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node-$os-$arch@$NODE_VERSION"
	echo "$want" >"$cache/.installed"
fi
node="$cache/node_modules/.bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
"$node" --version | grep -q "^v$NODE_MAJOR\." || { echo "conformance: $node is not Node $NODE_MAJOR" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/reins-conf.XXXXXX")
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${REINS_BIN:-}
if [ -z "$bin" ]; then
	bin="$work/reins"
	(cd "$root" && go build -o "$bin" ./cmd/reins)
fi

port=$("$node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
data="$work/data"
"$bin" headless --port "$port" --data-dir "$data" --keyring file --log-level warn >"$work/reins.log" 2>&1 &
pid=$!

# Wait for the health text, with a deadline; a reins that exits ends the wait.
ready=""
for _ in $(seq 1 100); do
	if ! kill -0 "$pid" 2>/dev/null; then break; fi
	if "$node" -e 'fetch(process.argv[1]).then(r=>r.text()).then(t=>process.exit(t==="browspark companion"?0:1),()=>process.exit(1))' "http://127.0.0.1:$port/"; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$ready" ]; then
	echo "conformance: reins headless did not come up on port $port" >&2
	cat "$work/reins.log" >&2
	exit 1
fi

# Issued through the running companion's admin channel, as a person would.
token=$("$bin" token issue conformance --data-dir "$data" --keyring file 2>/dev/null)

url="http://127.0.0.1:$port/mcp"
status=0
# shellcheck disable=SC2086 # CONFORMANCE_ARGS is split on purpose
REINS_TOKEN="$token" REINS_MCP_URL="$url" REINS_CONFORMANCE_MODULES="$cache/node_modules" \
	"$node" --require "$here/auth-preload.cjs" "$suite" server \
	--url "$url" --expected-failures "$here/baseline.yml" -o "$work/results" ${CONFORMANCE_ARGS:-} || status=$?
if [ "$status" -ne 0 ]; then
	echo "conformance: failed (exit $status); reins log:" >&2
	tail -n 50 "$work/reins.log" >&2
fi
exit "$status"
