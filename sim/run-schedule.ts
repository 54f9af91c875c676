/**
 * One simulated run: a home on disk (tmpfs where there is one), its SQLite store, the whole
 * engine (src/engine/runner.ts: intake → store → fund → dispatch → poll → outbox) in one or two
 * daemon processes and the submit and command processes the schedule starts, all in this Node
 * process, all on the simulator's clock, entropy and wire to the model API (model.ts). Crashes drop
 * a process at whatever await it is parked on; a new one starts on the same database file.
 *
 * After the run, invariants.ts judges the store, the result files and the model's ledger.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { pino } from 'pino';
import { loadConfig, type Config } from '../src/config/config.js';
import { ErrorCode } from '../src/kernel/errors.js';
import { seededEntropy } from '../src/kernel/entropy.js';
import { silentLogger, type Logger } from '../src/kernel/log.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { Runner } from '../src/engine/runner.js';
import { ORDERING_BATCH_STATES, type BatchState } from '../src/store/batch-states.js';
import { claimFile } from '../src/claim/claim.js';
import { createRetryBatch } from '../src/ops/retry.js';
import { requestCancel } from '../src/ops/cancel.js';
import { resolveReview } from '../src/ops/review.js';
import { createOrderDesk } from '../src/orders/desk.js';
import { API_DAY_GRACE_MS, apiBatchOpenForOrders } from '../src/orders/api-batch.js';
import { publicStatus, type AcceptOutcome, type OrderDesk, type OrderInput } from '../src/orders/types.js';
import type { RowState } from '../src/store/row-states.js';
import { ACCOUNT_A, LINES_OF_B, ModelApi, PACKS_B, PID_AT_B, SIM_KEY, SIM_KEY_B, type ModelAccount } from './model.js';
import { quiesce, SimScheduler } from './scheduler.js';
import { simTransport } from './transport.js';
import type { Action, Schedule, SimFile, SimRow } from './schedule.js';
import { judge, type Drop, type Judgement, type ShopAttempt } from './invariants.js';
import { canonicalBody, MAX_TRIES, SHOP_TIMEOUT_MS, shopBody, shopTrxid } from './shop.js';

export interface RunOptions {
  /** Keep the home after the run (for a failing seed). */
  keep?: boolean;
  /** Log every process's lines to stderr, prefixed with the simulated time. */
  verbose?: boolean;
  /** Simulated time after which unfinished work is a stall. */
  horizonMs?: number;
  /** Event budget: a run that needs more is a stall (a loop that never ends). */
  maxEvents?: number;
}

export interface RunOutcome extends Judgement {
  events: number;
  simMs: number;
  processes: number;
  crashes: number;
  home: string | null;
  trace: string[];
  /** What happened in the run, counted (the simulator's coverage figures add these up). */
  behaviours: Record<string, number>;
  /** Corpus variants the model answered with. */
  variants: string[];
}

interface Proc {
  id: string;
  kind: 'daemon' | 'submit' | 'command';
  slot: number;
  rt: Runtime;
  runner: Runner | null;
  /** A daemon's order desk (issue 23): the HTTP layer's entry, on the daemon's runtime. */
  desk?: OrderDesk;
  /** Stopped gracefully (SIGTERM): its listener is closed, its acceptances in flight are answered before its store closes. */
  stopping?: boolean;
  accepting?: Set<Promise<unknown>>;
  alive: boolean;
  done: Promise<void>;
}

const API_URL = 'http://api.sim.invalid';
/** The second account's host (schedules with two accounts). */
const API_URL_B = 'http://api-b.sim.invalid';
/** The accounts' names in accounts.toml (two accounts); one account is `default`. */
const NAMES = ['main', 'second'] as const;
/** As daemon.ts: the inbox is listed again this often. */
const SWEEP_EVERY_MS = 15_000;
const HOME_ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

export async function runSchedule(s: Schedule, opts: RunOptions = {}): Promise<RunOutcome> {
  const home = mkdtempSync(join(HOME_ROOT, 'topup-sim-'));
  for (const d of ['inbox', 'jobs', 'outbox']) mkdirSync(join(home, d), { mode: 0o700 });
  const sim = new SimScheduler(seededEntropy(s.seed), (opts as { fullTrace?: boolean }).fullTrace ? 10_000_000 : 400);
  // A shop's schedule may start before UTC midnight: its orders go to two days' batches.
  if (s.shop && s.shop.beforeMidnightMs > 0) sim.startAt(sim.epoch + 86_400_000 - s.shop.beforeMidnightMs);
  const two = s.second;
  // One model API per account: its own host, key, ledger, balance, stock, catalog and faults.
  const modelAccount = (i: 0 | 1): ModelAccount => {
    const base: ModelAccount = i === 0 ? { ...ACCOUNT_A, name: two ? NAMES[0] : 'default' } : { name: NAMES[1], key: SIM_KEY_B, packs: PACKS_B, lines: LINES_OF_B, idPrefix: two?.sameIds ? 'M' : 'N', refusePid: null, keyRevoked: null };
    const w = two?.refusePid;
    const k = two?.keyRevoked;
    return {
      ...base,
      refusePid: w && w.account === i ? { pid: i === 0 ? w.pack : PID_AT_B[w.pack]!, error: w.error, fromMs: w.fromMs } : null,
      keyRevoked: k && k.account === i ? [k.fromMs, k.toMs] : null,
    };
  };
  const api = new ModelApi(sim, s.api, s.seed, modelAccount(0));
  const apis: ModelApi[] = [api];
  for (const f of s.foreign) api.seedForeign(f);
  for (const t of s.forbidden) api.forbidden.add(t.toLowerCase());
  if (two) {
    const b = new ModelApi(sim, two.api, s.seed, modelAccount(1));
    apis.push(b);
    if (two.sameSupplier) {
      api.peer = b;
      b.peer = api;
      // One supplier: another API user's trxids are another user's at both accounts.
      for (const t of s.forbidden) b.forbidden.add(t.toLowerCase());
    }
    // accounts.toml as a reseller writes it, keys in files of their own (0600), read and
    // validated by loadConfig like any home's (config/accounts.ts).
    mkdirSync(join(home, 'keys'), { mode: 0o700 });
    writeFileSync(join(home, 'keys', 'main.key'), `${SIM_KEY}\n`, { mode: 0o600 });
    writeFileSync(join(home, 'keys', 'second.key'), `${SIM_KEY_B}\n`, { mode: 0o600 });
    writeFileSync(
      join(home, 'accounts.toml'),
      [
        `routing = "${two.routing}"`,
        `max_queue_delay = "${two.maxQueueDelayMs / 1000}s"`,
        '',
        '[[account]]',
        `name = "${NAMES[0]}"`,
        `url = "${API_URL}"`,
        'key_file = "keys/main.key"',
        '',
        '[[account]]',
        `name = "${NAMES[1]}"`,
        `url = "${API_URL_B}"`,
        'key_file = "keys/second.key"',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  }
  /** The model API of an account (by its name in the store), and of a URL's host. */
  const apiOf = (account: string): ModelApi => apis.find((m) => m.account.name === account) ?? api;
  const apiAt = (url: URL): ModelApi => (two && url.host === new URL(API_URL_B).host ? apis[1]! : api);
  const config = loadConfig({
    TOPUP_HOME: home,
    ...(two ? {} : { TOPUP_API_URL: API_URL, TOPUP_API_KEY: SIM_KEY }),
    TOPUP_POLL_INTERVAL_MS: '5000',
    TOPUP_REQUEST_TIMEOUT_MS: '15000',
    TOPUP_REVIEW_AFTER_MS: '300000',
    TOPUP_RETRY_AFTER_MAX_MS: '60000',
    TOPUP_RATE_LIMITS: '40/1s,200/1m',
    TOPUP_PARTIAL_RESULT_MS: '3600000',
    TOPUP_LOG_LEVEL: 'silent',
  });
  const dead = new Set<string>();
  const procs: Proc[] = [];
  const failures: string[] = [];
  const drops: Drop[] = [];
  let pendingOps = 0;
  let counter = 0;
  let crashes = 0;
  const actionsLeft = { n: s.actions.length };

  const logger = (owner: string): Logger => (opts.verbose ? verboseLogger(owner, sim) : silentLogger());
  const runtime = (owner: string): Runtime =>
    openRuntime(config, logger(owner), API_URL, {
      clock: sim.clockFor(owner),
      entropy: seededEntropy(s.seed + ++counter * 7919),
      transport: simTransport(sim, apiAt, owner, seededEntropy(s.seed + counter * 104_729)),
      owner,
      ownerIsDead: (o) => dead.has(o),
    });

  /** The run is over: processes are being stopped, none is started again. */
  let ending = false;
  const startDaemon = (slot: number): void => {
    if (ending) return;
    const owner = `sim:${++counter}:daemon${slot}`;
    const rt = runtime(owner);
    const runner = new Runner(rt, {});
    const p: Proc = { id: owner, kind: 'daemon', slot, rt, runner, alive: true, done: Promise.resolve() };
    if (s.shop) p.desk = createOrderDesk(rt, () => runner.wake());
    procs.push(p);
    // The daemon's start-up sweep of the inbox, and the periodic one (daemon.ts sweepInbox) that
    // offers again a file whose claim did not happen (a crash between its record and its move).
    const sweep = (): void => {
      if (!p.alive) return;
      for (const f of inboxFiles(config)) runner.offerFile(f);
      sim.at(SWEEP_EVERY_MS, owner, `${owner} sweeps the inbox`, sweep);
    };
    sim.at(0, owner, `${owner} sweeps the inbox`, sweep);
    p.done = runner.run().then(
      () => void (p.alive = false),
      (err: unknown) => {
        if (p.alive) failures.push(`${owner} stopped with an error: ${(err as Error)?.stack ?? String(err)}`);
        p.alive = false;
      },
    );
  };

  const kill = (p: Proc, ownerDead: boolean): void => {
    if (!p.alive) return;
    p.alive = false;
    crashes++;
    sim.drop(p.id);
    if (ownerDead) dead.add(p.id);
    try {
      p.rt.db.close();
    } catch {
      // An open statement: the connection stays as a dead process's would, holding no transaction.
    }
  };

  /** A command process (retry, cancel, resolve): its own owner, run to its end. */
  const command = (what: string, fn: (rt: Runtime) => Promise<void>): void => {
    const owner = `sim:${++counter}:${what}`;
    const rt = runtime(owner);
    pendingOps++;
    const p: Proc = { id: owner, kind: 'command', slot: -1, rt, runner: null, alive: true, done: Promise.resolve() };
    procs.push(p);
    p.done = fn(rt)
      .catch((err: unknown) => {
        // Refusals a person would read (nothing to retry, not finished yet) are part of the game.
        const e = err as { code?: string; message?: string };
        if (e.code !== ErrorCode.Usage && e.code !== ErrorCode.NotFound) failures.push(`${what} failed: ${(err as Error)?.stack ?? String(err)}`);
      })
      .finally(async () => {
        p.alive = false;
        await rt.close().catch(() => {});
        pendingOps--;
      });
  };

  const dropFile = (a: Extract<Action, { kind: 'drop' }>): void => {
    const file = s.files[a.file % s.files.length]!;
    const { rows, keys, header, cells } = edited(file, a.file % s.files.length, a.edit, two);
    const name = `f${a.file % s.files.length}-${drops.length}.csv`;
    const tmp = join(home, `.${name}.writing`);
    writeFileSync(tmp, (file.delimiter === ';' ? '\ufeff' : '') + stringify([header, ...cells], { delimiter: file.delimiter, record_delimiter: 'windows' }));
    const path = join(config.inboxDir, name);
    renameSync(tmp, path);
    drops.push({ name, file: a.file % s.files.length, rows, keys, again: false });
    // Each daemon's watcher sees the file on its own event: two claims never race on real I/O
    // inside one event (that would make the run depend on the disk, not the seed).
    for (const p of procs) if (p.alive && p.kind === 'daemon') sim.at(1 + procs.indexOf(p), p.id, `${p.id} sees ${name}`, () => p.runner!.offerFile(path));
  };

  const submit = (a: Extract<Action, { kind: 'submit' }>): void => {
    const file = s.files[a.file % s.files.length]!;
    const { rows, keys, header, cells } = edited(file, a.file % s.files.length, a.edit ?? 'none', two);
    const name = `f${a.file % s.files.length}-${drops.length}.csv`;
    const path = join(home, name);
    writeFileSync(path, stringify([header, ...cells], { delimiter: file.delimiter }));
    drops.push({ name, file: a.file % s.files.length, rows, keys, again: a.again });
    const owner = `sim:${++counter}:submit`;
    const rt = runtime(owner);
    pendingOps++;
    const p: Proc = { id: owner, kind: 'submit', slot: -1, rt, runner: null, alive: true, done: Promise.resolve() };
    procs.push(p);
    p.done = (async () => {
      const batch = await claimFile(rt, path, { origin: 'submit', own: true, move: false, again: a.again });
      p.runner = new Runner(rt, { once: true, onlyBatch: batch.id });
      await p.runner.run();
    })()
      .catch((err: unknown) => {
        if (p.alive) failures.push(`${owner} failed: ${(err as Error)?.stack ?? String(err)}`);
      })
      .finally(async () => {
        const wasAlive = p.alive;
        p.alive = false;
        if (!wasAlive) return; // killed: already counted out, and its connection is closed
        await rt.close().catch(() => {});
        pendingOps--;
      });
  };

  const newestBatchOf = (rt: Runtime, fileIdx: number, finished: boolean, states?: readonly BatchState[]): string | undefined => {
    const names = new Set(drops.filter((d) => d.file === fileIdx).map((d) => d.name));
    return rt.batches.list().find((b) => names.has(b.sourceName) && (b.finishedAt !== null) === finished && (states === undefined || states.includes(b.state)))?.id;
  };

  const act = (a: Action): void => {
    switch (a.kind) {
      case 'drop': return dropFile(a);
      case 'submit': return submit(a);
      case 'retry': {
        const retry = (): void =>
          command('retry', async (rt) => {
            const id = newestBatchOf(rt, a.file % s.files.length, true);
            if (id) await createRetryBatch(rt, id, { repeats: a.repeats });
          });
        retry();
        if (a.twice) retry();
        return;
      }
      case 'cancel':
        return command('cancel', async (rt) => {
          // The newest batch of the file still ordering (a copy of a file already taken orders nothing: `topup cancel` refuses it).
          const id = newestBatchOf(rt, a.file % s.files.length, false, ORDERING_BATCH_STATES);
          if (id) requestCancel(rt, id);
        });
      case 'resolve':
        return command('resolve', async (rt) => {
          for (const r of rt.rows.reviewRows()) {
            if (r.trxid === null) continue;
            // The operator looks the trxid up in the supplier's panel: an order this row's sends made.
            const panel = apiOf(r.account);
            const o = panel.byTrxid(r.trxid);
            const ours = o !== undefined && o.origin === 'engine';
            // A slip of the eye: the panel's line above, an order another row holds (forced past the check).
            // (Held on this row's account: an id another account's row holds is another order there.)
            const other = a.slip === 'other' ? panel.orders.find((x) => x.origin === 'engine' && x !== o && rt.rows.placedBy(x.orderId, r.account) !== undefined) : undefined;
            const typed = other ? other.orderId.toLowerCase() : ours && a.slip === 'case' ? o.orderId.toLowerCase() : o?.orderId;
            try {
              await resolveReview(rt, { batchId: r.batchId, line: r.line, by: 'sim-operator', ...(other ? { chargedOrderId: typed!, force: true } : ours ? { chargedOrderId: typed! } : { notCharged: true }) });
            } catch (err) {
              // A refusal of a slip is the point; the operator goes on to the next row.
              if ((err as { code?: string }).code !== ErrorCode.Usage || !other) throw err;
            }
          }
        });
      case 'crash': {
        const live = procs.filter((p) => p.alive && p.kind !== 'command');
        const p = live[a.proc % Math.max(1, live.length)];
        if (!p) return;
        kill(p, a.dead);
        if (p.kind === 'daemon') restart(p);
        // A killed submit never ends its own chain: it is no longer pending.
        if (p.kind === 'submit') pendingOps--;
        return;
      }
      case 'stop': {
        const p = procs.filter((x) => x.alive && x.kind === 'daemon')[a.proc % s.daemons];
        if (!p) return;
        p.stopping = true;
        p.runner!.stop();
        void p.done.then(async () => {
          await Promise.allSettled([...(p.accepting ?? [])]);
          await p.rt.close().catch(() => {});
          sim.at(s.restartMs, null, `restart daemon ${p.slot}`, () => startDaemon(p.slot));
        });
        return;
      }
      case 'top-up': return apis.forEach((m) => m.topUp(a.usd));
      case 'clock-step': return sim.stepWall(a.ms);
    }
  };

  const restart = (p: Proc): void => void sim.at(s.restartMs, null, `restart daemon ${p.slot}`, () => startDaemon(p.slot));

  // ── The shop (issue 23, sim/shop.ts): orders through the order desk of whichever daemon is up. ──
  const shop = s.shop;
  const attempts: ShopAttempt[] = [];
  /** Outstanding: calls not made yet, attempts not answered, resends not sent yet. */
  let shopLeft = 0;
  const shopRand = seededEntropy((s.seed ^ 0x5109) + 3);
  const shopStats = { together: 0, cuts: 0 };
  const fileTrxid = (f: number, r: number): string | undefined => {
    const file = s.files[f % s.files.length]!;
    return file.trxidColumn ? file.rows[r % file.rows.length]!.trxid : undefined;
  };
  const answerOf = (o: AcceptOutcome): NonNullable<ShopAttempt['answer']> =>
    o.kind === 'refused' ? { kind: 'refused', status: o.status, code: o.code } : { kind: o.kind, batchId: o.order.batchId, trxid: o.order.trxid, status: o.order.status };
  const sendOrders = (orders: { trxid: string; body: OrderInput }[], tries: number, call: number): void => {
    const lat = (): number => 1 + Math.floor(shopRand.random() * 30);
    const mine = orders.map((o) => {
      const a: ShopAttempt = { trxid: o.trxid, body: o.body, canon: canonicalBody(o.body), at: sim.mono, to: null, call, tries, answer: null };
      attempts.push(a);
      shopLeft++;
      return a;
    });
    const settle = (a: ShopAttempt, answer: NonNullable<ShopAttempt['answer']>): void => {
      if (a.answer !== null) return;
      a.answer = answer;
      shopLeft--;
      // No answer (or a 500): the shop cannot know whether the order is stored, and sends the same body again.
      if ((answer.kind === 'none' || answer.kind === 'error') && a.tries < MAX_TRIES) {
        shopLeft++;
        sim.at(shop!.resendAfterMs, null, `shop resends ${a.trxid}`, () => {
          shopLeft--;
          sendOrders([{ trxid: a.trxid, body: a.body }], a.tries + 1, a.call);
        });
      }
    };
    const daemons = procs.filter((p) => p.alive && !p.stopping && p.kind === 'daemon' && p.desk);
    if (daemons.length === 0) {
      for (const a of mine) settle(a, { kind: 'none', why: 'no daemon listening' });
      return;
    }
    // Concurrent requests are spread over the daemons up (two processes may accept one trxid at once).
    const groups = new Map<Proc, ShopAttempt[]>();
    for (const a of mine) {
      const p = daemons[Math.floor(shopRand.random() * daemons.length)]!;
      a.to = p.id;
      groups.set(p, [...(groups.get(p) ?? []), a]);
    }
    for (const a of mine) {
      const cancel = sim.at(SHOP_TIMEOUT_MS, null, `the shop's timeout for ${a.trxid}`, () => settle(a, { kind: 'none', why: 'timeout (the daemon died, or no answer in 30 s)' }));
      a.cancelTimeout = cancel;
    }
    for (const [p, xs] of groups) {
      if (xs.length > 1) shopStats.together++;
      // The requests reach the process together (one event: one group commit); a dead process takes none.
      sim.at(lat(), p.id, `${xs.length} order request(s) reach ${p.id}`, () => {
        for (const a of xs) {
          // Its listener closed meanwhile (a graceful stop): the connection is refused.
          if (p.stopping) {
            a.cancelTimeout?.();
            settle(a, { kind: 'none', why: 'connection refused (the daemon is stopping)' });
            continue;
          }
          const accepting = p.desk!.accept(a.body);
          (p.accepting ??= new Set()).add(accepting);
          void accepting.finally(() => p.accepting!.delete(accepting)).catch(() => {});
          accepting.then(
            (out) => void sim.at(lat(), p.id, `${out.kind} for ${a.trxid} reaches the shop`, () => (a.cancelTimeout?.(), settle(a, answerOf(out)))),
            (err: unknown) => void sim.at(lat(), p.id, `500 for ${a.trxid} reaches the shop`, () => (a.cancelTimeout?.(), settle(a, { kind: 'error', message: (err as Error)?.message ?? String(err) }))),
          );
        }
      });
    }
  };
  if (shop) {
    shopLeft += shop.calls.length;
    shop.calls.forEach((c, i) =>
      sim.at(c.at, null, `shop call ${i} (${c.orders.length} order(s))`, () => {
        shopLeft--;
        sendOrders(c.orders.map((o) => {
          const trxid = shopTrxid(o, fileTrxid);
          return { trxid, body: shopBody(o, trxid, two !== undefined) };
        }), 1, i);
      }),
    );
    // A daemon dies while the acceptances of a call are in flight (before their commit, or after it, before the answer).
    for (const cut of shop.cuts) {
      const i = cut.call % shop.calls.length;
      sim.at(shop.calls[i]!.at + cut.afterMs, null, `crash during shop call ${i}`, () => {
        const to = attempts.find((a) => a.call === i)?.to;
        const p = procs.find((x) => x.id === to && x.alive);
        if (!p) return;
        shopStats.cuts++;
        kill(p, cut.dead);
        restart(p);
      });
    }
  }
  /** Every public status each API order was seen in, in order (distinct consecutive), sampled after every event. */
  const seenStatus = new Map<string, string[]>();
  let secondDayWhileLive = 0;
  const sampleApiOrders = (rt: Runtime): void => {
    if (!shop) return;
    const rows = rt.db.prepare('SELECT batch_id, idx, state FROM rows WHERE api_body_hash IS NOT NULL').all() as { batch_id: string; idx: number; state: RowState }[];
    const batchesBefore = new Set([...seenStatus.keys()].map((k) => k.split(':')[0]));
    for (const r of rows) {
      const k = `${r.batch_id}:${r.idx}`;
      const seq = seenStatus.get(k) ?? [];
      const st = publicStatus(r.state);
      if (seq.at(-1) !== st) seq.push(st);
      seenStatus.set(k, seq);
    }
    // A second day's batch made while the first still has live orders.
    const fresh = rows.filter((r) => batchesBefore.size > 0 && !batchesBefore.has(r.batch_id));
    if (fresh.length > 0 && rows.some((r) => batchesBefore.has(r.batch_id) && !['completed', 'cancelled', 'rejected', 'review'].includes(publicStatus(r.state)))) secondDayWhileLive++;
  };

  for (let slot = 0; slot < s.daemons; slot++) startDaemon(slot);
  for (const a of s.actions) {
    sim.at(a.at, null, `action ${a.kind}${'file' in a ? ` file ${a.file}` : ''}`, () => {
      actionsLeft.n--;
      act(a);
    });
  }

  // An observer of the store, as an operator's `topup status` would be.
  const observer = runtime('sim:observer');
  const horizon = opts.horizonMs ?? 6 * 3_600_000;
  const maxEvents = opts.maxEvents ?? 200_000;
  let stall: string | null = null;
  let toppedUp = false;
  // A schedule that starts before midnight runs until the first day's API batch may be finished
  // (its day and grace over): that batch must then be finished, its orders ended (invariant 16).
  const dayTurn = shop && shop.beforeMidnightMs > 0 ? sim.epoch + shop.beforeMidnightMs + API_DAY_GRACE_MS + 1_000 : 0;
  const over = (): boolean => actionsLeft.n === 0 && pendingOps === 0 && shopLeft === 0 && sim.now >= dayTurn && settled(observer, config);
  for (;;) {
    if (!sim.lastQuiet && !(await quiesce())) {
      stall = `BUSY LOOP: a process kept working for 10 s of real time without waiting for simulated time or an answer (last events: ${sim.trace.slice(-3).join(' | ')})`;
      for (const p of procs) if (p.alive) kill(p, true);
      break;
    }
    sampleApiOrders(observer);
    // Whether all is done is looked at every few events (a read of the store and the inbox).
    if ((sim.fired & 15) === 0 && over()) break;
    // What is left waits for a top-up only (every action done): the operator reads the notice
    // and tops the account up, once. A batch waiting for balance is live for a stated reason.
    if (!toppedUp && (sim.fired & 15) === 0 && actionsLeft.n === 0 && shopLeft === 0 && onlyBalanceWaits(observer)) {
      toppedUp = true;
      sim.at(60_000, null, 'operator tops up after the balance notice', () => apis.forEach((m) => m.topUp(1_000)));
    }
    if (sim.spin !== null) {
      stall = `SPIN: ${sim.spin}`;
      break;
    }
    if (sim.mono > horizon || sim.fired > maxEvents) {
      stall = `not finished after ${Math.round(sim.mono / 60_000)} simulated minutes and ${sim.fired} events: ${unfinished(observer)}`;
      break;
    }
    if (!sim.step()) {
      if (over()) break;
      stall = `nothing left to happen, yet not finished: ${unfinished(observer)}`;
      break;
    }
  }
  // Graceful stop of every living daemon (their drain runs on the simulated clock).
  const endWall = sim.now;
  ending = true;
  for (const p of procs) if (p.alive && p.runner) p.runner.stop();
  for (let i = 0; i < 10_000 && procs.some((p) => p.alive && p.kind === 'daemon'); i++) {
    if (!(await quiesce()) || !sim.step()) break;
    sampleApiOrders(observer);
  }
  sampleApiOrders(observer);
  for (const p of procs) if (p.kind === 'daemon' && !p.alive) await p.rt.close().catch(() => {});
  for (const m of apis) m.settleAll();
  const verdict = judge({ home, config, observer, apis, apiOf, drops, failures, stall, ...(shop ? { shop: { attempts, seen: seenStatus, endWall, stepsBackMs: s.actions.reduce((n, a) => n + (a.kind === 'clock-step' && a.ms < 0 ? -a.ms : 0), 0) } } : {}) });
  await observer.close();
  const keep = opts.keep === true || (opts.keep !== false && !verdict.ok && process.env.TOPUP_SIM_KEEP === '1');
  if (!keep) rmSync(home, { recursive: true, force: true });
  const sum = (f: (m: ModelApi) => number): number => apis.reduce((n, m) => n + f(m), 0);
  const behaviours: Record<string, number> = {
    'requests to the API': sum((m) => m.stats.requests),
    'orders made': sum((m) => m.stats.created),
    'replays answered': sum((m) => m.stats.replays),
    'answers lost after an order was made': sum((m) => m.stats.lostAfter),
    '5xx or proxy pages after an order was made': sum((m) => m.stats.errorAfter),
    'resends refused before idempotency': sum((m) => m.stats.refused),
    '429 answers': sum((m) => m.stats.rateLimited),
    'foreign orders in the account': s.foreign.length,
    'processes started': procs.length,
    'processes crashed': crashes,
    'two daemons on one home': s.daemons > 1 ? 1 : 0,
  };
  for (const a of s.actions) {
    const edit = a.kind === 'drop' || a.kind === 'submit' ? (a.edit ?? 'none') : 'none';
    const name = `action: ${a.kind}${edit !== 'none' ? ` (${edit})` : ''}`;
    behaviours[name] = (behaviours[name] ?? 0) + 1;
  }
  for (const [st, n] of Object.entries(verdict.figures.states)) behaviours[`rows ended ${st}`] = n;
  if (shop) {
    const answered = (k: string): number => attempts.filter((a) => a.answer?.kind === k).length;
    const refused = (status: number): number => attempts.filter((a) => a.answer?.kind === 'refused' && a.answer.status === status).length;
    Object.assign(behaviours, {
      'api orders: schedules': 1,
      'api orders: acceptances sent': attempts.length,
      'api orders: accepted (202)': answered('accepted'),
      'api orders: the same order (200)': answered('same'),
      'api orders: refused 402': refused(402),
      'api orders: refused 409': refused(409),
      'api orders: refused 422': refused(422),
      'api orders: refused 503': refused(503),
      'api orders: no answer (crash, nobody listening, timeout)': answered('none'),
      'api orders: 500 (the desk threw)': answered('error'),
      'api orders: resends after no answer': attempts.filter((a) => a.tries > 1).length,
      'api orders: queue true': attempts.filter((a) => a.body.queue === true).length,
      'api orders: requests reaching a daemon together': shopStats.together,
      'api orders: daemon crashed during a call': shopStats.cuts,
      'api orders: rows stored': verdict.figures.apiRows,
      'api orders: days with a batch': verdict.figures.apiBatches,
      'api orders: a second day\'s batch made while the first had live orders': secondDayWhileLive,
      'api orders: day batches finished': verdict.figures.apiBatchesDone,
    });
  }
  if (s.api.style === 'real-world') behaviours['real-world answers'] = 1;
  if (two) {
    const b = apis[1]!;
    Object.assign(behaviours, {
      'two accounts': 1,
      [`two accounts: routing ${two.routing}`]: 1,
      'two accounts: orders made on the second': b.stats.created,
      'two accounts: orders made on the first': api.stats.created,
      'two accounts: rows moved to another account': verdict.figures.moved,
      'two accounts: pack withdrawn (refusals)': sum((m) => m.stats.pidRefused),
      'two accounts: key revoked (answers)': sum((m) => m.stats.keyRevoked),
      'two accounts: trxid of the other account refused': sum((m) => m.stats.peerForbidden),
      'two accounts: same order ids at both': two.sameIds ? 1 : 0,
      'two accounts: maintenance on one': s.api.maintenance.length + two.api.maintenance.length > 0 ? 1 : 0,
      'two accounts: answers lost after creation on one': api.stats.lostAfter + b.stats.lostAfter > 0 ? 1 : 0,
      'two accounts: rows pinned by an account column': two.pin === null ? 0 : 1,
    });
  }
  return {
    ...verdict,
    ...((opts as { fullTrace?: boolean }).fullTrace ? { fullTrace: sim.trace } : {}),
    events: sim.fired,
    simMs: sim.mono,
    processes: procs.length,
    crashes,
    home: keep ? home : null,
    trace: verdict.ok ? [] : sim.trace,
    behaviours,
    variants: [...new Set(apis.flatMap((m) => [...m.stats.variants]))],
  };
}

/** The rows of a drop as written: the file itself, or an edited copy (a column or row added, rows reordered). */
function edited(file: SimFile, fileIdx: number, edit: Extract<Action, { kind: 'drop' }>['edit'], two?: Schedule['second']): { rows: SimRow[]; keys: string[]; header: string[]; cells: string[][] } {
  let rows = [...file.rows];
  if (edit === 'reorder') rows.reverse();
  if (edit === 'add-row') rows = [...rows, { pid: 'PUBG-60', userId: String(5_199_000_000 + rows.length) }];
  const header = ['pid', 'userId', 'zoneId', 'quantity'];
  if (file.trxidColumn) header.push('trxid');
  if (file.noteColumn) header.push('Customer');
  // Two accounts: an `account` column pins every third row of the file (as written) to one account.
  const pin = two?.pin ?? null;
  if (pin !== null) header.push('account');
  if (edit === 'add-column') header.push('checked');
  const written = (r: SimRow): string[] => {
    // Two accounts: a file may name a pack by either account's pid.
    const pid = two && r.altPid ? (PID_AT_B[r.pid] ?? r.pid) : r.pid;
    const c = [pid, r.userId ?? '', r.zoneId ?? '', r.quantity === undefined ? '' : String(r.quantity)];
    if (file.trxidColumn) c.push(r.trxid ?? '');
    if (file.noteColumn) c.push(r.note ?? '');
    if (pin !== null) c.push(file.rows.indexOf(r) % 3 === 0 ? NAMES[pin] : '');
    return c;
  };
  const cells = rows.map((r) => (edit === 'add-column' ? [...written(r), 'yes'] : written(r)));
  // Rows written alike are one purchase bought as many times as they are written: which of two
  // equal rows a re-drop's row stands for cannot be told (nor needs to be). A pack named by either
  // account's pid is the same pack (docs/accounts.md: a pid of any account names its pack), so rows
  // that differ only in which account's pid they wrote are alike too.
  const alike = (r: SimRow): string => JSON.stringify([r.pid, ...written(r).slice(1)]);
  const keys = rows.map((r) => {
    const i = file.rows.indexOf(r) < 0 ? -1 : file.rows.findIndex((x) => alike(x) === alike(r));
    return i >= 0 ? `${fileIdx}:${i}` : `${fileIdx}:added`;
  });
  return { rows, keys, header, cells };
}

function inboxFiles(config: Config): string[] {
  return readdirSync(config.inboxDir).filter((n) => !n.startsWith('.')).map((n) => join(config.inboxDir, n));
}

/**
 * The day's API batch still taking orders, with none of them live: it waits for orders, not for
 * the engine (the runner's #idle reads it so too). It is finished once its day is over.
 */
function waitsForOrders(observer: Runtime, b: Parameters<typeof apiBatchOpenForOrders>[0] & { id: string }): boolean {
  return apiBatchOpenForOrders(b, observer.clock.now()) && !observer.rows.hasLive(b.id);
}

/** Nothing left to do: no file waiting in the inbox, no batch unfinished (but a day's API batch waiting for orders). */
function settled(observer: Runtime, config: Config): boolean {
  return inboxFiles(config).length === 0 && observer.batches.unfinished().every((b) => waitsForOrders(observer, b));
}

/** Every unfinished batch waits for balance (the funds gate says so). */
function onlyBalanceWaits(observer: Runtime): boolean {
  const open = observer.batches.unfinished().filter((b) => !waitsForOrders(observer, b));
  return open.length > 0 && open.every((b) => b.waitReason === 'balance' || (b.state === 'open' && observer.rows.counts(b.id).pending > 0 && b.waitReason === null));
}

function unfinished(observer: Runtime): string {
  const parts = observer.batches.unfinished().map((b) => {
    const c = observer.rows.counts(b.id);
    const live = Object.entries(c).filter(([st, n]) => n > 0 && ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen'].includes(st));
    return `${b.id} (${b.sourceName}, ${b.state}, owner ${b.owner ?? 'none'}, wait ${b.waitReason ?? '-'}: ${live.map(([st, n]) => `${n} ${st}`).join(', ') || 'no live rows'})`;
  });
  return parts.join('; ') || `no unfinished batch; inbox: ${readdirSync(observer.config.inboxDir).join(', ') || 'empty'}`;
}

function verboseLogger(owner: string, sim: SimScheduler): Logger {
  return pino({ level: 'debug', base: { p: owner }, timestamp: () => `,"t":${(sim.mono / 1000).toFixed(3)}` }, process.stderr);
}
