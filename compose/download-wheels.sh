#!/bin/sh
# Download every wheel the bdi-rl image installs into compose/wheels, on the host: for a build
# without the network, or behind an HTTPS proxy that the host's pip trusts and the build does
# not. The build then installs from these wheels alone (compose/Dockerfile). They are for
# CPython 3.11 on Linux with this machine's architecture; compose/wheels is ignored by git.
#   sh compose/download-wheels.sh && docker compose build
# PYTHON: the Python whose pip downloads them (default: python3).
set -eu
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
case $(uname -m) in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) echo "download-wheels.sh: no manylinux wheels for $(uname -m)" >&2; exit 2 ;;
esac
requirements=$(mktemp)
trap 'rm -f "$requirements"' EXIT
"$python" -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
    > "$requirements"
"$python" -m pip download --quiet --dest compose/wheels --only-binary=:all: --implementation cp \
    --python-version 3.11 --platform "manylinux2014_$arch" --platform "manylinux_2_28_$arch" \
    "setuptools>=68" wheel -r "$requirements"
