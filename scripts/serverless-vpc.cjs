/**
 * Resolves serverless.yml's `provider.vpc` from the `subnetIds` and `securityGroupIds` params
 * (comma-separated). Plain YAML cannot drop a key when a param is empty, so this returns null for
 * "no VPC" (serverless.yml's `, null` fallback then leaves `vpc` unset, and osls adds no ENI policy).
 * Half a VPC or a malformed id fails `serverless package` naming the param, not a deploy minutes later.
 */
'use strict';

const ID_PATTERNS = {
  subnetIds: /^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/,
  securityGroupIds: /^sg-([0-9a-f]{8}|[0-9a-f]{17})$/,
};

/** "subnet-1, subnet-2" → ["subnet-1", "subnet-2"]; "" → []. Refuses ids CloudFormation would refuse. */
function listOf(param, value) {
  const ids = String(value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = ids.filter((id) => !ID_PATTERNS[param].test(id));
  if (bad.length > 0) throw new Error(`param ${param}: not a valid id: ${bad.join(', ')}`);
  return ids;
}

module.exports.vpc = async ({ resolveVariable }) => {
  const subnetIds = listOf('subnetIds', await resolveVariable('param:subnetIds'));
  const securityGroupIds = listOf('securityGroupIds', await resolveVariable('param:securityGroupIds'));
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return null;
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    throw new Error('params subnetIds and securityGroupIds: set both (comma-separated) or neither');
  }
  return { subnetIds, securityGroupIds };
};
