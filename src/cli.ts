#!/usr/bin/env node
/**
 * `topup`: the program is program.ts. This file only sets the start-up heap flag first
 * (kernel/heap-policy.ts: loading ~450 modules must not leave V8's young generation at its
 * largest), which has to happen before those modules load, hence the dynamic import.
 */
import { startupHeap } from './kernel/heap-policy.js';
import { markDaemonStarting } from './kernel/starting-mark.js';

// Before the modules load (seconds at load): `topup status` can say a daemon is starting (trial s36 D7).
markDaemonStarting(process.argv.slice(2));
startupHeap();
await import('./program.js');
