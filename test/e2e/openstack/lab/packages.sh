# Debian packages for the lab. Sourced by lab.sh.
#
# Only library packages: the service packages (nova-api, nova-compute, keystone, placement-api) ask
# dbconfig-common questions and pull libvirt/qemu; we start the daemons ourselves from the Python
# modules instead.

LAB_PACKAGES=(
  python3-nova python3-keystone python3-placement python3-openstackclient python3-novaclient
  rabbitmq-server mariadb-server python3-pymysql uwsgi-core uwsgi-plugin-python3 curl
)

missing_packages() {
  local pkg
  for pkg in "${LAB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$' || echo "$pkg"
  done
}

ensure_packages() {
  local missing
  mapfile -t missing < <(missing_packages)
  if [ ${#missing[@]} -eq 0 ]; then say "packages present"; return; fi
  say "installing ${#missing[@]} packages: ${missing[*]}"
  # The postinst scripts of rabbitmq-server and mariadb-server try to start system services; we run
  # our own instances under $NOVALAB. A policy-rc.d that answers 101 forbids those starts; only
  # ours is removed afterwards.
  local own_policy=''
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# drainbridge novalab: no service starts during package install\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  local rc=0
  {
    [ -n "${SKIP_APT_UPDATE:-}" ] || apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
  } >"$NOVALAB/log/apt.log" 2>&1 || rc=$?
  [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
  [ "$rc" = 0 ] || { tail -25 "$NOVALAB/log/apt.log"; fail "apt-get failed ($rc), see $NOVALAB/log/apt.log"; }
  say "packages installed"
}
