# drainbridge's container image: the esbuild bundle (dist/: the entry and the chunks each command loads) on
# Node 24, nothing else.
#   docker build -t drainbridge:0.1.0 .
# The manifests (deploy/components/*) run it as a non-root user with a read-only root filesystem; the
# bundle writes no files. CI builds the same bundle and runs it as this image would (`node dist/drainbridge.mjs`).
# The forwarder's manifests add Node flags that keep it within its memory budget (bench/README.md).

FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the `node` devDependency's binary download is not needed (the image has Node 24).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY cli ./cli
COPY functions ./functions
COPY lib ./lib
COPY embedded ./embedded
COPY scripts ./scripts
COPY state-machines ./state-machines
RUN node scripts/bundle.ts

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/dist/drainbridge.mjs /app/
COPY --from=build /src/dist/chunks /app/chunks
# node-fetch and what it needs, as node_modules beside the bundle (scripts/bundle.ts says why).
COPY --from=build /src/dist/node_modules /app/node_modules
# The image's unprivileged user (uid 1000); the Deployments also set runAsNonRoot.
USER node
EXPOSE 8080
ENTRYPOINT ["node", "/app/drainbridge.mjs"]
CMD ["--help"]
