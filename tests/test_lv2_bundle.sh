#!/usr/bin/env bash
# Checks the parnassus.lv2 bundle of a build tree, then its installation.
#
#   tests/test_lv2_bundle.sh WRITE_TTL BUNDLE_DIR [BUILD_DIR]
#
# WRITE_TTL is the build's pnp_write_ttl (ttl/write_ttl.c), which tells the
# plugin's URI (plugin/uris.h) and its port symbols by index, as the plugin
# is compiled with them (plugin/ports.def). BUNDLE_DIR is
# <build>/lv2/parnassus.lv2 (plugin + ttl targets built).
# With BUILD_DIR it also installs the bundle (cmake --install, component
# lv2) into a temporary prefix and checks what lands there.
#
# Checks, in order; the first failure ends the run with exit 1:
#   files     the bundle holds manifest.ttl, parnassus.ttl, presets.ttl,
#             parnassus.so and rules/<every presets/*.json>
#   serdi     every .ttl parses as Turtle
#   validate  lv2_validate on all .ttl: exit 0, "Found 0 errors"
#   rules     every state:state rule-set path of the presets is a file of
#             the bundle
#   lv2ls     with LV2_PATH holding only this bundle, lists the plugin's URI
#             and nothing else
#   lv2info   the port symbols of the plugin, in order and nothing more;
#             every preset label; the required features; the class; the
#             binary in this bundle
#   exports   nm -D --defined-only parnassus.so: exactly lv2_descriptor
#   needed    readelf -d: no OpenBLAS/BLAS/LAPACK (they are linked in
#             statically), every NEEDED entry on the allow-list, and ldd
#             resolves them all
#   install   the installed bundle has the same files, no RPATH into the
#             build tree, and lv2info reads it from there
# Exit 77 (skipped) when a tool is missing (scripts/bootstrap.sh installs
# them).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rules_src=$root/presets

# The presets of ttl/presets.ttl.in, by label.
preset_labels=("Strict" "Balanced" "Liberal" "Chorale major" "Chorale minor" "Textbook major" "Textbook minor" "Mixed modes" "Pedagogical" "Harmonize major" "Harmonize minor")
required_features=("http://lv2plug.in/ns/ext/urid#map" "http://lv2plug.in/ns/ext/worker#schedule")
# Shared libraries the plugin may need at run time (extended regexps, whole
# name). OpenBLAS must not be one: the serial static library is linked in.
needed_allowed='libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libjansson\.so\.[0-9]+|libgfortran\.so\.[0-9]+|libquadmath\.so\.[0-9]+|libasan\.so\.[0-9]+|libubsan\.so\.[0-9]+|libtsan\.so\.[0-9]+|ld-linux.*\.so\.[0-9]+'
needed_forbidden='openblas|libblas|liblapack|libcblas'

fail() { echo "test_lv2_bundle: FAIL: $*" >&2; exit 1; }
pass() { echo "test_lv2_bundle: pass: $*"; }
skip() { echo "test_lv2_bundle: SKIP: $*" >&2; exit 77; }

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: $0 WRITE_TTL BUNDLE_DIR [BUILD_DIR]" >&2; exit 2; }
write_ttl=$1
[ -x "$write_ttl" ] || fail "$write_ttl is not the build's pnp_write_ttl"
bundle=$(cd "$2" 2>/dev/null && pwd) || fail "no bundle directory $2 (build the targets parnassus_lv2 and parnassus_lv2_bundle)"
build=${3:-}

for tool in serdi lv2_validate sord_validate lv2ls lv2info nm readelf ldd; do
  command -v "$tool" >/dev/null || skip "$tool not found (scripts/bootstrap.sh installs lv2-dev, sordi, serdi, lilv-utils)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pnp-lv2-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The plugin's URI and port symbols, from the same declarations the plugin
# is compiled from.
URI=$("$write_ttl" --uri) || fail "$write_ttl --uri failed"
mapfile -t port_symbols < <("$write_ttl" --symbols)
[ "${#port_symbols[@]}" -gt 0 ] || fail "$write_ttl --symbols listed no ports"

mapfile -t rule_files < <(cd "$rules_src" && ls -1 -- *.json)
[ "${#rule_files[@]}" -gt 0 ] || fail "no rule sets in $rules_src"

# check_files DIR: the files a complete bundle holds.
check_files() {
  local dir=$1 f
  for f in manifest.ttl parnassus.ttl presets.ttl parnassus.so; do
    [ -s "$dir/$f" ] || fail "$dir/$f is missing or empty"
  done
  for f in "${rule_files[@]}"; do
    cmp -s "$rules_src/$f" "$dir/rules/$f" || fail "$dir/rules/$f is missing or differs from presets/$f"
  done
}

# check_rule_paths DIR: every state:state value of the presets, resolved
# against its file, is a rule set in DIR/rules.
check_rule_paths() {
  local dir=$1 n=0 uri path
  while read -r uri; do
    path=${uri#file://}
    case "$path" in "$dir"/rules/*.json) ;; *) fail "preset rule set $uri is not in $dir/rules" ;; esac
    [ -f "$path" ] || fail "preset rule set $path does not exist"
    n=$((n + 1))
  done < <(for f in "$dir"/presets*.ttl; do serdi -q -i turtle -o ntriples "$f"; done |
           sed -n "s|^_:[^ ]* <$URI:ruleSet> <\\([^>]*\\)> \\.\$|\\1|p")
  [ "$n" -eq "${#rule_files[@]}" ] || fail "the presets load $n rule sets, the bundle ships ${#rule_files[@]}"
  echo "$n"
}

# check_lv2info DIR: lilv on a path that holds only the bundle in DIR.
check_lv2info() {
  local dir=$1 lv2path info got
  lv2path=$(mktemp -d "$tmp/lv2path.XXXXXX")
  ln -s "$dir" "$lv2path/parnassus.lv2"
  # The core spec bundle gives the plugin classes their names; it holds no
  # plugin, so lv2ls still lists ours alone.
  local specdir
  specdir=$(pkg-config --variable=lv2dir lv2 2>/dev/null || echo /usr/lib/lv2)
  [ -d "$specdir/core.lv2" ] && ln -s "$specdir/core.lv2" "$lv2path/core.lv2"

  got=$(LV2_PATH=$lv2path lv2ls 2>&1) || fail "lv2ls failed: $got"
  [ "$got" = "$URI" ] || fail "lv2ls with LV2_PATH=<the bundle only> listed '$got', expected $URI"

  info=$(LV2_PATH=$lv2path lv2info "$URI" 2>&1) || fail "lv2info $URI failed: $info"
  printf '%s\n' "$info" > "$tmp/lv2info.txt"
  grep -q '^[[:space:]]*Name:[[:space:]]*Parnassus$' <<<"$info" || fail "lv2info: no 'Name: Parnassus'"
  grep -q "^[[:space:]]*Bundle:[[:space:]]*file://$lv2path/parnassus.lv2/\$" <<<"$info" ||
    fail "lv2info: the plugin does not come from the bundle under test"
  grep -q "^[[:space:]]*Binary:[[:space:]]*file://$lv2path/parnassus.lv2/parnassus.so\$" <<<"$info" ||
    fail "lv2info: Binary is not parnassus.so of the bundle"
  if [ -e "$lv2path/core.lv2" ]; then
    grep -q '^[[:space:]]*Class:[[:space:]]*MIDI Plugin$' <<<"$info" || fail "lv2info: the class is not 'MIDI Plugin'"
  fi

  # Ports: "Port N:" then its "Symbol:", in index order.
  mapfile -t got_symbols < <(awk '/^[[:space:]]*Port [0-9]+:/ { port = $2 + 0; next }
                                  /^[[:space:]]*Symbol:/ { print port " " $2 }' <<<"$info" | sort -n | cut -d' ' -f2)
  [ "${#got_symbols[@]}" -eq "${#port_symbols[@]}" ] ||
    fail "lv2info shows ${#got_symbols[@]} ports, the plugin has ${#port_symbols[@]}"
  local i
  for i in "${!port_symbols[@]}"; do
    [ "${got_symbols[$i]}" = "${port_symbols[$i]}" ] ||
      fail "port $i: lv2info shows symbol '${got_symbols[$i]}', the plugin's is '${port_symbols[$i]}'"
  done

  # Presets: the labels listed under "Presets:".
  local presets label
  presets=$(awk '/^[[:space:]]*Presets:/ { on = 1; next } on && /^[[:space:]]*$/ { exit } on' <<<"$info" | sed 's/^[[:space:]]*//')
  for label in "${preset_labels[@]}"; do
    grep -qxF "$label" <<<"$presets" || fail "lv2info: no preset '$label' (got: $(tr '\n' ',' <<<"$presets"))"
  done
  [ "$(grep -c . <<<"$presets")" -eq "${#preset_labels[@]}" ] ||
    fail "lv2info lists $(grep -c . <<<"$presets") presets, expected ${#preset_labels[@]}"

  # Required features: the block after "Required Features:".
  local features f
  features=$(awk '/Required Features:/ { sub(/.*Required Features:/, ""); on = 1 }
                  on && /^[[:space:]]*[A-Z][A-Za-z ]*:/ && !/Required Features:/ { exit }
                  on { gsub(/[[:space:]]/, ""); if ($0 != "") print }' <<<"$info")
  for f in "${required_features[@]}"; do
    grep -qxF "$f" <<<"$features" || fail "lv2info: $f is not a required feature (got: $(tr '\n' ' ' <<<"$features"))"
  done
  [ "$(grep -c . <<<"$features")" -eq "${#required_features[@]}" ] ||
    fail "lv2info: unexpected required features: $(tr '\n' ' ' <<<"$features")"
}

# --- the bundle of the build tree ------------------------------------------
check_files "$bundle"
pass "files: manifest.ttl parnassus.ttl presets.ttl parnassus.so rules/{$(IFS=,; echo "${rule_files[*]}")}"

ttls=("$bundle"/*.ttl)
for f in "${ttls[@]}"; do
  out=$(serdi -i turtle -o ntriples "$f" 2>&1 >/dev/null) || fail "serdi: $f is not valid Turtle: $out"
  [ -z "$out" ] || fail "serdi: $f: $out"
done
pass "serdi: ${#ttls[@]} Turtle files parse"

rc=0
out=$(lv2_validate "${ttls[@]}" 2>&1) || rc=$?
found=$(grep '^Found ' <<<"$out" || true)
[ "$rc" -eq 0 ] && grep -q '^Found 0 errors' <<<"$found" ||
  fail "lv2_validate (rc $rc): $(grep -v '^Skipping file' <<<"$out")"
pass "lv2_validate: $found"

n=$(check_rule_paths "$bundle")
pass "rules: the presets load $n rule sets, all in the bundle's rules/"

check_lv2info "$bundle"
pass "lv2ls: $URI only"
pass "lv2info: ${#port_symbols[@]} ports as plugin/ports.def, ${#preset_labels[@]} presets, required features ${required_features[*]}"

so=$bundle/parnassus.so
exports=$(nm -D --defined-only "$so" | awk 'NF { print $NF }' | sort -u)
[ "$exports" = "lv2_descriptor" ] || fail "parnassus.so exports more than lv2_descriptor: $(tr '\n' ' ' <<<"$exports")"
pass "exports: lv2_descriptor only"

needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
if grep -Eiq "$needed_forbidden" <<<"$needed"; then
  fail "parnassus.so needs a shared BLAS/LAPACK: $(grep -Ei "$needed_forbidden" <<<"$needed" | tr '\n' ' ')(the serial static OpenBLAS is meant to be linked in)"
fi
unexpected=$(grep -Evx "$needed_allowed" <<<"$needed" || true)
[ -z "$unexpected" ] || fail "parnassus.so needs libraries not on the allow-list: $(tr '\n' ' ' <<<"$unexpected")"
lddout=$(ldd "$so" 2>&1) || fail "ldd $so: $lddout"
! grep -q 'not found' <<<"$lddout" || fail "ldd: unresolved: $(grep 'not found' <<<"$lddout" | tr '\n' ' ')"
pass "needed: $(tr '\n' ' ' <<<"$needed")(no OpenBLAS; ldd resolves all)"

# --- installation --------------------------------------------------------
if [ -z "$build" ]; then
  echo "test_lv2_bundle: no BUILD_DIR given, install not checked"
  echo "test_lv2_bundle: all checks passed"
  exit 0
fi
[ -f "$build/CMakeCache.txt" ] || fail "$build is not a CMake build tree"
lv2dir=$(sed -n 's/^PNP_LV2_INSTALL_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -n "$lv2dir" ] || fail "PNP_LV2_INSTALL_DIR is not in $build/CMakeCache.txt"

prefix=$tmp/prefix
if [ "${lv2dir#/}" = "$lv2dir" ]; then
  # Relative: under the prefix given at install time.
  out=$(cmake --install "$build" --prefix "$prefix" --component lv2 2>&1) || fail "cmake --install: $out"
  dest=$prefix/$lv2dir/parnassus.lv2
else
  # Absolute (say ~/.lv2): stage it under DESTDIR so nothing outside $tmp changes.
  out=$(DESTDIR=$tmp/destdir cmake --install "$build" --prefix "$prefix" --component lv2 2>&1) || fail "cmake --install: $out"
  dest=$tmp/destdir$lv2dir/parnassus.lv2
fi
[ -d "$dest" ] || fail "cmake --install put no bundle at $dest: $out"
check_files "$dest"
for f in manifest.ttl parnassus.ttl presets.ttl; do
  cmp -s "$bundle/$f" "$dest/$f" || fail "installed $f differs from the build tree's"
done
rpath=$(readelf -d "$dest/parnassus.so" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\].*/\2/p')
case "$rpath" in *"$(cd "$build" && pwd)"*) fail "installed parnassus.so keeps an RPATH into the build tree: $rpath" ;; esac
check_rule_paths "$dest" >/dev/null
check_lv2info "$dest"
pass "install: cmake --install --prefix <tmp> --component lv2 gives ${lv2dir}/parnassus.lv2 with manifest.ttl parnassus.ttl presets.ttl parnassus.so rules/*.json; lv2info reads it there"
echo "test_lv2_bundle: all checks passed"
