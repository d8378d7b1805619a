# One image for every kubelet-split service; APP selects which one runs (kubelet: all of them in one process).
#   docker build --build-arg APP=pleg -t kubelet-split/pleg .
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY proto proto
COPY libs libs
COPY apps apps
COPY deploy deploy
COPY test test
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ARG APP
RUN test -n "$APP" || (echo "build with --build-arg APP=<service>" >&2; exit 1)
ENV NODE_ENV=production APP=${APP}
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
USER node
STOPSIGNAL SIGTERM
# The bundle (deploy/bundle.mjs) starts faster than dist/apps/$APP/src/main.js (its source maps are left off: they
# cost memory and start time). APP=kubelet is the one-process image (TARGET=all), with a small young generation.
CMD ["sh", "-c", "if [ \"$APP\" = kubelet ]; then exec node --max-semi-space-size=1 dist/bundle/$APP.mjs; else exec node dist/bundle/$APP.mjs; fi"]
