/**
 * The entry of the single-file bundle the container image runs (scripts/bundle.ts, Dockerfile): the
 * drainbridge command with the packaged state-machine definitions compiled in, so the image holds one
 * file and reads nothing beside it.
 */

import type { Definitions } from '../embedded/extract.ts';
import { usePackagedDefinitions } from '../embedded/runtime.ts';
import definitions from '../workflow/definitions.json' with { type: 'json' };
import { abortCommand } from './commands/abort.ts';
import { evacuateCommand } from './commands/evacuate.ts';
import { forwarderCommand } from './commands/forwarder.ts';
import { planCommand } from './commands/plan.ts';
import { restoreCommand } from './commands/restore.ts';
import { runCommand } from './commands/run.ts';
import { main } from './main.ts';

/** What a cluster runs; `sim` and `demo` (the simulator, its scenario files) stay out of the image. */
const IMAGE_COMMANDS = [forwarderCommand, runCommand, evacuateCommand, restoreCommand, abortCommand, planCommand];

usePackagedDefinitions(definitions as unknown as Definitions);
process.exitCode = await main(process.argv.slice(2), IMAGE_COMMANDS);
