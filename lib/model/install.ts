/**
 * The one command (as a cluster admin, from a checkout) that installs what drainbridge needs in a cluster:
 * deploy/base — the Evacuation and NodeMaintenance CRDs, the namespace, every RBAC role drainbridge's
 * commands and services use. Here, below everything, because both the preflight's fixes and the
 * workflow's plan name it.
 */
export const INSTALL_COMMAND = 'kubectl apply -k deploy/base';
