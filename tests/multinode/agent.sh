#!/bin/sh
# tests/multinode/agent.sh: Open MPI's rsh agent for the emulated hosts (--mca plm_rsh_agent). Called as
# `agent.sh HOST COMMAND...` where ssh would be; runs COMMAND (an orted start line) in HOST's network namespace,
# in a new UTS namespace whose hostname is HOST, after the host's own environment file ($MN_DIR/env.HOST) if any.
# It must never reach a host outside the harness: HOST must be a namespace the harness made.
set -e
host=$1
shift
case "$host" in ddpb*) ;; *) echo "agent.sh: $host is not an emulated host" >&2; exit 255 ;; esac
envf=${MN_DIR:-/nonexistent}/env.$host
exec ip netns exec "$host" unshare --uts sh -c "hostname '$host'; [ -r '$envf' ] && . '$envf'; $*"
