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
    {
      name: 'sources-stay-out-of-the-workflow',
      comment:
        'An event source (lib/sources) turns what it sees into events; it never reaches into the workflow or admission that act on them.',
      severity: 'error',
      from: { path: '^lib/sources/' },
      to: { path: '^lib/(workflow|admission)/' },
    },
    {
      name: 'bus-below-its-users',
      comment:
        'The bus and its contracts (lib/bus) carry events; they know no source, workflow task, admission, branch or client.',
      severity: 'error',
      from: { path: '^lib/bus/' },
      to: { path: '^lib/(sources|workflow|admission|branches|clients)/' },
    },
    {
      name: 'branches-below-the-workflow',
      comment:
        'A branch (lib/branches) is driven by the workflow and read by sources and the CLI; it never imports them.',
      severity: 'error',
      from: { path: '^lib/branches/' },
      to: { path: '^lib/(sources|workflow|admission|preflight)/' },
    },
    {
      name: 'clients-below-the-branches',
      comment:
        'An API client (lib/clients) speaks one API: it uses the model and the plumbing (errors, logs, settings, secrets, TLS), never a branch, the workflow, a source or the bus.',
      severity: 'error',
      from: { path: '^lib/clients/' },
      to: { path: '^lib/', pathNot: '^lib/(clients|model|errors|log|util|settings|secrets|tls)/' },
    },
    {
      name: 'model-at-the-bottom',
      comment: 'The shared vocabulary (lib/model) imports nothing of lib/ but errors and utilities.',
      severity: 'error',
      from: { path: '^lib/model/' },
      to: { path: '^lib/', pathNot: '^lib/(model|errors|util)/' },
    },
    {
      name: 'cli-through-branch-facades',
      comment:
        "The CLI and the embedded runtime reach the branches through the registry (lib/branches/registry.ts, plan.ts, render.ts, contract/) or a branch's index.ts, not its parts; kubectl's drain flags (pods/flags.ts) are parsed without loading the pod branch.",
      severity: 'error',
      from: { path: '^(cli|embedded)/' },
      to: {
        path: '^lib/branches/[^/]+/',
        pathNot: '^lib/branches/([^/]+/index\\.ts|contract/|pods/flags\\.ts$)',
      },
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
