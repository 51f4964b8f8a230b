/**
 * `npm run bench`: drainbridge against `kubectl drain` and the physical floor on identical fresh simulated
 * clusters, the reaction to a request, the Lambda footprint and the behaviour at scale — every figure
 * beside its target. See bench/README.md for what is measured and how; an unknown flag lists the options.
 */

// Outside Lambda the functions' log lines go to the log sink, which is off unless asked
// (DRAINBRIDGE_LOG_LEVEL=info, DRAINBRIDGE_LOG_FILE=…; lib/log/sink.ts): the benchmark's output is its
// table, and a failed run reports its own reason. Their EMF metric lines go there too, at debug.

const { main } = await import('./lib/main.ts');
process.exitCode = await main(process.argv.slice(2));
