#!/usr/bin/env bash
# Builds the GMP that `cargo build --features system-gmp` links, into .gmp/ (git-ignored).
#
# rug's gmp-mpfr-sys builds GMP 6.3.0 as a fat binary, which picks its x86_64 code by CPU model
# at run time. GMP 6.3.0's table of Intel models ends at Kaby Lake: on anything newer (Ice Lake,
# Sapphire/Emerald/Granite Rapids, the GPU hosts we measure on) it runs its generic x86_64 code,
# ~1.8x slower than its Skylake code (bench/notes/cpu.md); its AMD table ends at Zen 3/4. This
# script builds the same source, configured the same way (--enable-fat --disable-shared
# --with-pic: the binaries stay portable), with one change, scripts/gmp-fat-newer-cpus.patch: an
# Intel model or AMD family newer than the tables gets the code its features allow (with BMI2
# and ADX: the Skylake code, the Zen code), and Broadwell to Kaby Lake, whose BMI2 test read the
# wrong CPUID leaf (so they ran the Sandy Bridge code), test the right one. Then GMP's own tests.
# Does nothing when .gmp/ already holds this build. Needs m4, patch and a C compiler.
#
#   scripts/gmp.sh && cargo build --release --features system-gmp
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
patch_file=$root/scripts/gmp-fat-newer-cpus.patch
dest=$root/.gmp
# The GMP source is the one in the gmp-mpfr-sys crate that Cargo.lock pins.
manifest=$(cargo metadata --locked --format-version 1 \
  | grep -o '"manifest_path":"[^"]*/gmp-mpfr-sys-[^"/]*/Cargo.toml"' | head -1 | sed 's/^"manifest_path":"//; s/"$//')
[ -n "$manifest" ] || { echo "gmp.sh: cargo metadata names no gmp-mpfr-sys package" >&2; exit 1; }
src=$(find "$(dirname "$manifest")" -maxdepth 1 -type d -name 'gmp-*-c' | head -1)
[ -n "$src" ] || { echo "gmp.sh: no GMP source in $(dirname "$manifest")" >&2; exit 1; }
stamp="$(basename "$(dirname "$manifest")") $(basename "$src") patch $(sha256sum < "$patch_file" | cut -c1-16)"
if [ -f "$dest/lib/libgmp.a" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "gmp.sh: .gmp/ holds this build already ($stamp)"
  exit 0
fi
rm -rf "$dest"
mkdir -p "$dest/build"
cp -r "$src" "$dest/src"
chmod -R u+w "$dest/src"
(cd "$dest/src" && patch -p1 --quiet < "$patch_file") \
  || { echo "gmp.sh: $patch_file does not apply to $(basename "$src")" >&2; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
echo "gmp.sh: building $(basename "$src") with the patch into .gmp/ (configure, make, make check: ~2 min on 2 cores)"
cd "$dest/build"
../src/configure --enable-fat --disable-shared --with-pic --prefix="$dest" > configure.log 2>&1 \
  || { tail -20 configure.log; echo "gmp.sh: configure failed (log above)" >&2; exit 1; }
make -j"$jobs" > make.log 2>&1 || { tail -20 make.log; echo "gmp.sh: make failed" >&2; exit 1; }
make -j"$jobs" check > check.log 2>&1 || { grep -B5 '^FAIL' check.log | tail -40; echo "gmp.sh: GMP's tests failed" >&2; exit 1; }
echo "gmp.sh: GMP's tests: $(grep -h '^# PASS:' check.log | awk '{ s += $3 } END { print s }') passed, $(grep -h '^# FAIL:' check.log | awk '{ s += $3 } END { print s }') failed"
make install > install.log 2>&1 || { tail -20 install.log; exit 1; }
cd "$root"
rm -rf "$dest/src" "$dest/build"
echo "$stamp" > "$dest/stamp"
echo "gmp.sh: done: .gmp/lib/libgmp.a ($stamp)"
