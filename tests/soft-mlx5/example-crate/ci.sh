#!/bin/sh
# The CI recipe for a crate tested on soft-mlx5 (emulated ConnectX nodes): a plain shell script
# any CI runs on a Debian machine with Rust. docs/testing.md, "soft-mlx5 for your crate".
#
#   ./ci.sh            from the crate's directory
#
# SOFT_MLX5_INSTALL: what `cargo install` installs soft-mlx5 from when it is not on PATH
# (default: `soft-mlx5`, the registry; before it is published, e.g.
# `--git https://github.com/mlx5dv/mlx5dv soft-mlx5` or `--path /path/to/mlx5dv/tests/soft-mlx5`).
set -eu

# 1. rdma-core's user space (libibverbs, libmlx5 and their headers) and a C compiler.
# (By "name:arch" too: a bare name is ambiguous to dpkg once another architecture's
# libibverbs-dev is installed beside it, as for cross builds.)
arch=$(dpkg --print-architecture)
if [ "$(id -u)" = 0 ] && ! dpkg -s libibverbs-dev >/dev/null 2>&1 && ! dpkg -s "libibverbs-dev:$arch" >/dev/null 2>&1; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        build-essential pkg-config libibverbs-dev ibverbs-providers ibverbs-utils
fi

# 2. The tool (one binary; it carries the interposer it preloads).
if ! command -v soft-mlx5 >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    cargo install ${SOFT_MLX5_INSTALL:-soft-mlx5}
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
soft-mlx5 --version

# 3. Build once, then run the tests on one emulated node and on three (node 0 serves, nodes 1
#    and 2 write into it; they meet in $SOFT_MLX5_RENDEZVOUS), on InfiniBand and on RoCE.
cargo test --no-run -q
soft-mlx5 -- cargo test -q
soft-mlx5 --nodes 3 --timeout 120 -- cargo test -q
soft-mlx5 --nodes 3 --timeout 120 --profile cx6dx-roce -- cargo test -q
# The same on a 1% lossy wire: retries, PSNs and NAKs as IBA specifies them.
soft-mlx5 --nodes 3 --timeout 120 --lossy loss=0.01,seed=1 -- cargo test -q
