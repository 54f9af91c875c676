/**
 * rev37 (adversarial review of ops37), finding: after ONE review decision the batch finishes at
 * result_version 2 with result_file = <name>.reviewed.result.csv (finishBatch stores the path it
 * wrote), and outboxPaths then names <name>.reviewed.reviewed.result.csv: firstStem strips
 * `.reviewed` only from version 3 on. The console's Result link (console/pages/batch.ts) and the
 * order API's resultFile / GET result (orderapi/api.ts: 404 RESULT_NOT_FOUND) point at a file
 * that does not exist.
 */
import { describe, expect, it } from 'vitest';
import { outboxPaths } from '../../src/outbox/paths.js';
import type { Batch } from '../../src/store/batches.js';

const rt = { config: { outboxDir: '/home/o/outbox' } } as Parameters<typeof outboxPaths>[0];
const batch = (resultFile: string, resultVersion: number): Batch => ({ name: 'stuck', resultFile, resultVersion }) as unknown as Batch;

describe('rev37: the reviewed result path once the batch is done again', () => {
  it('version 2, reopened: writes to stuck.reviewed.result.csv', () => {
    expect(outboxPaths(rt, batch('/home/o/outbox/stuck.result.csv', 2)).resultFile).toBe('/home/o/outbox/stuck.reviewed.result.csv');
  });
  it('version 2, finished (result_file = the path just written): still names stuck.reviewed.result.csv', () => {
    const written = outboxPaths(rt, batch('/home/o/outbox/stuck.result.csv', 2)).resultFile;
    // batches.finish(id, …, paths.resultFile, …) stores it; every later reader recomputes from it.
    expect(outboxPaths(rt, batch(written, 2)).resultFile).toBe(written);
    expect(outboxPaths(rt, batch(written, 2)).summaryFile).toBe('/home/o/outbox/stuck.reviewed.summary.json');
  });
  // A home upgraded: an earlier release wrote the later versions as <name>.vN.result.csv and kept
  // result_file on the newest. The batch is done, nothing is decided again: its link must still be that file.
  it.each([2, 3])('an earlier release\'s done batch at version %i still names its .vN file', (v) => {
    const written = `/home/o/outbox/stuck.v${v}.result.csv`;
    expect(outboxPaths(rt, batch(written, v)).resultFile).toBe(written);
  });
});
