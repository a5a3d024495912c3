#!/usr/bin/env bash
# Builds a User-Mode Linux kernel that runs guests on current hosts, from Debian's
# kernel source package, and prints the kernel's path (the value for
# bobbin.nodemanager.uml.kernel). No root needed: apt runs on a private state directory.
#
# Why: Debian 12's packaged linux.uml (6.1) hands the host's ptrace a fixed 2,696-byte
# XSAVE area; a host whose CPU has more register state (AMX: 11,008 bytes) refuses it and
# every guest dies at its first process (container/umlprobe.go). Upstream UML sizes the
# FP state from the host since 6.13. Debian serves 7.2's source in trixie-backports, from
# the same archive as the host's own packages: that source, built as UML with upstream's
# defconfig and uml.config beside this script.
#
# The kernel is cached outside the repository, keyed by the source package's version and
# the hash of this script and uml.config: a second run with the same key builds nothing.
# Offline, the newest kernel cached for this script and uml.config is used.
#
# Environment:
#   BOBBIN_UML_KERNEL_CACHE  cache directory (default ~/.cache/bobbin/uml-kernel)
#   BOBBIN_UML_SOURCE        source package (default linux-source-7.2)
#   BOBBIN_UML_SUITE         Debian suite that serves it (default trixie-backports)
#   BOBBIN_UML_MIRROR        Debian archive URI (default: the one this host's apt uses)
#   BOBBIN_UML_JOBS          parallel compile jobs (default: nproc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${BOBBIN_UML_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bobbin/uml-kernel}
package=${BOBBIN_UML_SOURCE:-linux-source-7.2}
suite=${BOBBIN_UML_SUITE:-trixie-backports}
jobs=${BOBBIN_UML_JOBS:-$(nproc)}
say() { echo "uml-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

recipe=$(cat "$here/build.sh" "$here/uml.config" | sha256sum | cut -c1-12)
mkdir -p "$cache"

# The newest kernel already built from this recipe, if any (the offline fallback).
cached_kernel() {
	local k
	k=$(ls -1d "$cache"/*-"$recipe"/linux 2>/dev/null | sort -V | tail -1)
	[ -n "$k" ] && [ -x "$k" ] && echo "$k"
}

missing=()
for tool in apt-get apt-cache dpkg-deb tar xz make gcc ld flex bison bc perl sha256sum; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done

# The archive this host's apt uses for Debian's own packages.
mirror=${BOBBIN_UML_MIRROR:-}
if [ -z "$mirror" ] && command -v apt-get >/dev/null 2>&1; then
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 'Label: Debian' 2>/dev/null | head -1 || true)
	[ -n "$mirror" ] || mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null | grep -m1 '/debian/$' || true)
fi

apt_dir=$cache/apt
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State=$apt_dir/state" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::Status=$apt_dir/status"
	-o "Dir::Cache=$apt_dir/cache" -o "Dir::Cache::Archives=$apt_dir/archives" -o Debug::NoLocking=1
	-o APT::Sandbox::User="$(id -un)")
version=
if [ -n "$mirror" ] && [ ${#missing[@]} -eq 0 ]; then
	mkdir -p "$apt_dir/state" "$apt_dir/lists/partial" "$apt_dir/cache" "$apt_dir/archives/partial"
	: >"$apt_dir/status"
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	echo "deb [signed-by=$keyring] ${mirror%/} $suite main" >"$apt_dir/sources.list"
	if apt-get -q "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1; then
		version=$(apt-cache "${apt_opts[@]}" policy "$package" 2>/dev/null | awk '/Candidate:/{print $2}')
		[ "$version" = "(none)" ] && version=
	else
		say "apt-get update of $suite failed (see $apt_dir/update.log)"
	fi
fi
if [ -z "$version" ]; then
	if k=$(cached_kernel); then
		say "cannot look up $package in $suite; using the cached $k"
		echo "$k"
		exit 0
	fi
	[ ${#missing[@]} -eq 0 ] || die "cannot build: missing ${missing[*]} (Debian packages apt, dpkg, tar, xz-utils, make, gcc, binutils, flex, bison, bc, perl)"
	[ -n "$mirror" ] || die "cannot tell which Debian archive this host uses: set BOBBIN_UML_MIRROR"
	die "Debian's $suite does not serve $package (set BOBBIN_UML_SOURCE and BOBBIN_UML_SUITE)"
fi

key=$(echo "$version" | tr -c 'A-Za-z0-9.+\n' '_')-$recipe
out=$cache/$key
if [ -x "$out/linux" ]; then
	echo "$out/linux"
	exit 0
fi

say "building a UML kernel from $package $version ($suite) with $jobs jobs: a few minutes"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work" "${staged:-}"' EXIT
(cd "$work" && apt-get -q "${apt_opts[@]}" download "$package=$version" >"$work/download.log" 2>&1) ||
	die "apt-get download $package=$version failed: $(tail -3 "$work/download.log")"
dpkg-deb -x "$work"/"$package"_*.deb "$work/deb" || die "cannot unpack $package"
tarball=$(find "$work/deb/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | head -1)
[ -n "$tarball" ] || die "$package has no source tarball"
tar -C "$work" -xf "$tarball" || die "cannot unpack $tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -1)
[ -n "$src" ] || die "$tarball holds no linux-source-* tree"
# Each step checked on its own line: set -e does not hold inside a group on the left of ||.
cd "$src" || die "cannot enter $src"
make -s ARCH=um defconfig || die "make defconfig failed"
scripts/kconfig/merge_config.sh -m .config "$here/uml.config" >/dev/null || die "merging uml.config failed"
make -s ARCH=um olddefconfig || die "make olddefconfig failed"
# Every option asked for must have survived olddefconfig (a dependency missing drops one
# silently).
while read -r want; do
	case $want in '' | '#'*) continue ;; esac
	grep -qx "$want" .config || die "$want did not survive olddefconfig"
done <"$here/uml.config"
make -s ARCH=um -j"$jobs" linux >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; die "building $package $version failed"; }
strip --strip-debug linux || die "strip failed"
cd - >/dev/null
# Into place by rename, from a directory of this run's own: two runs on one cache do not
# mix their files.
staged=$(mktemp -d "$cache/staged.XXXXXX")
cp "$src/linux" "$staged/linux"
cp "$src/.config" "$staged/config"
echo "$package $version from $suite; recipe $recipe; built $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$staged/SOURCE"
chmod 755 "$staged"
rm -rf "$out"
mv -T "$staged" "$out" || die "cannot move the kernel to $out"
say "built $out/linux"
echo "$out/linux"
