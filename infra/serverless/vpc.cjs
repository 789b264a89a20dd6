// The VPC of the functions that talk to Kafka (MSK lives in a VPC): subnets and security groups
// from TALLY_VPC_SUBNET_IDS and TALLY_VPC_SECURITY_GROUP_IDS (comma lists, both or neither).
// serverless.yml includes it as ${file(./infra/serverless/vpc.cjs):vpc}; with neither set the
// functions run outside any VPC (a cluster reachable over the internet, or the local stack).
'use strict';

const list = (name) =>
  (process.env[name] || '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);

module.exports.vpc = () => {
  const subnetIds = list('TALLY_VPC_SUBNET_IDS');
  const securityGroupIds = list('TALLY_VPC_SECURITY_GROUP_IDS');
  // Lambda's VpcConfig with empty lists is no VPC (serverless.yml's schema wants both keys).
  if (subnetIds.length === 0 && securityGroupIds.length === 0)
    return { subnetIds: [], securityGroupIds: [] };
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    throw new Error(
      'TALLY_VPC_SUBNET_IDS and TALLY_VPC_SECURITY_GROUP_IDS: set both (comma lists) or neither',
    );
  }
  if (securityGroupIds.length > 5) {
    throw new Error("TALLY_VPC_SECURITY_GROUP_IDS: at most 5 security groups (Lambda's limit)");
  }
  for (const id of subnetIds) {
    if (!/^subnet-[0-9a-f]{8,17}$/.test(id))
      throw new Error(`TALLY_VPC_SUBNET_IDS: "${id}" is not a subnet id`);
  }
  for (const id of securityGroupIds) {
    if (!/^sg-[0-9a-f]{8,17}$/.test(id))
      throw new Error(`TALLY_VPC_SECURITY_GROUP_IDS: "${id}" is not a security group id`);
  }
  return { subnetIds, securityGroupIds };
};
