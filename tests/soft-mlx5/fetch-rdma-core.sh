#!/usr/bin/env bash
# Build a second rdma-core runtime (libibverbs, libmlx5, pyverbs and its tests) from source into a
# cache, so the tests can also run against a release other than the system's.
#
# The `soft-mlx5` binary carries this recipe (include_str!) and runs it with bash for
# `soft-mlx5 --rdma-core VERSION` and `soft-mlx5 fetch-rdma-core [VERSION]`; scripts/fetch-rdma-core
# calls the latter.
#
# Usage: soft-mlx5 fetch-rdma-core [VERSION]      (default: 59.0)
# Prints, as its last line on stdout, the build directory <dir>/build, where
#   <dir>/build/lib                   libibverbs.so.1, libmlx5.so.1, ... (and lib/pkgconfig)
#   <dir>/build/etc/libibverbs.d      the provider config this libibverbs reads (compiled in)
#   <dir>/build/python                pyverbs (PYTHONPATH)
#   <dir>/build/bin/run_tests.py      rdma-core's python tests, from <dir>/tests
# e.g. dir=$(soft-mlx5 fetch-rdma-core | tail -n1); LD_LIBRARY_PATH=$dir/lib $dir/bin/ibv_devices
#
# The source comes from PyPI: the sdist of pyverbs <VERSION> carries the whole rdma-core tree of that
# release, and PyPI is reachable where GitHub is not. The build is IN_PLACE: paths into the build
# directory are compiled in, so the cache directory must not be moved once built.
#
# Environment:
#   MLX5DV_CACHE   cache root (default: $HOME/.cache/mlx5dv); the tree lands in $MLX5DV_CACHE/rdma-core-<version>
set -euo pipefail

cache="${MLX5DV_CACHE:-$HOME/.cache/mlx5dv}"
v="${1:-59.0}"
dir="$cache/rdma-core-$v"
log="$cache/rdma-core-$v.log"
stamp="$dir/.mlx5dv-built"
python=/usr/bin/python3
cmake_args=(-GNinja -DIN_PLACE=1 -DNO_MAN_PAGES=1 -DNO_PYVERBS=0 -DCMAKE_BUILD_TYPE=RelWithDebInfo
    "-DPYTHON_EXECUTABLE=$python")
# The stamp records how the tree was built, so changing the recipe above rebuilds it.
recipe="rdma-core $v: cmake ${cmake_args[*]}"

built() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; }
if built; then
    echo "$dir/build"
    exit 0
fi

mkdir -p "$cache"
# Two test runs starting at once must not build into the same directory.
exec 9>"$cache/rdma-core-$v.lock"
flock 9
if built; then
    echo "$dir/build"
    exit 0
fi

fail() {
    echo "fetch-rdma-core: $*" >&2
    echo "  log: $log" >&2
    exit 1
}

# Build dependencies (Debian names); cython3 and python3-dev for pyverbs, which cmake otherwise skips silently.
pkgs=(gcc cmake ninja-build pkg-config cython3 python3-dev python3-docutils libnl-3-dev libnl-route-3-dev libudev-dev)
# Debian's pip for Debian's python if present; any pip does for a download.
if "$python" -m pip --version >/dev/null 2>&1; then
    pip=("$python" -m pip)
elif python3 -m pip --version >/dev/null 2>&1; then
    pip=(python3 -m pip)
else
    pip=("$python" -m pip)
    pkgs+=(python3-pip)
fi
missing=()
arch=$(dpkg --print-architecture)
# "pkg:arch" as well: Multi-Arch packages are ambiguous by bare name once arm64 is also installed.
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$arch" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "fetch-rdma-core: as root, run: apt-get update && apt-get install ${missing[*]}" >&2
        exit 1
    fi
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

start=$SECONDS
: >"$log"
# Beside the cache dir rather than in /tmp, so the finished tree is renamed into place, not copied.
tmp=$(mktemp -d "$cache/.rdma-core-$v.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "fetch-rdma-core: downloading pyverbs $v from PyPI, building rdma-core $v into $dir (log: $log)" >&2
# --no-binary pyverbs, not :all:, so pip's metadata step gets its build backend (cmake, ninja, ...)
# as wheels instead of compiling them from source for ten minutes.
"${pip[@]}" download --no-deps --no-binary pyverbs -d "$tmp" "pyverbs==$v" >>"$log" 2>&1 ||
    fail "pip download pyverbs==$v failed (is that version on PyPI?)"
tar -xzf "$tmp/pyverbs-$v.tar.gz" -C "$tmp" >>"$log" 2>&1 || fail "cannot unpack $tmp/pyverbs-$v.tar.gz"
src="$tmp/pyverbs-$v/rdma-core"
[ -f "$src/CMakeLists.txt" ] || fail "pyverbs-$v.tar.gz has no rdma-core/CMakeLists.txt; its layout changed"
# pyverbs' version and rdma-core's are meant to match; a mismatch would silently test another release.
src_v=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$src/CMakeLists.txt")
[ "$src_v" = "$v" ] || fail "pyverbs $v carries rdma-core '$src_v', not $v"

# A half-built tree from an earlier failure is useless: start from the fresh source.
rm -rf "$dir"
mv "$src" "$dir"
mkdir "$dir/build"
# Only what the tests load: libibverbs, libmlx5, librdmacm, pyverbs (every cython module, which
# pulls in the providers it wraps) and the verbs tools; not the other providers, ibacm,
# infiniband-diags, iwpmd, srp_daemon, the rdma_cm utilities (about half of the 469 build steps:
# measured 119 s against 291 s for everything, 2 cores). The stamp does not record this: a tree
# built whole before holds all of it.
(cd "$dir/build" && cmake "${cmake_args[@]}" ..) >>"$log" 2>&1 ||
    fail "configuring rdma-core $v in $dir/build failed; the end of the log:"$'\n'"$(tail -n 20 "$log")"
mapfile -t pyverbs < <(cd "$dir/build" && ninja -t targets all | sed -n 's/^\(python\/pyverbs\/[^:]*\.so\): .*/\1/p')
[ ${#pyverbs[@]} -gt 0 ] || fail "the cmake build of rdma-core $v has no pyverbs modules (is cython3 installed?)"
(cd "$dir/build" && ninja ibverbs mlx5 rdmacm ibv_devinfo ibv_devices ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong \
    ibv_srq_pingpong "${pyverbs[@]}") >>"$log" 2>&1 ||
    fail "building rdma-core $v in $dir/build failed; the end of the log:"$'\n'"$(tail -n 20 "$log")"
# Provider files of providers not built would make libibverbs warn about each on every start.
for f in "$dir/build/etc/libibverbs.d/"*.driver; do
    lib=$(sed -n 's/^driver //p' "$f") keep=
    for so in "$lib"-rdmav*.so "$lib".so; do [ -e "$so" ] && keep=1; done
    [ -n "$keep" ] || rm -f "$f"
done

b="$dir/build"
# Globs for the cython modules: their suffix names the python version (device.cpython-311-x86_64-linux-gnu.so).
for f in lib/libibverbs.so.1 lib/libmlx5.so.1 etc/libibverbs.d/mlx5.driver bin/run_tests.py \
    'python/pyverbs/device.*so' 'python/pyverbs/providers/mlx5/mlx5dv.*so'; do
    compgen -G "$b/$f" >/dev/null || fail "the build has no $b/$f (pyverbs is skipped when cmake finds no Cython)"
done

echo "$recipe" >"$stamp"
echo "fetch-rdma-core: built rdma-core $v in $((SECONDS - start)) s (log: $log)" >&2
echo "$b"
