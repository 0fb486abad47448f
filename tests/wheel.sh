#!/usr/bin/env bash
# The pip package: builds the wheel with maturin (bin bindings, pyproject.toml), installs it into
# a fresh venv and runs `toolmend --version` and `toolmend demo` from that venv. The release
# build is cargo's own (target/release), so a second run only repackages it.
set -euo pipefail
cd "$(dirname "$0")/.."
work=target/wheel
maturin_version=1.16.0
fail() { echo "wheel: FAILED: $*" >&2; exit 1; }

if ! "$work/build-venv/bin/maturin" --version 2>/dev/null | grep -qx "maturin $maturin_version"; then
  python3 -m venv "$work/build-venv"
  "$work/build-venv/bin/pip" install --quiet --disable-pip-version-check "maturin==$maturin_version"
fi
rm -rf "$work/dist" "$work/fresh"
"$work/build-venv/bin/maturin" build --release --quiet --out "$work/dist"
wheels=("$work"/dist/toolmend-*.whl)
[ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || fail "expected one wheel in $work/dist, found: ${wheels[*]}"

python3 -m venv "$work/fresh"
"$work/fresh/bin/pip" install --quiet --disable-pip-version-check --no-index "${wheels[0]}"
installed="$work/fresh/bin/toolmend"
[ -x "$installed" ] || fail "the wheel put no toolmend into the venv's bin"

crate_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
reported=$("$installed" --version)
[ "$reported" = "toolmend $crate_version" ] || fail "--version says '$reported', Cargo.toml says $crate_version"
case "$(basename "${wheels[0]}")" in
  "toolmend-$crate_version-"*) ;;
  *) fail "the wheel's name does not carry the crate's name and version: ${wheels[0]}" ;;
esac

demo=$(cd "$work" && env -i PATH="$PWD/fresh/bin:/usr/bin:/bin" toolmend demo)
grep -qF '"terms":["token machine payout percentage"]' <<<"$demo" || fail "the demo did not show the repaired call: $demo"
grep -qF 'toolmend_tool_calls_total{tool="search",outcome="repaired"} 1' <<<"$demo" \
  || fail "the demo did not count the repair: $demo"
echo "wheel: ok ($(basename "${wheels[0]}"), $reported, demo repaired the seed call)"
