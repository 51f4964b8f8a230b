/**
 * The `kubevirt:` section of a scenario file: installs the simulated KubeVirt and declares its VMs.
 *
 *   kubevirt:
 *     configuration:                      # the KubeVirt CR's spec.configuration
 *       evictionStrategy: LiveMigrate     # cluster default for VMIs without their own (KubeVirt: None)
 *       migrations:                       # KubeVirt's defaults when omitted
 *         parallelMigrationsPerCluster: 5
 *         parallelOutboundMigrationsPerNode: 2
 *         progressTimeout: 150            # seconds without progress before a migration is aborted
 *         completionTimeoutPerGiB: 150    # seconds per GiB of guest memory before it is aborted
 *     timings:                            # simulated seconds a live migration spends per step
 *       targetPreparationSeconds: 1
 *       migrationStartSeconds: 0.5
 *       transferBaseSeconds: 2            # memory transfer: base + per GiB of guest memory
 *       transferSecondsPerGiB: 1
 *       abortSeconds: 0.5
 *       sourceLauncherExitSeconds: 2      # the source launcher pod exits this long after the VMI moved
 *     virtualMachines: [ …kubevirt.io/v1 VirtualMachine manifests (runStrategy or running)… ]
 *     virtualMachineInstances: [ …bare kubevirt.io/v1 VirtualMachineInstance manifests… ]
 *
 * VMI specs (and VM templates) take `evictionStrategy` (None, LiveMigrate, LiveMigrateIfPossible,
 * External) and `domain.resources.requests.memory`. Two simulator annotations stand in for what real
 * KubeVirt derives from disks and load: `sim.drainbridge.io/not-migratable: <Reason>` (e.g.
 * DisksNotLiveMigratable) makes the VMI report LiveMigratable=False, and
 * `sim.drainbridge.io/migration-seconds: "<n>"` fixes its memory transfer time.
 */
import { z } from 'zod';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const name = z.string().max(253).regex(DNS_SUBDOMAIN, 'must be a lowercase RFC 1123 subdomain');
const strings = z.record(z.string(), z.string());

const evictionStrategy = z.enum(['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External']);
const quantity = z.union([
  z.number().int().nonnegative(),
  z.string().regex(/^\d+(\.\d+)?([kMGTPE]i?)?$/, 'must be a quantity such as 2Gi'),
]);

const seconds = z.number().nonnegative().optional();
const count = z.number().int().min(1).optional();

const SIM_NOT_MIGRATABLE = 'sim.drainbridge.io/not-migratable';
const SIM_MIGRATION_SECONDS = 'sim.drainbridge.io/migration-seconds';

/** VMI metadata: the simulator annotations are checked here, so a typo fails the scenario. */
const vmiMetadata = z.looseObject({
  name,
  namespace: name.optional(),
  labels: strings.optional(),
  annotations: strings
    .refine((a) => a[SIM_NOT_MIGRATABLE] === undefined || /^[A-Za-z]+$/.test(a[SIM_NOT_MIGRATABLE] ?? ''), {
      message: `${SIM_NOT_MIGRATABLE} must be a reason such as DisksNotLiveMigratable`,
    })
    .refine((a) => a[SIM_MIGRATION_SECONDS] === undefined || /^\d+(\.\d+)?$/.test(a[SIM_MIGRATION_SECONDS] ?? ''), {
      message: `${SIM_MIGRATION_SECONDS} must be a number of seconds`,
    })
    .optional(),
});

const vmiSpec = z.looseObject({
  evictionStrategy: evictionStrategy.optional(),
  terminationGracePeriodSeconds: z.number().int().nonnegative().optional(),
  domain: z.looseObject({
    resources: z.looseObject({ requests: z.looseObject({ memory: quantity.optional() }).optional() }).optional(),
  }),
});

const virtualMachineInstance = z.looseObject({
  apiVersion: z.literal('kubevirt.io/v1'),
  kind: z.literal('VirtualMachineInstance'),
  metadata: vmiMetadata,
  spec: vmiSpec,
});

const virtualMachine = z
  .looseObject({
    apiVersion: z.literal('kubevirt.io/v1'),
    kind: z.literal('VirtualMachine'),
    metadata: z.looseObject({ name, namespace: name.optional(), labels: strings.optional() }),
    spec: z.looseObject({
      running: z.boolean().optional(),
      runStrategy: z.enum(['Always', 'Halted', 'Manual', 'RerunOnFailure', 'Once']).optional(),
      template: z.looseObject({
        metadata: vmiMetadata.partial({ name: true }).optional(),
        spec: vmiSpec,
      }),
    }),
  })
  .refine((vm) => vm.spec.running === undefined || vm.spec.runStrategy === undefined, {
    message: 'running and runStrategy are mutually exclusive',
    path: ['spec'],
  });

export const kubevirtSection = z.strictObject({
  configuration: z
    .looseObject({
      evictionStrategy: evictionStrategy.optional(),
      migrations: z
        .looseObject({
          parallelMigrationsPerCluster: count,
          parallelOutboundMigrationsPerNode: count,
          progressTimeout: z.number().int().nonnegative().optional(),
          completionTimeoutPerGiB: z.number().int().nonnegative().optional(),
          nodeDrainTaintKey: z.string().min(1).optional(),
        })
        .optional(),
    })
    .optional(),
  timings: z
    .strictObject({
      targetPreparationSeconds: seconds,
      migrationStartSeconds: seconds,
      transferBaseSeconds: seconds,
      transferSecondsPerGiB: seconds,
      abortSeconds: seconds,
      sourceLauncherExitSeconds: seconds,
    })
    .optional(),
  virtualMachines: z.array(virtualMachine).optional(),
  virtualMachineInstances: z.array(virtualMachineInstance).optional(),
});

export type KubevirtSection = z.infer<typeof kubevirtSection>;
