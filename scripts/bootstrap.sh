#!/usr/bin/env bash
# Set up everything `make demo` or `make test` needs on a fresh machine with nothing but Python and pip.
#   scripts/bootstrap.sh demo   the virtual environment with the terminal extra
#   scripts/bootstrap.sh test   every extra, the dev tools, and the system packages the tests drive for real
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-test}"

uv_cmd() {
  if command -v uv >/dev/null 2>&1; then uv "$@"; else python3 -m uv "$@"; fi
}
if ! command -v uv >/dev/null 2>&1 && ! python3 -m uv --version >/dev/null 2>&1; then
  echo "bootstrap: installing uv with pip" >&2
  python3 -m pip install --quiet uv
fi

if [ "$what" = demo ]; then
  uv_cmd sync --quiet --frozen --extra terminal --no-dev --inexact
  exit 0
fi

uv_cmd sync --quiet --frozen --all-extras --group dev

# The tests use a real terminal multiplexer, a real browser and a real database server, never mocks.
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -x /usr/bin/chromium ] || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
fc-list 2>/dev/null | grep -qi 'noto.*cjk' || need+=(fonts-noto-cjk)
# The UI tests install the real JavaScript clients (@ag-ui/client, ai) with npm; both need Node 18 or newer.
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]} with apt-get" >&2
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
