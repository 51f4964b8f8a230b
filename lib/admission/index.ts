/**
 * Admission: which request may hold a node now. A slot is a node held by drainbridge; requests that find
 * none free wait in line on the admission Lease, oldest first, under the cluster-wide limit, the
 * label-selector limits, the spread rules and a maintenance window's own. The one way in for the rest of drainbridge —
 * the workflow's steps, `drainbridge status`, `repair` and `run` — so that nothing else knows how the
 * Lease keeps its records (a dependency-cruiser rule, .dependency-cruiser.cjs):
 *
 *   admit.ts     admitRequest: the locked decision, and the hold it takes
 *   wait.ts      why a request waits, from the Lease alone or the labelled nodes; its place in line
 *   schedule.ts  how long places last, and which error picks the retry schedule
 *   decision.ts  planAdmission, the decision itself (pure)
 *   spread.ts    topology spread: a limit per label value, a minimum of schedulable nodes per pool (pure)
 *   intents.ts   admissions in flight, counted as held nodes (pure)
 *   observe.ts   the held nodes and their holders, read from the cluster
 *   mutex.ts     the Lease as a mutex, and edits made without it
 *   records.ts   the Lease's annotations and their codec (nothing outside this folder reads them)
 *   leave.ts     a request leaving: its place dropped, its released node no longer counted
 *   wake.ts      a waiting request's wake-up token parked on its place (near the front, or on a limit)
 *   wake-plan.ts which parked tokens a new version of the Lease wakes (pure)
 *   waker.ts     the watch of the Lease that sends them back (run, the CLI, the forwarder)
 *   view.ts      the Lease for status and repair
 *   outlook.ts   what admission would decide for a node now, for `drainbridge plan` (writes nothing)
 *   breaker.ts   the circuit breaker: K failed evacuations within a window pause admission (pure)
 *   trip.ts      the breaker's record written: a failure noted, `drainbridge resume`
 *   gates/       health gates asked before a node is admitted (Prometheus alerts, PromQL, the cluster, HTTP)
 */
export { type Admitted, admitRequest } from './admit.ts';
export type { BreakerFailure, BreakerRecord, BreakerSetting } from './breaker.ts';
export type { AdmissionQueue } from './decision.ts';
export {
  type GateListener,
  type GateObservation,
  type GateSpec,
  gateSpecs,
  type NamedVerdict,
  onGateVerdicts,
} from './gates/index.ts';
export { leaveQueue, noteReleased } from './leave.ts';
export { type AdmissionSettings, admissionLimitsOf } from './observe.ts';
export { type AdmissionOutlook, admissionOutlook } from './outlook.ts';
export { claimResumeAnnouncement, noteEvacuationFailed, resumeAdmission } from './trip.ts';
export {
  type AdmissionDamage,
  type AdmissionRepair,
  type AdmissionView,
  planAdmissionRepair,
  readAdmissionLease,
  readAdmissionView,
} from './view.ts';
export { waitFromLease } from './wait.ts';
export { PARKED_TOKEN_CHARS, type ParkOutcome, parkWakeToken } from './wake.ts';
export { ADMISSION_LEASE_NAME, planWakeUps, type WakeWatch } from './wake-plan.ts';
export { SlotWaker, type SlotWakerParts } from './waker.ts';
