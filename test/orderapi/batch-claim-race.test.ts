/**
 * A batch posted to the order API (POST /api/v1/batches) is claimed inside the daemon while its
 * runner steps on: the claim commits the batch record, yields a turn of the event loop, then
 * moves the file into jobs/<batch>/ (claim.ts). A runner step that came in that turn took the
 * batch (no owner yet), loaded it, found no file, and failed it with ENOENT: the API had answered
 * 202, nothing was ever ordered, and GET /batches/{id} never said done (the test of the document's
 * examples waited 120 s for it in a full suite run; 1 of 60 batches posted back to back to a real
 * daemon ended so).
 *
 * Deterministic: the runtime's clock runs the runner's first two stages (leases, then intake:
 * what a step does with a claimed batch) at every yield, i.e. at every turn of the loop where
 * the daemon lets another step in. Real parts otherwise: a real store, the in-process sandbox for
 * the catalog, the very function the API handler calls (claimBatchBytes).
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { AccountPauses } from '../../src/engine/account-pauses.js';
import { LeaseStage } from '../../src/engine/stages/leases.js';
import { IntakeStage } from '../../src/engine/stages/intake.js';
import type { EngineContext, StepBatches } from '../../src/engine/stage.js';
import { claimBatchBytes } from '../../src/orderapi/batches.js';
import { inProcessSandbox, releaseAll, tempHome, TEST_KEY } from '../e2e/harness.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  await releaseAll();
});

const CSV = 'trxid,pid,userId\r\nrace-1,PUBG-60,5123456789\r\nrace-2,PUBG-325,5123456780\r\n';

it('a runner step in any turn of the loop during the claim neither fails the batch nor loads it before its file is in place; the next step stores it whole', async () => {
  const home = tempHome('topup-claim-race-');
  const sb = await inProcessSandbox();
  let step: (() => Promise<void>) | undefined;
  let stepping = false;
  const steps: string[] = [];
  // Every yield of the claim lets a runner step run first, as the daemon's event loop may.
  const clock: Clock = {
    ...systemClock,
    yield: async () => {
      await systemClock.yield();
      if (step && !stepping) {
        stepping = true;
        try {
          await step();
        } finally {
          stepping = false;
        }
      }
    },
  };
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url, { clock });
  runtimes.push(rt);
  const e: EngineContext = {
    rt,
    clock,
    pauses: new AccountPauses(rt.accounts, clock),
    emit: () => {},
    signal: new AbortController().signal,
    stopping: () => false,
    wake: () => {},
    onlyBatch: undefined,
    accountProblem: () => {},
    handBack: () => {},
  };
  const leases = new LeaseStage(e);
  const intake = new IntakeStage(e);
  const batches = (): StepBatches => {
    const owned = rt.batches.ownedBy(rt.owner);
    return { owned, open: owned.filter((b) => b.state === 'open') };
  };
  step = async () => {
    leases.tick(clock.now());
    const b = batches();
    steps.push(b.owned.map((x) => `${x.id}:${x.state}:${existsSync(`${home.dir}/${x.jobFile}`) ? 'file' : 'no file'}`).join(',') || 'none');
    await intake.tick(clock.now(), b);
  };

  const claimed = await claimBatchBytes(rt, new TextEncoder().encode(CSV), 'race.csv');
  step = undefined;
  // A step ran at each of the claim's yields, one of them after the commit (the batch existed, its file not yet in place).
  expect(steps.length).toBeGreaterThanOrEqual(2);
  expect(steps.some((s) => s.startsWith(`${claimed.id}:claimed:no file`))).toBe(true);
  const during = rt.batches.get(claimed.id)!;
  expect({ state: during.state, fileError: during.fileError }).toEqual({ state: 'claimed', fileError: null });
  expect(readdirSync(home.outbox).filter((f) => f.endsWith('.error.txt'))).toEqual([]);

  // The step after the claim (the API handler wakes the runner) stores it whole.
  leases.tick(clock.now());
  await intake.tick(clock.now(), batches());
  const after = rt.batches.get(claimed.id)!;
  expect(after.state).toBe('open');
  expect(rt.rows.counts(claimed.id)).toMatchObject({ pending: 2 });
});
