# syntax=docker/dockerfile:1
# One image for every service: `docker run IMAGE gateway`, `... executor --pools bulk`, `... up`.

# Node 22 LTS: better-sqlite3 12 built against Node 24.19+ headers aborts at garbage collection
# (nodejs/node#65446, see .ci/run); Node 24 follows with better-sqlite3 13.

# --- build: all dependencies, compile the native addon, bundle the apps ---
FROM node:22-bookworm-slim AS build
WORKDIR /src
# better-sqlite3 falls back to compiling from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.base.json ./
COPY tools/build.mjs tools/build.mjs
COPY apps apps
COPY libs libs
RUN npm run build \
 # Production dependencies only from here on: no compilers, test tools or bundler in the image.
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: Node, production node_modules and the bundles, run as a non-root user ---
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
# The bundles, and the web console's static files beside the CLI bundle (dist/apps/cli/console).
COPY --from=build /src/dist ./dist
# DATA_DIR holds what `up` keeps on disk (the SQLite store, generated secrets, uploaded files). The
# services on MongoDB keep invocations and uploaded files (GridFS) in the store and need no volume.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# Liveness of whichever service runs: every service answers /healthz on PORT.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "require('node:http').get({ host: '127.0.0.1', port: process.env.PORT || 8080, path: '/healthz', timeout: 4000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
ENTRYPOINT ["node", "dist/apps/cli/main.js"]
CMD ["up"]
