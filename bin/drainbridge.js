#!/usr/bin/env node
// The drainbridge command. The project runs on Node 24 (npm scripts use the node@24 devDependency),
// which runs the TypeScript sources directly.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  console.error(
    `drainbridge needs Node 24 or newer (this is ${process.version}). Run it through npm (npm start, npx drainbridge), which uses the project's Node 24.`,
  );
  process.exit(2);
}
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
