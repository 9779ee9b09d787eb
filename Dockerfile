# Production image of apps/api. Build: docker build -t latchkey-api .
# Node 24 (LTS), the production runtime CI tests on (README "Runtime notes"); Node 20 is for development only.
FROM node:24.21-bookworm-slim AS build
WORKDIR /app
RUN npm install -g pnpm@10.34.9
COPY . .
RUN pnpm install --frozen-lockfile && pnpm typecheck && pnpm build && pnpm --filter @latchkey/api deploy --prod --legacy /out

FROM node:24.21-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /out ./
USER node
EXPOSE 4000
CMD ["node", "--max-semi-space-size=64", "dist/src/main.js"]
