#!/bin/bash
# The Debian packages: cpack builds them from the build folder, each holds what it should (and
# nothing else), they install together into a temporary root with dpkg, and their systemd units
# pass `systemd-analyze verify` there without a word (it exits 0 on warnings, so any output
# fails). Usage: package_test.sh BUILD_DIR
set -euo pipefail
build="$1"
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps systemd-analyze; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool is not installed (scripts/setup --tests installs it)"
    exit 77
  fi
done
work=$(mktemp -d /tmp/drover_packages.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "package_test: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/debs" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
version=$(sed -n 's/^project(drover VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")

# Each package's files and links (not folders), sorted, against what it must hold.
commands="sacct sacctmgr salloc sbatch scancel scontrol sdiag sinfo sprio squeue sreport srun sshare sstat"
expect() {  # package, then its paths
  local package="$1"; shift
  local deb
  deb=$(ls "$work"/debs/"${package}"_"${version}"_*.deb 2>/dev/null) || fail "no $package package"
  printf '%s\n' "$@" | sort >"$work/$package.expected"
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|' | sort >"$work/$package.found"
  diff -u "$work/$package.expected" "$work/$package.found" ||
    fail "$package holds other files than it should (- expected, + found)"
}
client=(/usr/bin/drover /usr/bin/drover-sim /usr/bin/drover-restd /usr/lib/systemd/system/drover-authd.service
        /usr/lib/systemd/system/drover-restd.service
        /usr/share/doc/drover-client/README)
for command in $commands; do client+=("/usr/lib/drover/bin/$command"); done
expect drover-client "${client[@]}"
expect drover-controller /usr/sbin/droverctld /usr/lib/systemd/system/droverctld.service \
  /etc/default/droverctld /usr/share/doc/drover-controller/install.md \
  /usr/share/doc/drover-controller/configuration.md
expect drover-node /usr/sbin/droverd /usr/sbin/droverstepd /usr/lib/systemd/system/droverd.service \
  /etc/default/droverd /usr/share/doc/drover-node/README
slurm=()
for command in $commands; do slurm+=("/usr/bin/$command"); done
expect drover-slurm-commands "${slurm[@]}"

# Their metadata: the roles' dependencies, and Slurm's client as the conflict of Slurm's names.
field() { dpkg-deb -f "$(ls "$work"/debs/"$1"_*.deb)" "$2"; }
[[ "$(field drover-controller Depends)" == *"drover-client (= $version)"* ]] ||
  fail "drover-controller does not depend on drover-client"
[[ "$(field drover-controller Depends)" == *libpq5* ]] || fail "drover-controller lacks libpq5"
[[ "$(field drover-node Depends)" == *"drover-client (= $version)"* ]] ||
  fail "drover-node does not depend on drover-client"
[ "$(field drover-slurm-commands Conflicts)" = "slurm-client" ] ||
  fail "drover-slurm-commands does not conflict with slurm-client"

# Installed together into a temporary root (the libraries they depend on are the host's, not
# the root's: --force-depends).
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-script-chrootless -i "$work"/debs/*.deb \
  >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i into $root failed"; }
for package in drover-client drover-controller drover-node drover-slurm-commands; do
  dpkg --root="$root" -s "$package" 2>/dev/null | grep -q '^Status: install ok installed' ||
    fail "$package is not installed in the root"
done
[ "$(readlink -f "$root/usr/bin/sbatch")" = "$(readlink -f "$root/usr/bin/drover")" ] ||
  fail "sbatch does not lead to drover"
[ -x "$root/usr/sbin/droverd" ] && [ -x "$root/usr/sbin/droverstepd" ] || fail "no droverd"

# The units, verified in the root: systemd's own units beside them (their targets), and the
# programs they run (kill, for droverd's reload).
cp -rn /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
mkdir -p "$root/usr/bin"
cp "$(type -P kill)" "$root/usr/bin/kill"
[ -e "$root/bin" ] || ln -s usr/bin "$root/bin"
for unit in droverctld droverd drover-authd drover-restd; do
  said=$(systemd-analyze verify --root="$root" "$root/usr/lib/systemd/system/$unit.service" 2>&1) ||
    fail "$unit.service: $said"
  [ -z "$said" ] || fail "$unit.service: $said"
done
# What each must say.
unit() { grep -x "$2" "$root/usr/lib/systemd/system/$1.service" >/dev/null || fail "$1.service lacks $2"; }
unit droverctld "Type=notify"
unit droverctld "ExecReload=/usr/bin/scontrol reconfigure"
unit droverctld "Restart=on-failure"
unit droverctld "LimitNOFILE=131072"
unit droverd "Type=notify"
unit droverd "KillMode=process"
unit droverd "Delegate=yes"
unit drover-authd "Type=notify"
unit drover-restd "DynamicUser=yes"
echo "package_test: 4 packages built, their files, dependencies and units checked"
