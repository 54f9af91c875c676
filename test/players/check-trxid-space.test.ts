/**
 * Issue 31's adversarial review, attack 3: a shop or a file gives an order a trxid spelled like a
 * player check's. Check trxids are `-CHK-PUBG-<16 hex>` (kernel/identity.ts), and two trxids are
 * one purchase key when their folds are equal (trimmed, NFKC, case-folded). A fullwidth
 * hyphen-minus (U+FF0D) or a small one (U+FE63) folds to "-": such an order trxid kept the order
 * rule (only an ASCII "-" was refused first) and met a check's trxid. Real daemon, real sandbox,
 * real CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, csv } from '../e2e/harness.js';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { checkTrxid, inCheckSpace, trxidKey, trxidProblem } from '../../src/kernel/identity.js';

releaseAfterEach();

/** Spellings of a check trxid a person or a shop could send as an order's. */
const CHECK = checkTrxid('pubg', '0123456789abcdef');
const SPELLINGS = [
  '\uFF0DCHK-PUBG-0123456789ABCDEF', // fullwidth hyphen-minus, upper case
  '\uFE63chk-pubg-0123456789abcdef', // small hyphen-minus
  '\uFF0D\uFF23\uFF28\uFF2B-PUBG-0123456789abcdef', // fullwidth letters too
  ' -CHK-PUBG-0123456789abcdef ', // padded ASCII
];

describe('the check trxid space', () => {
  it('no order trxid folds into it: each spelling is refused by the rule, with a reason', () => {
    for (const s of SPELLINGS) {
      expect(trxidKey(s).startsWith(trxidKey('-CHK-')), s).toBe(true);
      expect(inCheckSpace(s), s).toBe(true);
      expect(trxidProblem(s.trim()), s).toBeDefined();
    }
    expect(trxidKey(SPELLINGS[0]!)).toBe(trxidKey(CHECK));
    // Near misses stay order trxids: the public clients' own style without the dash, a minus sign.
    for (const ok of ['CHK-PUBG-0123456789abcdef', '\u2212CHK-PUBG-1', 'ORD-CHK-1']) {
      expect(inCheckSpace(ok), ok).toBe(false);
      expect(trxidProblem(ok), ok).toBeUndefined();
    }
  });

  it('the order API refuses them (422 naming trxid) and a file names the line; nothing reaches the supplier', async () => {
    const { home, sb, env } = await shop({}, {}, 'topup-players-trxid-');
    const d = await start(env, { started: true });
    for (const [i, t] of SPELLINGS.slice(0, 3).entries()) {
      const r = await d.call('POST', '/api/v1/orders', { body: { trxid: t, pid: 'PUBG-60', userId: `530000010${i}` } });
      expect(r.status, `${t}: ${r.text}`).toBe(422);
      expect(r.json.errors.map((e: { field: string }) => e.field)).toContain('trxid');
    }
    const file = join(home.dir, 'spelled.csv');
    writeFileSync(file, csv([['trxid', 'pid', 'userId'], [SPELLINGS[0]!, 'PUBG-60', '5300000201'], ['FINE-1', 'PUBG-60', '5300000202']]));
    const v = await runCli(['validate', '--json', file], env);
    const q = JSON.parse(v.stdout);
    expect(q.problems.map((p: { line: number; column: string }) => [p.line, p.column])).toEqual([[2, 'trxid']]);
    expect(sb.admin.ledger().orders).toHaveLength(0);
    await d.daemon.stop();
  }, 120_000);
});
