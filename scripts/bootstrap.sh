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
  echo "bootstrap: installing uv with pip (for this user)" >&2
  # --user: no root needed. A Python that forbids pip installs (PEP 668, Debian's and Ubuntu's own) refuses even
  # that: say so and what to do, rather than fail with pip's message alone.
  if ! python3 -m pip install --quiet --user uv; then
    echo "bootstrap: pip could not install uv here; install it yourself (https://docs.astral.sh/uv/, or" \
      "pipx install uv) and run this again" >&2
    exit 1
  fi
fi

if [ "$what" = demo ]; then
  uv_cmd sync --quiet --frozen --extra terminal --no-dev --inexact
  exit 0
fi

uv_cmd sync --quiet --frozen --all-extras --group dev

# The tests use a real browser, a real database server and the real JavaScript clients, never mocks; one
# terminal test runs the menu inside tmux. Each is installed with apt-get when missing (README, "Set-up").
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -x /usr/bin/chromium ] || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
fc-list 2>/dev/null | grep -qi 'noto.*cjk' || need+=(fontconfig fonts-noto-cjk)
# The UI tests install the real JavaScript clients (@ag-ui/client, ai) with npm; both need Node 18 or newer.
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=; elif command -v sudo >/dev/null 2>&1; then sudo=sudo; else sudo=missing; fi
  if ! command -v apt-get >/dev/null 2>&1 || [ "$sudo" = missing ]; then
    echo "bootstrap: the tests need ${need[*]}, and this script installs them only with apt-get, as root or" \
      "with sudo; install them yourself and run this again" >&2
    exit 1
  fi
  echo "bootstrap: installing ${need[*]} with apt-get" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 18 ]; then
  echo "bootstrap: the UI tests need Node 18 or newer, and this system's is ${node_major:-none}" \
    "(install a newer one, e.g. from https://nodejs.org)" >&2
  exit 1
fi
