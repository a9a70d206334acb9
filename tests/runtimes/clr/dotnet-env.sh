# dotnet-env.sh - sourced, not run: the environment in which the CoreCLR
# tests and benchmark build C# with the .NET SDK. Everything the SDK writes
# (its first-run marker, NuGet's caches and packages) stays under the build
# directory $dotnet_dir, which the including script sets first, never in
# the user's home; no telemetry, no banner.
# Only the SDK's own targeting pack is needed for the runtime the SDK
# brings; older runtimes' packs come from NuGet (dotnet_publish_for).
dotnet_home=$dotnet_dir/dotnet-home
mkdir -p "$dotnet_home"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
	DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 DOTNET_CLI_HOME="$dotnet_home" \
	HOME="$dotnet_home" NUGET_PACKAGES="$dotnet_dir/nuget-packages" \
	DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1 \
	DOTNET_GENERATE_ASPNET_CERTIFICATE=false MSBUILDDISABLENODEREUSE=1 \
	DOTNET_CLI_USE_MSBUILD_SERVER=0

# The .NET diagnostic tools that tools/install-deps.sh --tests installs.
dotnet_tools=${HEAPTRACE_DOTNET_TOOLS:-/opt/heaptrace/dotnet-tools}

# dotnet_tool NAME: the path of a .NET diagnostic tool, or nothing.
dotnet_tool() {
	if [ -x "$dotnet_tools/$1" ]; then
		echo "$dotnet_tools/$1"
	else
		command -v "$1" 2>/dev/null
	fi
}

# dotnet_build PROJECT_DIR OUT_DIR: builds the project for the SDK's own
# runtime (framework-dependent, run with `dotnet OUT_DIR/NAME.dll`).
dotnet_build() {
	dotnet build "$1" -c Release -o "$2" -nologo -v quiet -clp:NoSummary
}

# dotnet_publish_for TFM PROJECT_DIR OUT_DIR: publishes the project
# self-contained for an older runtime (net8.0, net9.0), its runtime pack,
# reference pack and apphost restored from NuGet: run as OUT_DIR/NAME.
dotnet_publish_for() {
	timeout -k 5 300 dotnet publish "$2" -c Release \
		-p:KnownHeapFramework="$1" -r linux-x64 --self-contained \
		-p:UseAppHost=true -o "$3" -nologo -v quiet -clp:NoSummary
}
