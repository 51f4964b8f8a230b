/**
 * Runs Biome's native binary for this platform. The project depends on the platform packages
 * (@biomejs/cli-linux-x64, @biomejs/cli-linux-arm64) directly instead of @biomejs/biome: the registry
 * here does not serve biome's other platform packages, and a lockfile that lists them cannot be
 * installed with `npm ci`. Usage: node scripts/biome.ts check .
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const pkg = `@biomejs/cli-${process.platform}-${process.arch}`;
let binary: string;
try {
  binary = createRequire(import.meta.url).resolve(`${pkg}/biome`);
} catch {
  console.error(`biome: ${pkg} is not installed (supported: linux-x64, linux-arm64); run npm ci`);
  process.exit(2);
}
const result = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit' });
process.exit(result.status ?? 1);
