/** Starts bench/sandbox-server.mjs as a child process and reads its admin routes. */
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { CallLogEntry, AdminLedger, RateStats } from '../src/sandbox/index.js';
import { BENCH_DIR, startChild, stopChild, waitForOutput } from './lib.js';

export interface SandboxSpec {
  apiKey: string;
  /** Real-equivalent (sandbox-clock) limits: the supplier's own, e.g. 40/1s and 200/1m. */
  rateLimits: { limit: number; windowMs: number }[];
  fulfilment: { processingShare: number; processingMs: [number, number]; failShare: number; seed: number };
  balanceUsd: number;
  scale: number;
  /** 'real-world': the sandbox answers like a real deployment (src/sandbox/real-world.ts). */
  answers?: 'spec' | 'real-world';
}

export interface BenchSandbox {
  url: string;
  /** Wall-clock ms at which the sandbox clock equals the wall clock. */
  t0: number;
  scale: number;
  child: ChildProcess;
  calls(): Promise<CallLogEntry[]>;
  ledger(): Promise<AdminLedger>;
  rateStats(): Promise<RateStats>;
  /** POST /__sandbox/<op> (e.g. 'product' with { id, stock }). */
  admin(op: string, body: unknown): Promise<unknown>;
  /** Wall-clock ms → sandbox (real-equivalent) ms. */
  toSandbox(wallMs: number): number;
  stop(): Promise<void>;
}

const ADMIN = 'bench-admin-token';

export async function startBenchSandbox(spec: SandboxSpec): Promise<BenchSandbox> {
  const t0 = Date.now();
  const child = startChild(process.execPath, [
    join(BENCH_DIR, 'sandbox-server.mjs'),
    JSON.stringify({ ...spec, adminToken: ADMIN, t0 }),
  ]);
  const m = await waitForOutput(child, /listening on (http:\/\/\S+)/, 20_000);
  child.stdout?.resume();
  child.stderr?.resume();
  const url = m[1]!;
  const admin = async <T>(op: string): Promise<T> => {
    const res = await fetch(`${url}/__sandbox/${op}`, { headers: { 'x-sandbox-admin': ADMIN } });
    if (!res.ok) throw new Error(`sandbox admin ${op}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    url,
    t0,
    scale: spec.scale,
    child,
    calls: async () => (await admin<{ calls: CallLogEntry[] }>('calls')).calls,
    ledger: () => admin<AdminLedger>('ledger'),
    rateStats: () => admin<RateStats>('rate-stats'),
    admin: async (op, body) => {
      const res = await fetch(`${url}/__sandbox/${op}`, { method: 'POST', headers: { 'x-sandbox-admin': ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`sandbox admin ${op}: ${res.status} ${await res.text()}`);
      return res.json();
    },
    toSandbox: (w) => t0 + (w - t0) * spec.scale,
    stop: () => stopChild(child),
  };
}
