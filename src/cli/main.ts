#!/usr/bin/env node
// The `allot` command: run the program, turn any failure into one line on stderr and an exit
// code from the documented table (src/cli/exit.ts).
import { CommanderError } from 'commander';
import { exitCodeOf, messageOf } from './exit.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  // commander already printed its own usage errors (and help and version)
  if (!(err instanceof CommanderError)) console.error(`allot: ${messageOf(err)}`);
  process.exit(exitCodeOf(err));
}
