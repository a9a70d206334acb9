#!/bin/sh
# build-program.sh STAMP SOURCE_DIR NAME OUT ASSEMBLY - builds a test
# program of the CoreCLR tests once (a meson custom target): NAME.cs and
# NAME.csproj are copied next to STAMP (dotnet writes bin/ and obj/ beside
# its project) and built into OUT/ there, then STAMP names the program,
# OUT/ASSEMBLY.dll. Needs no NuGet package.
set -eu
stamp=$1 src=$2 name=$3 out=$4 assembly=$5
mkdir -p "$(dirname "$stamp")"
dir=$(cd "$(dirname "$stamp")" && pwd -P)
dotnet_dir=$dir
. "$src/dotnet-env.sh"
rm -rf "$dir/$out-src" "$dir/$out"
mkdir -p "$dir/$out-src"
cp "$src/$name.cs" "$src/$name.csproj" "$dir/$out-src/"
dotnet_build "$dir/$out-src" "$dir/$out"
echo "$dir/$out/$assembly.dll" >"$stamp"
