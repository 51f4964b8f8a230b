/**
 * Resolves serverless.yml's `provider.vpc` from the `subnetIds` and `securityGroupIds` params
 * (comma-separated). Plain YAML cannot drop a key when a param is empty, so this returns null for
 * "no VPC" (serverless.yml's `, null` fallback then leaves `vpc` unset) and refuses half a VPC.
 */
'use strict';

/** "subnet-1, subnet-2" → ["subnet-1", "subnet-2"]; "" → []. */
function listOf(value) {
  return String(value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

module.exports.vpc = async ({ resolveVariable }) => {
  const subnetIds = listOf(await resolveVariable('param:subnetIds'));
  const securityGroupIds = listOf(await resolveVariable('param:securityGroupIds'));
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return null;
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    throw new Error('params subnetIds and securityGroupIds: set both (comma-separated) or neither');
  }
  return { subnetIds, securityGroupIds };
};
