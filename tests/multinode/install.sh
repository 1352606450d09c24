#!/usr/bin/env bash
# install.sh: installs the Debian packages the multinode tests need (iproute2 for namespaces, veths, a bridge and tc;
# util-linux for unshare; a one-node Slurm 22.05 with munge and mpi/pmix; jq to read the result JSON).
# Called by launch/test.sh. Needs root; as another user it only says what is missing (the tests then skip
# with exit 77 and name what they lack). Package scripts are kept from starting munge or Slurm daemons: the
# tests start and stop their own.
set -euo pipefail
pkgs="iproute2 util-linux procps jq munge slurmctld slurmd slurm-client slurm-wlm-basic-plugins"
missing=""
for p in $pkgs; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "ddpbench: multinode tests need:$missing (install them as root; the tests skip until then)" >&2
  exit 0
fi
echo "ddpbench: installing for the multinode tests:$missing" >&2
# policy-rc.d 101 = "do not start services": a package's postinst must not leave munged or slurmd running.
made_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
fi
trap '[ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
