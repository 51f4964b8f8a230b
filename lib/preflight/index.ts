/** The preflight: is this cluster (and Nova) ready for an operation? See checks.ts. */
export { type ApiAccess, describeAccess, type Operation, requiredAccess } from './access.ts';
export {
  type CheckResult,
  DISABLE_EVICTION_COMMAND,
  INSTALL_COMMAND,
  INSTALL_COMMAND_NMO,
  type PreflightNeeds,
  type PreflightReport,
  type PreflightTarget,
  runPreflight,
} from './checks.ts';
