# A stand-in for python:3.11-slim, for tests/test_compose_run.py on a machine that cannot reach
# an image registry: Debian bookworm's Python 3.11 (the base is a debootstrap'ed bookworm
# imported as BASE), with python and pip first on PATH as in the official image.
ARG BASE
FROM ${BASE}
ENV LANG=C.UTF-8 PATH=/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends python3 python3-venv ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/python
CMD ["python3"]
