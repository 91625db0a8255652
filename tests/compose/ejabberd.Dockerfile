# A stand-in for ghcr.io/processone/ejabberd:23.01, for tests/test_compose_run.py on a machine
# that cannot reach an image registry: Debian's ejabberd 23.01 laid out as that image is (its
# .github/container/Dockerfile at tag 23.01): user ejabberd uid/gid 9000, home /opt/ejabberd,
# config, database, logs and upload under it (each a VOLUME), node ejabberd@localhost,
# `ejabberdctl` on PATH as the entry point, `foreground` as the command. As there, `foreground`
# execs the Erlang VM, which stops on SIGTERM (Debian's script keeps a shell in front of it,
# which ignores SIGTERM as PID 1: `docker stop` would wait out its grace period and kill it).
ARG BASE
FROM ${BASE}
ENV HOME=/opt/ejabberd
RUN addgroup --system --gid 9000 ejabberd \
 && adduser --system --uid 9000 --gid 9000 --home /opt/ejabberd --shell /bin/sh ejabberd \
 && printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ejabberd >/dev/null \
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d \
 && mkdir -p /opt/ejabberd/conf /opt/ejabberd/database /opt/ejabberd/logs /opt/ejabberd/upload \
 && cp /etc/ejabberd/ejabberd.yml /etc/ejabberd/inetrc /opt/ejabberd/conf/ \
 && printf '%s\n' '#!/bin/sh' \
      '[ -z "$ERLANG_NODE_ARG" ] && export ERLANG_NODE_ARG=ejabberd@localhost' \
      'export CONFIG_DIR=/opt/ejabberd/conf' \
      'export LOGS_DIR=/opt/ejabberd/logs' \
      'export SPOOL_DIR=/opt/ejabberd/database' \
      'exec /usr/local/lib/ejabberdctl "$@"' > /usr/local/bin/ejabberdctl \
 && sed 's/^        exec_erl "$ERLANG_NODE" $EJABBERD_OPTS -noinput$/        exec "$ERL" ${S:--}name "$ERLANG_NODE" $ERLANG_OPTS $EJABBERD_OPTS -noinput/' \
        /usr/sbin/ejabberdctl > /usr/local/lib/ejabberdctl \
 && grep -q '^        exec "$ERL"' /usr/local/lib/ejabberdctl \
 && chmod +x /usr/local/bin/ejabberdctl /usr/local/lib/ejabberdctl \
 && chown -R ejabberd:ejabberd /opt/ejabberd
HEALTHCHECK --interval=1m --timeout=5s --start-period=5s --retries=10 CMD /usr/local/bin/ejabberdctl status
WORKDIR /opt/ejabberd
USER ejabberd
VOLUME ["/opt/ejabberd/conf", "/opt/ejabberd/database", "/opt/ejabberd/logs", "/opt/ejabberd/upload"]
EXPOSE 5222 5269 5280 5443
ENTRYPOINT ["/usr/local/bin/ejabberdctl"]
CMD ["foreground"]
