#!/bin/sh
# build-knownheap.sh STAMP SOURCE_DIR - builds KnownHeap.cs once for the
# CoreCLR tests (a meson custom target): the project is copied next to
# STAMP (dotnet writes bin/ and obj/ beside its project) and built into
# knownheap/ there, then STAMP is written. Needs no NuGet package.
set -eu
stamp=$1 src=$2
mkdir -p "$(dirname "$stamp")"
dir=$(cd "$(dirname "$stamp")" && pwd -P)
dotnet_dir=$dir
. "$src/dotnet-env.sh"
rm -rf "$dir/knownheap-src" "$dir/knownheap"
mkdir -p "$dir/knownheap-src"
cp "$src/KnownHeap.cs" "$src/KnownHeap.csproj" "$dir/knownheap-src/"
dotnet_build "$dir/knownheap-src" "$dir/knownheap"
echo "$dir/knownheap/KnownHeap.dll" >"$stamp"
