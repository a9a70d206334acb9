#!/bin/sh
# build-statics.sh STAMP SOURCE_DIR - builds Statics.cs once for
# statics-test.sh (a meson custom target), as build-knownheap.sh builds
# KnownHeap.cs: the project copied next to STAMP, built into statics/
# there, then STAMP written. Needs no NuGet package.
set -eu
stamp=$1 src=$2
mkdir -p "$(dirname "$stamp")"
dir=$(cd "$(dirname "$stamp")" && pwd -P)
dotnet_dir=$dir
. "$src/dotnet-env.sh"
rm -rf "$dir/statics-src" "$dir/statics"
mkdir -p "$dir/statics-src"
cp "$src/Statics.cs" "$src/Statics.csproj" "$dir/statics-src/"
dotnet_build "$dir/statics-src" "$dir/statics"
echo "$dir/statics/Statics.dll" >"$stamp"
