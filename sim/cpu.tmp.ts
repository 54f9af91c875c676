import fc from 'fast-check';
import { scheduleArb } from './schedule.js';
import { runSchedule } from './run-schedule.js';
const n = Number(process.argv[2] ?? 80);
const all = fc.sample(scheduleArb(), { seed: 12, numRuns: n });
const c0 = process.cpuUsage(); const t0 = performance.now(); let ev = 0;
for (const s of all) ev += (await runSchedule(s)).events;
const c = process.cpuUsage(c0);
console.log(`cpu ${((c.user + c.system) / 1000 / n).toFixed(1)} ms/schedule, wall ${((performance.now() - t0) / n).toFixed(1)} ms/schedule, events ${ev / n}/schedule, cpu/event ${((c.user + c.system) / ev).toFixed(1)} us`);
