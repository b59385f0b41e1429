#!/usr/bin/env bash
# Builds hetlb's C library with MPI (release) and installs it under PREFIX:
#   PREFIX/lib/libhetlb.so, PREFIX/lib/libhetlb.a
#   PREFIX/include/hetlb.h, PREFIX/include/hetlb.f90
#   when mpifort is found, the Fortran module compiled: PREFIX/include/hetlb.mod and
#   PREFIX/lib/libhetlb_fortran.so, libhetlb_fortran.a (its procedures), and
#   PREFIX/lib/pkgconfig/hetlb-fortran.pc
#   PREFIX/lib/pkgconfig/hetlb.pc, PREFIX/lib/cmake/hetlb/hetlbConfig*.cmake
# Usage: crates/hetlb-capi/install.sh PREFIX     (HETLB_NO_BUILD=1: install what is built)
# The MPI is the one whose C compiler wrapper MPICC names (default mpicc), and the Fortran
# module is compiled with MPIFORT (default mpifort): for Open MPI on Debian,
#   MPICC=mpicc.openmpi MPIFORT=mpifort.openmpi CARGO_TARGET_DIR=target-openmpi install.sh PREFIX
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
mpicc="${MPICC:-mpicc}"
mpifort="${MPIFORT:-mpifort}"

if [ -z "${HETLB_NO_BUILD:-}" ]; then
    (cd "$root" && MPICC="$mpicc" cargo build --release -p hetlb-capi --features mpi)
fi
for f in libhetlb.so libhetlb.a; do
    if [ ! -f "$target/release/$f" ]; then
        echo "error: $target/release/$f is missing (cargo build --release -p hetlb-capi --features mpi)" >&2
        exit 1
    fi
done

install -d "$prefix/lib/pkgconfig" "$prefix/lib/cmake/hetlb" "$prefix/include"
install -m 755 "$target/release/libhetlb.so" "$prefix/lib/"
install -m 644 "$target/release/libhetlb.a" "$prefix/lib/"
install -m 644 "$root/include/hetlb.h" "$root/include/hetlb.f90" "$prefix/include/"
subst() {
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@MPICC@|$mpicc|g" \
        -e "s|@MPIFORT@|$mpifort|g" "$1" > "$2"
}
subst "$here/pkg/hetlb.pc.in" "$prefix/lib/pkgconfig/hetlb.pc"
subst "$here/pkg/hetlbConfig.cmake.in" "$prefix/lib/cmake/hetlb/hetlbConfig.cmake"
subst "$here/pkg/hetlbConfigVersion.cmake.in" "$prefix/lib/cmake/hetlb/hetlbConfigVersion.cmake"
if command -v "$mpifort" > /dev/null; then
    # The module's procedures go in a library of their own (libhetlb_fortran, linked against
    # libhetlb), so that a program links with -lhetlb_fortran as pkg-config and CMake say.
    build="$(mktemp -d)"
    trap 'rm -rf "$build"' EXIT
    (cd "$build" && "$mpifort" -fPIC -c "$prefix/include/hetlb.f90" -o hetlb_fortran.o)
    install -m 644 "$build/hetlb.mod" "$prefix/include/"
    ar rcs "$build/libhetlb_fortran.a" "$build/hetlb_fortran.o"
    # Linked by the wrapper's own compiler: the module calls no MPI function itself (only
    # libhetlb's, which carries its MPI), and a wrapper's -lmpi may name another MPI's library
    # through the system's alternative.
    fc="$("$mpifort" -showme:command 2> /dev/null || "$mpifort" -show | awk '{print $1}')"
    "$fc" -shared "$build/hetlb_fortran.o" -o "$build/libhetlb_fortran.so" \
        -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lhetlb
    install -m 755 "$build/libhetlb_fortran.so" "$prefix/lib/"
    install -m 644 "$build/libhetlb_fortran.a" "$prefix/lib/"
    subst "$here/pkg/hetlb-fortran.pc.in" "$prefix/lib/pkgconfig/hetlb-fortran.pc"
else
    echo "note: $mpifort not found: the Fortran module is installed as source only" >&2
fi
echo "hetlb $version installed in $prefix"
