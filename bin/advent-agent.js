#!/usr/bin/env node
// The `advent-agent` command. The TypeScript is built into dist/ by `npm ci` (prepare script).
import { main, processIo } from '../dist/main/headless/cli.js';

const code = await main(process.argv.slice(2), processIo());
process.exitCode = code;
