#!/bin/sh
# attach-build.sh STAMP SOURCE_DIR - builds attach-service.cs once for
# attach-test.sh (a meson custom target, as build-knownheap.sh does for
# KnownHeap): the project is copied next to STAMP and built into
# attach-service/ there, then STAMP names the DLL. Needs no NuGet package.
set -eu
stamp=$1 src=$2
mkdir -p "$(dirname "$stamp")"
dir=$(cd "$(dirname "$stamp")" && pwd -P)
dotnet_dir=$dir
. "$src/dotnet-env.sh"
rm -rf "$dir/attach-service-src" "$dir/attach-service"
mkdir -p "$dir/attach-service-src"
cp "$src/attach-service.cs" "$src/attach-service.csproj" "$dir/attach-service-src/"
dotnet_build "$dir/attach-service-src" "$dir/attach-service"
echo "$dir/attach-service/AttachService.dll" >"$stamp"
