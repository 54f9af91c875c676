/**
 * Public entry point of the sandbox: a local HTTP server that behaves like the supplier's
 * Reseller API (spec in /work/shared/reseller-api-spec.md; our choices in choices.ts).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pino from 'pino';
import { createAdmin, type SandboxAdmin } from './admin.js';
import { Answers } from './answers.js';
import { API_KEY_FORMAT } from './auth.js';
import { defaultCatalog, loadCatalogFile } from './default-catalog.js';
import { Faults } from './faults.js';
import { validateFulfilment } from './fulfilment.js';
import { LiveCatalog } from './live-catalog.js';
import { RateLimiter } from './rate-limit.js';
import { PlayerDirectory, type PlayerSettings } from './players.js';
export type { PlayerSettings } from './players.js';
import { placeManualOrders } from './real-world.js';
import { createHandler } from './server.js';
import { SandboxState } from './state.js';
import type { SubmitContext } from './submit.js';
import type { AccountState, AnswerStyle, FaultSettings, FulfilmentSettings, RateWindow, RealWorldSettings, SandboxAccountInit } from './types.js';
import { DEFAULT_FULFILMENT, DEFAULT_RATE_LIMITS, toMicros } from './types.js';

export type { AccountState, AnswerStyle, FaultSettings, FulfilmentSettings, RateWindow, RealWorldSettings, SandboxAccountInit } from './types.js';
export type { AnswersPatch, AnswersView } from './answers.js';
export { ANSWER_STYLES } from './types.js';
export type { SandboxAdmin, AdminLedger, AdminOrder, AdminAccountView } from './admin.js';
export type { RateStats } from './rate-limit.js';
export type { CallLogEntry, LedgerEntry } from './types.js';
export { parseRateLimits } from './rate-limit.js';
export { fingerprint } from './state.js';

export interface SandboxOptions {
  host?: string;
  port?: number;
  apiKey?: string;
  balanceUsd?: number;
  accounts?: SandboxAccountInit[];
  catalogFile?: string;
  stateFile?: string;
  rateLimits?: { limit: number; windowMs: number }[];
  adminToken?: string;
  faults?: Partial<FaultSettings>;
  fulfilment?: Partial<FulfilmentSettings>;
  /** 'spec' (default): the spec's exact types; 'real-world': as real deployments answer (real-world.ts). */
  answers?: AnswerStyle;
  /** Knobs of the real-world style; `seed` defaults to the fulfilment seed. */
  realWorld?: Partial<RealWorldSettings>;
  /** The player checks (players.ts): unknown ids, a price per check. */
  players?: Partial<PlayerSettings>;
  logger?: pino.Logger;
  /** Sandbox clock in epoch ms (tests move time by hand); default Date.now. */
  now?: () => number;
}

export interface RunningSandbox {
  url: string;
  port: number;
  host: string;
  adminToken: string;
  close(): Promise<void>;
  admin: SandboxAdmin;
}

export async function startSandbox(opts: SandboxOptions): Promise<RunningSandbox> {
  const inits: SandboxAccountInit[] = [...(opts.accounts ?? [])];
  if (opts.apiKey !== undefined) inits.unshift({ apiKey: opts.apiKey, balanceUsd: opts.balanceUsd ?? 1000 });
  if (inits.length === 0) throw new TypeError('startSandbox: give apiKey or accounts');
  for (const a of inits) {
    if (typeof a.apiKey !== 'string' || !API_KEY_FORMAT.test(a.apiKey)) {
      throw new TypeError('startSandbox: an API key must be 8-256 characters of A-Z a-z 0-9 . _ -');
    }
  }
  const now = opts.now ?? Date.now;
  const state = new SandboxState(opts.stateFile);
  try {
    for (const a of inits) {
      state.ensureAccount(a.apiKey, {
        balanceMicros: toMicros(a.balanceUsd ?? 1000), state: a.state ?? 'active', ipAllowlist: a.ipAllowlist ?? null,
      });
    }
    const catalog = new LiveCatalog(opts.catalogFile ? loadCatalogFile(opts.catalogFile) : defaultCatalog(), state);
    const faults = new Faults(opts.faults);
    const limiter = new RateLimiter(opts.rateLimits ?? DEFAULT_RATE_LIMITS);
    const fulfilment = { current: validateFulfilment({ ...DEFAULT_FULFILMENT, ...opts.fulfilment }) };
    const answers = new Answers(opts.answers ?? 'spec', { seed: fulfilment.current.seed, ...opts.realWorld });
    if (answers.realWorld) placeManualOrders(state, catalog, now());
    const timers = new Set<NodeJS.Timeout>();
    const settle = () => state.settleDue(now());
    const submit: SubmitContext = {
      state, catalog, faults, now, settle, inFlight: new Map(), fulfilment: () => fulfilment.current,
      realWorldFates: () => answers.fates(),
      delay: (ms) => new Promise((resolve) => {
        const t = setTimeout(() => { timers.delete(t); resolve(); }, ms);
        timers.add(t);
      }),
    };
    const players = new PlayerDirectory(fulfilment.current.seed);
    if (opts.players) players.update(opts.players);
    const admin = createAdmin({ state, catalog, faults, limiter, fulfilment, answers, players, now, settle });
    const adminToken = opts.adminToken ?? randomBytes(18).toString('base64url');
    const handler = createHandler({ state, catalog, faults, limiter, admin, adminToken, now, submit, answers, players, logger: opts.logger });
    const server = createServer((req, res) => {
      handler(req, res).catch((err: unknown) => {
        opts.logger?.error({ err }, 'sandbox handler failed');
        if (!res.headersSent) { res.writeHead(500, { 'content-type': 'application/json' }); res.end('{"success":false,"error":"INTERNAL SERVER ERROR"}'); }
      });
    });
    const host = opts.host ?? '127.0.0.1';
    await listen(server, host, opts.port ?? 0);
    const port = (server.address() as AddressInfo).port;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    opts.logger?.info({ url }, 'sandbox listening');
    let closed: Promise<void> | undefined;
    return {
      url, port, host, adminToken, admin,
      close: () => closed ??= new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => { state.close(); resolve(); });
        // Blackholed and slow requests would otherwise hold close() open for ever.
        server.closeAllConnections();
      }),
    };
  } catch (err) {
    state.close();
    throw err;
  }
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
}
