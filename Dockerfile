# One image for every kubelet-split service; its command picks which one runs:
#   docker run kubelet-split/kubelet:local pleg       (dist/apps/pleg/src/main.js)
#   docker run kubelet-split/kubelet:local all        (the one-process mode, TARGET=all)
#   docker run kubelet-split/kubelet:local nats-credentials --dir=/credentials ...
# Built with no registry: the base images (Node.js and its shared libraries,
# busybox; node-build adds npm) come from deploy/compose/images.sh, which
# builds them from the machine's own files first. npm ci needs the npm
# registry: build with --network host.
ARG BASE_TAG=local

FROM kubelet-split/node-build:${BASE_TAG} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY proto proto
COPY libs libs
COPY apps apps
COPY deploy deploy
COPY test test
# The production dependencies' type declarations and source maps are never loaded (@kubernetes/client-node's: 31 of its 54 MB).
RUN npm run --silent build && npm prune --omit=dev --no-audit --no-fund --loglevel=error \
 && rm -rf dist/test node_modules/.cache && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -exec rm -f {} +
# VERSION: the version /info reports (package.json's; images.sh passes it). A last layer, so
# that two builds of one tree with other versions share every layer but this one (docs/adr/0037).
ARG VERSION=
RUN if [ -n "$VERSION" ]; then npm pkg set version="$VERSION"; fi

# The runtime: Node.js, the production dependencies and the built code; no
# npm, no TypeScript, no dev dependencies. It runs as node (65532: not a uid a person on the host is likely to have; the volumes it owns hold the NATS passwords) unless the
# compose file says otherwise (cri-gateway, pod-worker and sync-loop need root:
# the runtime socket, mounts and cgroups).
FROM kubelet-split/node-base:${BASE_TAG}
ARG VERSION=
LABEL org.opencontainers.image.version="${VERSION}"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY deploy/compose/entrypoint.sh /usr/local/bin/kubelet-split-entrypoint
USER 65532:65532
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/kubelet-split-entrypoint"]
CMD ["all"]
