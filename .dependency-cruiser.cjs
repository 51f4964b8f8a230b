/**
 * The layering check (`npm run check:layers`, part of `npm run lint`): which folder may import which.
 *
 *   bin → cli → embedded → functions → lib      (and sim/, bench/, test/, scripts/ beside them)
 *
 * lib/ is the domain: it never reaches up into the wiring that uses it. functions/ are thin Lambda
 * shells over lib/. No import cycles, neither between files nor between lib/'s folders (a folder cycle
 * such as config → nova → openstack → config means none of them can be understood or moved alone).
 * Type-only imports count: they are dependencies of the design even when erased at run time.
 *
 * Inside lib/, the folders follow the way an event travels (docs/development.md, "Layout"):
 *
 *   lib/sources   what happens (cordon, NodeMaintenance, reboot, cloud notices, windows) → events
 *   lib/bus       the events (lib/bus/contracts) and their way to the workflow
 *   lib/workflow  the state machines' tasks; lib/admission beside it (who may start)
 *   lib/branches  what an evacuation moves (pods, kubevirt, nova) behind one registry
 *   lib/clients   the APIs they call (kube, openstack)
 *   lib/model     the shared vocabulary (request, plan, pass, notice, window)
 *
 * Arrows go down that list or sideways into the shared folders (config, settings, errors, log, util,
 * node, progress, …), never up: a source does not reach into the workflow, a branch does not know the
 * workflow or the sources, a client knows no branch, the model knows nothing above it. A folder and its
 * own subfolder never import each other both ways (scripts/check-folder-cycles.ts: dependency-cruiser
 * counts a folder with everything below it, so it cannot see that cycle).
 */
const OUTSIDE_LIB = '^(functions|embedded|cli|sim|bench|soak|test|scripts|bin)/';

/**
 * lib/'s floors, one row a rule: a folder (`from`) never imports `forbid` (but `except`).
 */
const FLOORS = [
  {
    name: 'sources-stay-out-of-the-workflow',
    from: 'lib/sources',
    forbid: '^lib/(workflow|admission)/',
    why: 'An event source (lib/sources) turns what it sees into events; it never reaches into the workflow or admission that act on them.',
  },
  {
    name: 'bus-below-its-users',
    from: 'lib/bus',
    forbid: '^lib/(sources|workflow|admission|branches|clients)/',
    why: 'The bus and its contracts (lib/bus) carry events; they know no source, workflow task, admission, branch or client.',
  },
  {
    name: 'branches-below-the-workflow',
    from: 'lib/branches',
    forbid: '^lib/(sources|workflow|admission|preflight)/',
    why: 'A branch (lib/branches) is driven by the workflow and read by sources and the CLI; it never imports them.',
  },
  {
    name: 'clients-below-the-branches',
    from: 'lib/clients',
    forbid: '^lib/',
    except: '^lib/(clients|model|errors|log|util|settings|secrets|tls)/',
    why: 'An API client (lib/clients) speaks one API: it uses the model and the plumbing (errors, logs, settings, secrets, TLS), never a branch, the workflow, a source or the bus.',
  },
  {
    name: 'model-at-the-bottom',
    from: 'lib/model',
    forbid: '^lib/',
    except: '^lib/(model|errors|util)/',
    why: 'The shared vocabulary (lib/model) imports nothing of lib/ but errors and utilities.',
  },
];

/** A branch's facade: the registry (registry.ts, plan.ts, render.ts, contract/) or its index.ts; kubectl's drain flags (pods/flags.ts) are parsed without loading the pod branch. */
const BRANCH_FACADES = ['registry', 'plan', 'render', 'contract/', '[^/]+/index', 'pods/flags'];

/**
 * What the CLI may import of lib/: the shared vocabulary and plumbing (SHARED) whole, and of every other
 * folder only its facade (CLI_FACADES: module paths under lib/<folder>/, without `.ts`). A facade is the
 * folder's index.ts where it has one; the other names are entry points kept apart so that a process with a
 * memory budget (`drainbridge forwarder`, 80 MiB) loads them without @kubernetes/client-node — config's
 * load/schema, the forwarder's settings, lean kube connection and task-token sender, admission's slot waker, the service checks, the kube client's
 * errors, paths and selectors — or the modules the CLI drives (the workflow's driver, abort, repair, resume).
 * Reaching a folder's parts (records, codecs, mailboxes, ledgers) from the CLI is what this forbids.
 */
const SHARED = ['model', 'errors', 'log', 'util', 'settings', 'secrets', 'tls'];
const CLI_FACADES = {
  admission: ['index', 'waker'],
  branches: BRANCH_FACADES,
  bus: ['index', 'types', 'contracts/index', 'bus-key', 'bus-tls', 'bus-endpoint-client'],
  clients: ['kube/index', 'kube/client', 'kube/errors', 'kube/paths', 'kube/selectors'],
  config: ['index', 'load', 'schema'],
  node: ['index'],
  notify: ['index'],
  preflight: ['index', 'service-access', 'service-check'],
  progress: ['index'],
  sources: [
    'forwarder/index',
    'forwarder/settings',
    'forwarder/kube',
    'forwarder/task-tokens',
    'node-agent/node-agent',
    'clouds/config',
    'clouds/policy',
    'clouds/policy-render',
    'clouds/registry/settings',
  ],
  workflow: ['driver', 'abort', 'ownership', 'repair', 'resume', 'never-held', 'plan-timing', 'request-node'],
};

/** `^lib/<folder>/(<facade>…)`: a facade ending in `/` is a whole subfolder, any other one file. */
function facadePaths(folder, facades) {
  const alternatives = facades.map((facade) => (facade.endsWith('/') ? facade : `${facade}\\.ts$`));
  return `^lib/${folder}/(${alternatives.join('|')})`;
}

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Files must not import each other in a cycle (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-lib-folder-cycles',
      comment: "lib/'s folders must not depend on each other in a cycle (e.g. config → nova → openstack → config).",
      severity: 'error',
      scope: 'folder',
      from: { path: '^lib/' },
      to: { path: '^lib/', circular: true },
    },
    {
      name: 'lib-stays-below',
      comment:
        'lib/ is the domain: it never imports the functions, the embedded runtime, the CLI, the simulator, benchmarks, tests or scripts.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: OUTSIDE_LIB },
    },
    {
      name: 'functions-import-only-lib',
      comment: 'A Lambda handler is a thin shell over lib/ (npm packages and Node built-ins aside).',
      severity: 'error',
      from: { path: '^functions/' },
      to: { pathNot: '^(lib/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    ...FLOORS.map(({ name, from, forbid, except, why }) => ({
      name,
      comment: why,
      severity: 'error',
      from: { path: `^${from}/` },
      to: { path: forbid, ...(except ? { pathNot: except } : {}) },
    })),
    {
      name: 'cli-through-facades',
      comment:
        "The CLI reaches lib/ through each folder's facade (CLI_FACADES above); the shared vocabulary and plumbing it may use whole.",
      severity: 'error',
      from: { path: '^cli/' },
      to: {
        path: '^lib/',
        pathNot: [
          `^lib/(${SHARED.join('|')})/`,
          ...Object.entries(CLI_FACADES).map(([folder, facades]) => facadePaths(folder, facades)),
        ],
      },
    },
    {
      name: 'embedded-through-branch-facades',
      comment: "The embedded runtime reaches the branches through the registry or a branch's index.ts, not its parts.",
      severity: 'error',
      from: { path: '^embedded/' },
      to: { path: '^lib/branches/', pathNot: facadePaths('branches', BRANCH_FACADES) },
    },
    {
      name: 'admission-through-its-facade',
      comment:
        "Admission's Lease records (lib/admission/records.ts) are read and written only inside lib/admission/: everything else (the workflow, status, repair, run) goes through its facade, lib/admission/index.ts. Tests may reach a part to test it.",
      severity: 'error',
      from: { pathNot: '^(lib/admission/|test/)' },
      // waker.ts too: the forwarder's watch of the Lease, loaded alone so the forwarder loads no client-node.
      to: { path: '^lib/admission/', pathNot: '^lib/admission/(index|waker)\\.ts$' },
    },
    {
      name: 'owner-claim-through-ownership',
      comment:
        'The owner claim on an Evacuation record (lib/workflow/owner-record.ts) is read and written only by lib/workflow/ownership.ts; status, repair and the workflow ask it. Tests may reach the codec to test it.',
      severity: 'error',
      from: { pathNot: '^(lib/workflow/ownership\\.ts|test/)' },
      to: { path: '^lib/workflow/owner-record\\.ts$' },
    },
    {
      name: 'resolvable',
      comment: 'Every import resolves: an import the check cannot follow is one it cannot judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // swc parses TypeScript here: the project's TypeScript 7 (the native compiler) has no JavaScript API.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.serverless|\\.esbuild|dist|coverage)/' },
    moduleSystems: ['es6', 'cjs'],
    // Resolve npm packages' `exports` subpaths (e.g. @aws-lambda-powertools/logger/middleware) as Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
