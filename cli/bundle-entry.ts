/**
 * The entry of the bundle the container image runs (scripts/bundle.ts, Dockerfile): the catalog's commands the
 * image ships (cli/commands/catalog.ts, `inImage`), each loaded only when it runs. esbuild splits the bundle
 * at the catalog's dynamic imports, so `drainbridge forwarder` reads, compiles and keeps in memory only the
 * forwarder's code — not the embedded state machines, client-node or the other commands (its budget is
 * 80 MiB resident; bench/README.md). The commands the image does not ship (the simulator, demo, …) are left
 * out of the bundle by scripts/bundle.ts.
 *
 * The same dispatch as cli/main.ts (cli/dispatch.ts): the same help, messages, logging, exit codes and errors.
 */
import type { Command } from './command.ts';
import { processContext } from './command.ts';
import { COMMAND_CATALOG, type CommandEntry } from './commands/catalog.ts';
import { dispatch } from './dispatch.ts';

/** The state-machine definitions compiled in, for the commands that run them (the image reads no file). */
async function withPackagedDefinitions(command: Promise<Command>): Promise<Command> {
  const [{ usePackagedDefinitions }, definitions] = await Promise.all([
    import('../embedded/runtime.ts'),
    import('../state-machines/definitions.json', { with: { type: 'json' } }),
  ]);
  usePackagedDefinitions(definitions.default as unknown as Parameters<typeof usePackagedDefinitions>[0]);
  return command;
}

/** The image's commands: the catalog's that it ships, those that run the state machines given the definitions. */
function imageCommands(catalog: readonly CommandEntry[]): CommandEntry[] {
  return catalog
    .filter((entry) => entry.inImage)
    .map((entry) => (entry.needsDefinitions ? { ...entry, load: () => withPackagedDefinitions(entry.load()) } : entry));
}

/** The catalog's other commands: the npm package ships them all. */
const ELSEWHERE = {
  names: COMMAND_CATALOG.filter((entry) => !entry.inImage).map((entry) => entry.name),
  message: (name: string) =>
    `"${name}" is not in the container image, which ships the commands a cluster runs: run it from the npm package (npx drainbridge ${name})`,
};

process.exitCode = await dispatch(process.argv.slice(2), imageCommands(COMMAND_CATALOG), processContext(), ELSEWHERE);
