#!/usr/bin/env bash
# Runs the relocatable bundle's own suite (tests/run_tests.sh) on a bare
# Debian 12: a minimal root made by `debootstrap --variant=minbase bookworm`
# (no python3, numpy, zstd or any library of ours), the bundle unpacked in
# /opt, the suite run in a chroot with /proc mounted. Needs root and
# debootstrap (scripts/install-deps.sh); the mirror is the first Debian one
# apt is configured with, unless given. The root is kept for the next run
# when --root names it.
# usage: scripts/bare_debian_test.sh BUNDLE.tar.gz [--root DIR] [--mirror URL] [RUN_TESTS_ARGS...]
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
bundle=$(realpath "$1")
shift
root=""
mirror=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "bare_debian_test.sh: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "bare_debian_test.sh: debootstrap is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
keep=1
if [ -z "$root" ]; then
  root=$(mktemp -d "${TMPDIR:-/tmp}/bare-debian-XXXXXX")
  keep=0
fi
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  [ "$keep" = 1 ] || rm -rf "$root"
}
trap cleanup EXIT
if [ ! -x "$root/bin/bash" ]; then
  echo "bare_debian_test.sh: debootstrap --variant=minbase bookworm $root $mirror" >&2
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    { tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
fi
rm -rf "$root/opt/extshuffle-"*
tar -C "$root/opt" -xzf "$bundle"
name=$(basename "$bundle" .tar.gz)  # scripts/bundle.sh names the archive after its folder
mount -t proc proc "$root/proc"
echo "bare_debian_test.sh: /opt/$name/tests/run_tests.sh $* in $root" >&2
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp \
  /bin/bash "/opt/$name/tests/run_tests.sh" --log-dir /tmp/extshuffle-bare-logs "$@"
