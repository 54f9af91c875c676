/**
 * Issue 21, reproductions 3 and 4 (and item 8's one rule for re-drops and retry), with the real
 * CLI, the real sandbox and its ledger:
 *  - a new customer's gift card is not skipped as somebody else's repeat: the reseller's own
 *    columns both files share tell purchases apart; the morning file's edited re-drop is still
 *    skipped whole; a key/card row with nothing to tell it apart says "give it a trxid";
 *  - rows of a cancelled batch (never sent) are bought again by `topup retry` and by the file
 *    dropped again;
 *  - a row cancelled for its player id is bought again neither by a re-drop nor by retry unless
 *    asked.
 */
import { join } from 'node:path';
import { readdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';

releaseAfterEach();

describe.concurrent('repeats that tell customers apart', () => {
  it("the afternoon's cards for new customers are bought; the morning file's edited re-drop is skipped whole", released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Customer'], ['STEAM-5', '1', 'alice'], ['STEAM-5', '1', 'bob']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // New customers, the same pack and quantity: their own column says they are new purchases.
    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Customer'], ['STEAM-5', '1', 'carol'], ['STEAM-5', '1', 'dave']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);

    // The morning file opened again, a column added: every row repeats (same customers).
    home.drop('morning-v2.csv', semi([['pid', 'quantity', 'Customer', 'checked'], ['STEAM-5', '1', 'alice', 'yes'], ['STEAM-5', '1', 'bob', '']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'morning-v2').map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  }));

  it('a key/card row with nothing but its pack and quantity to tell it apart is named in validate: give it a trxid', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('k1.csv', semi([['pid', 'quantity'], ['STEAM-5', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const file = join(home.dir, 'k2.csv');
    writeFileSync(file, semi([['pid', 'quantity'], ['STEAM-5', '1']]));
    const v = await runCli(['validate', file, '--json'], env);
    const quote = JSON.parse(v.stdout);
    expect(quote.problems[0].problem).toMatch(/Nothing but the pack and quantity tells this key\/card row from that purchase: if it is a new customer's, give the row its own trxid/);
  }));
});

describe.concurrent('cancelled means re-buyable', () => {
  it('a batch cancelled before anything was sent: retry buys its rows under new trxids, and so does the file dropped again', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 0 });
    const env = cliEnv(home, sb);
    const rows = semi([['pid', 'userId'], ['PUBG-60', '5123456701'], ['PUBG-60', '5123456702']]);
    // No balance: the batch waits without sending; the operator cancels it.
    writeFileSync(join(home.dir, 'wait.csv'), rows);
    const submit = runCli(['submit', join(home.dir, 'wait.csv'), '--json'], env, { timeoutMs: 60_000 });
    const batchId = await batchWaitingForBalance(env);
    expect(batchId).not.toBe('');
    expect((await runCli(['cancel', batchId], env)).code).toBe(0);
    await submit;
    expect(sb.admin.ledger().orders).toHaveLength(0);
    sb.admin.setBalance({ balanceUsd: 100 });

    const retry = await runCli(['retry', batchId, '--run', '--json'], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ rows: 2, counts: { completed: 2 } });
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // The same bytes dropped again: not a duplicate of the cancelled batch, and its never-sent rows'
    // trxids were given up. Here they repeat the retry's purchases (bought just now): skipped, not bought twice.
    home.drop('wait.csv', rows);
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  }));

  it('the file of a batch cancelled before anything was sent, dropped again, is bought (no "trxid already used")', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 0 });
    const env = cliEnv(home, sb);
    const rows = semi([['pid', 'userId'], ['PUBG-60', '5123456711'], ['PUBG-60', '5123456712']]);
    writeFileSync(join(home.dir, 'c.csv'), rows);
    const submit = runCli(['submit', join(home.dir, 'c.csv'), '--json'], env, { timeoutMs: 60_000 });
    const batchId = await batchWaitingForBalance(env);
    expect((await runCli(['cancel', batchId], env)).code).toBe(0);
    await submit;
    sb.admin.setBalance({ balanceUsd: 100 });
    home.drop('c.csv', rows);
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const again = readdirResults(home).find((n) => n !== `c.result.csv` && n.startsWith('c.'));
    const result = readResult(home, again ? again.replace(/\.result\.csv$/, '') : 'c');
    expect(result.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  }));
});

describe.concurrent('a retry is checked against purchases made since (found by the simulator)', () => {
  it('a cancelled batch re-dropped as an edited copy that buys its rows: a retry of the cancelled batch then skips them as repeats', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 0 });
    const env = cliEnv(home, sb);
    const rows = [['pid', 'userId'], ['PUBG-60', '5123456721'], ['PUBG-60', '5123456722']];
    writeFileSync(join(home.dir, 'a.csv'), semi(rows));
    const submit = runCli(['submit', join(home.dir, 'a.csv'), '--json'], env, { timeoutMs: 60_000 });
    const batchId = await batchWaitingForBalance(env);
    expect((await runCli(['cancel', batchId], env)).code).toBe(0);
    await submit;
    sb.admin.setBalance({ balanceUsd: 100 });
    // The reseller drops an edited copy: nothing of the cancelled batch was bought, so it buys both.
    home.drop('a-v2.csv', semi(rows.map((r, i) => [...r, i === 0 ? 'note' : 'again'])));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
    // Then retries the cancelled batch: its rows are the purchases just made: skipped, not bought twice.
    const retry = await runCli(['retry', batchId, '--run', '--json'], env);
    expect(JSON.parse(retry.stdout).counts).toMatchObject({ completed: 0, skipped: 2 });
    expect(sb.admin.ledger().orders).toHaveLength(2);
  }));
});

describe.concurrent('one rule for re-drops and retry: a row cancelled for its player id', () => {
  it('is not bought again by a re-drop (the same id fails again), nor by retry unless asked', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    // The player id 99999 ends cancelled with INVALID PLAYER, refunded (the sandbox's rule; a PUBG id is digits only).
    home.drop('p.csv', semi([['pid', 'userId'], ['PUBG-60', '99999'], ['PUBG-60', '5123456799']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'p').map((r) => r.status)).toEqual(['cancelled', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
    home.drop('p-again.csv', semi([['pid', 'userId', 'note'], ['PUBG-60', '99999', 'again'], ['PUBG-60', '5123456799', 'again']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const rows = readResult(home, 'p-again');
    expect(rows.map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(rows[0]!.error).toMatch(/cancelled for its player id \(INVALID PLAYER\): the same id fails again; fix it in the file/);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  }));
});

/** The batch `topup status` shows waiting for balance (a submit with no balance behind it), polled until it does. */
async function batchWaitingForBalance(env: NodeJS.ProcessEnv): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const st = await runCli(['status', '--json'], env);
    // A status that prints nothing is a failure to see, not to wait through: its own words say why.
    expect(st.stdout, `topup status: exit ${st.code}: ${st.stderr.slice(-2000)}`).not.toBe('');
    const batches = (JSON.parse(st.stdout) as { batches: { id: string; why: string | null }[] }).batches;
    const id = batches.find((b) => /balance/.test(b.why ?? ''))?.id;
    if (id) return id;
    await new Promise((r) => setTimeout(r, 100));
  }
  return '';
}

function readdirResults(home: { outbox: string }): string[] {
  return readdirSync(home.outbox).filter((n) => n.endsWith('.result.csv'));
}
