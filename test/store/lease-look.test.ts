/**
 * The lease stage's look on every runner step (src/engine/stages/leases.ts): one count says whether
 * any unfinished batch is not this process's (BatchStore.unfinishedHeld); only then are the batches
 * read. The count must see every batch the full read would offer for taking: one held by another
 * process, one held by nobody; and none finished. Real store in a temp home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';

const homes: { dir: string; store: Store }[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) {
    h.store.db.close();
    rmSync(h.dir, { recursive: true, force: true });
  }
});

function store(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'lease-look-'));
  const s = openStore(join(dir, 'topup.db'));
  homes.push({ dir, store: s });
  return s;
}

const batch = (s: Store, id: string, owner: string | null): void => {
  s.batches.create({ id, name: id, sourceName: `${id}.csv`, jobFile: `jobs/${id}/${id}.csv`, contentHash: id, origin: 'inbox', sandbox: false, ...(owner !== null && { owner, leaseUntil: Date.now() + 60_000 }), now: 1 });
};

describe('the lease look (BatchStore.unfinishedHeld)', () => {
  it('counts the unfinished batches and those this owner does not hold (held by another, or by nobody), as the full read sees them', () => {
    const s = store();
    expect(s.batches.unfinishedHeld('me')).toEqual({ unfinished: 0, others: 0 });
    batch(s, 'b1', 'me');
    batch(s, 'b2', 'me');
    expect(s.batches.unfinishedHeld('me')).toEqual({ unfinished: 2, others: 0 });
    batch(s, 'b3', 'other');
    expect(s.batches.unfinishedHeld('me')).toEqual({ unfinished: 3, others: 1 });
    batch(s, 'b4', null);
    expect(s.batches.unfinishedHeld('me')).toEqual({ unfinished: 4, others: 2 });
    expect(s.batches.unfinishedHeld('other')).toEqual({ unfinished: 4, others: 3 });
    // The same batches the lease stage would read and offer for taking.
    const offered = s.batches.unfinished().filter((b) => b.owner !== 'me' && b.finishedAt === null).map((b) => b.id);
    expect(offered).toEqual(['b3', 'b4']);
    s.batches.releaseAll('me');
    expect(s.batches.unfinishedHeld('me')).toEqual({ unfinished: 4, others: 4 });
  });
});
