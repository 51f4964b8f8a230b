/** The bus contracts: schemas, constants, parsing. */
export * from './contracts.ts';
export { CloudNotice, DrainOptionsInput, Instant, NodeName, RequestId, Target } from './fields.ts';
export * from './parse.ts';
export { toMaintenanceRequest } from './to-request.ts';
