#!/usr/bin/env bash
# `npm run test:image`: build deploy/Dockerfile with podman, as written, then start the image, ask
# it /readyz, the Placement root and a write, check its dependencies are the locked versions, run
# its HEALTHCHECK, and stop it (exit 0 on SIGTERM). Optional: not part of npm test nor of CI (20
# minutes and more on 2 cores; it needs podman, buildah and mmdebstrap from Debian, the npm
# registry and Debian's mirrors).
#
# Where containers cannot be created (this project's machines are VMs whose cgroups crun refuses,
# and where setrlimit is not permitted), the build's RUN steps and the run use chroot isolation
# (`--isolation=chroot`, `buildah run`): the image's files, user, environment, working directory
# and entrypoint, on the host's network — so ALLOT_HOST is set to 127.0.0.1 for the run, where
# the image says 0.0.0.0. What that cannot show: the image's own network namespace and port
# publishing, and resource limits.
#
# The Dockerfile starts FROM node:20-slim, which comes from a registry this project cannot reach.
# When podman does not have that image, the script makes a stand-in under the same name and
# removes it at the end: Debian bookworm (node:20-slim's own base) by mmdebstrap, plus this
# machine's Node.js 20 (binary, npm, headers; npm_config_nodedir points node-gyp at the headers,
# which the real image downloads) and this machine's trusted certificates (NODE_EXTRA_CA_CERTS).
# What the stand-in cannot show: anything particular to the official image's own build of Node.js.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
base=docker.io/library/node:20-slim
image=localhost/allot-image-test:latest
name="allot-image-test-$$"

for tool in podman buildah mmdebstrap ss; do
  command -v "${tool}" >/dev/null || { echo "npm run test:image needs ${tool}: apt-get install -y ${tool}" >&2; exit 2; }
done
[ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] || { echo "npm run test:image: the stand-in for ${base} takes this machine's Node.js, which must be 20" >&2; exit 2; }

work="$(mktemp -d /tmp/allot-image-test-XXXXXX)"
made_base=""
container=""
dangling_before=" $(podman images -q --filter dangling=true | tr '\n' ' ') "
cleanup() {
  if [ -n "${container}" ]; then buildah rm "${container}" >/dev/null 2>&1 || true; fi
  podman rmi -f "${image}" >/dev/null 2>&1 || true
  if [ -n "${made_base}" ]; then podman rmi -f "${base}" localhost/allot-image-test-debian:bookworm >/dev/null 2>&1 || true; fi
  # the build stage's image, left untagged by the multi-stage build
  for id in $(podman images -q --filter dangling=true); do
    case "${dangling_before}" in *" ${id} "*) ;; *) podman rmi -f "${id}" >/dev/null 2>&1 || true ;; esac
  done
  rm -rf "${work}"
}
trap cleanup EXIT

if ! podman image exists "${base}"; then
  echo "# ${base} is not here: making a stand-in from Debian bookworm and this machine's Node.js $(node --version)"
  made_base=yes
  # ALLOT_IMAGE_ROOTFS: a bookworm rootfs tarball made before by the same mmdebstrap command
  rootfs="${ALLOT_IMAGE_ROOTFS:-${work}/rootfs.tar}"
  [ -e "${rootfs}" ] || mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "${rootfs}" http://deb.debian.org/debian
  podman import --quiet "${rootfs}" localhost/allot-image-test-debian:bookworm >/dev/null
  mkdir -p "${work}/base"
  cp "$(command -v node)" "${work}/base/node"
  cp -r "$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")" "${work}/base/npm"
  cp -r "$(dirname "$(dirname "$(command -v node)")")/include/node" "${work}/base/include"
  # this machine's trusted certificates: where its network intercepts TLS, npm in the build needs them
  cp /etc/ssl/certs/ca-certificates.crt "${work}/base/ca-certificates.crt"
  cat > "${work}/base/Containerfile" <<'CONTAINERFILE'
FROM localhost/allot-image-test-debian:bookworm
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY include /usr/local/include/node
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV npm_config_nodedir=/usr/local \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
CONTAINERFILE
  podman build --quiet --isolation=chroot --pull=never --force-rm -t "${base}" "${work}/base" >/dev/null
fi

echo "# podman build -f deploy/Dockerfile ."
# --format docker: OCI images have no HEALTHCHECK
podman build --isolation=chroot --pull=never --force-rm --format docker -f "${root}/deploy/Dockerfile" -t "${image}" "${root}"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$(buildah from --pull-never "${image}")
entrypoint=$(podman image inspect --format '{{join .Config.Entrypoint " "}} {{join .Config.Cmd " "}}' "${image}")
# the image's user, environment and working directory; noauth on loopback (see above)
buildah run --isolation=chroot --env ALLOT_HOST=127.0.0.1 --env ALLOT_PORT="${port}" --env ALLOT_INSECURE_NOAUTH=1 \
  "${container}" -- ${entrypoint} > "${work}/allot.log" 2>&1 &
runner=$!
for _ in $(seq 1 120); do
  if node -e "fetch('http://127.0.0.1:${port}/readyz').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"; then break; fi
  kill -0 "${runner}" 2>/dev/null || break
  sleep 1
done
node --input-type=module -e "
const url = 'http://127.0.0.1:${port}';
const ready = await fetch(url + '/readyz');
const root = await fetch(url + '/placement/', { headers: { 'x-auth-token': 'admin' } });
const created = await fetch(url + '/ids/v1/pools', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'image', kind: 'integer', ranges: ['1-9'] }) });
console.log('# the image answers: /readyz ' + ready.status + ', GET /placement/ ' + root.status + ', POST /ids/v1/pools ' + created.status);
process.exit(ready.status === 200 && root.status === 200 && created.status === 201 ? 0 : 1);
" || { tail -n 30 "${work}/allot.log" >&2; exit 1; }
# the dependencies installed are the ones the package's npm-shrinkwrap.json (the repository's lock) names
buildah run --isolation=chroot "${container}" -- node -e "
const fs = require('fs');
const lock = JSON.parse(fs.readFileSync('/opt/allot/npm-shrinkwrap.json', 'utf8'));
const wrong = Object.entries(lock.packages).filter(([p, e]) => p && !e.dev).flatMap(([p, e]) => {
  const file = '/opt/allot/' + p + '/package.json';
  const got = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).version : 'missing';
  return got === e.version ? [] : [p + ': ' + got + ', locked ' + e.version];
});
console.log('# dependencies as locked: ' + (wrong.length ? wrong.join('; ') : 'all'));
process.exit(wrong.length ? 1 : 0);
"
# the default database, in the volume, owned by the image's user
buildah run --isolation=chroot "${container}" -- sh -c 'ls -l /var/lib/allot/allot.db; id'
# the image's HEALTHCHECK command, as the image gives it
mapfile -t check < <(podman image inspect --format '{{range .Config.Healthcheck.Test}}{{println .}}{{end}}' "${image}" | sed '/^$/d')
[ "${check[0]}" = CMD ] || { echo "unexpected HEALTHCHECK: ${check[*]}" >&2; exit 1; }
buildah run --isolation=chroot --env ALLOT_PORT="${port}" "${container}" -- "${check[@]:1}"
echo "# HEALTHCHECK: healthy"
# SIGTERM to the server (as docker stop sends it), found by the port it listens on
pid=$(ss -ltnpH "sport = :${port}" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
kill -TERM "${pid}"
code=0
wait "${runner}" || code=$?
echo "# SIGTERM: exit ${code}"
[ "${code}" = 0 ]
grep -q '"allot stopped"' "${work}/allot.log"
echo "1 passed, 0 failed"
