/**
 * Resolves serverless.yml's `custom.esbuild.sourcemap` (and `keepOutputDirectory`) from the `sourcemaps`
 * param: "false" (the default) builds none; "external" writes each map beside its bundle in
 * .esbuild/.build/functions/ without a sourceMappingURL comment and keeps that folder after packaging (the
 * functions' package patterns keep maps out of the zips: upload them where you debug). Any other value
 * fails `serverless package` naming the param.
 */
'use strict';

const VALUES = { false: false, external: 'external' };

async function sourcemapsParam(resolveVariable) {
  const value = String((await resolveVariable('param:sourcemaps')) ?? 'false').trim();
  if (!Object.hasOwn(VALUES, value)) throw new Error(`param sourcemaps: must be false or external, got "${value}"`);
  return VALUES[value];
}

module.exports.sourcemap = async ({ resolveVariable }) => sourcemapsParam(resolveVariable);

module.exports.keepOutput = async ({ resolveVariable }) => (await sourcemapsParam(resolveVariable)) !== false;
