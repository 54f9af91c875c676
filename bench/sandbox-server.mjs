// The benchmark's sandbox: the real sandbox (dist/sandbox) with its clock running K times
// faster than the wall clock, so the supplier's real limits (40/1s, 200/1m) and real fulfilment
// times apply in sandbox time while the run takes 1/K of the time. Plain JS, run with plain node.
//
// Time compression, exactly: the sandbox clock is t0 + (now - t0) * K, so every window, every
// fulfilment time and every timestamp in its call log is in "real-equivalent" milliseconds. The
// one value the sandbox sends that a client turns into a wait, Retry-After (whole sandbox
// seconds), is divided by K on the way out. Nothing else of the sandbox is changed.
//
// Usage: node bench/sandbox-server.mjs '<json options>'; prints "listening on URL".
import { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';

const opts = JSON.parse(process.argv[2] ?? '{}');
const K = Number(opts.scale ?? 1);
const t0 = Number(opts.t0 ?? Date.now());
const dist = process.env.BENCH_DIST ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const { startSandbox } = await import(join(dist, 'sandbox', 'index.js'));

const wall = () => performance.timeOrigin + performance.now();
const now = K === 1 ? Date.now : () => Math.floor(t0 + (wall() - t0) * K);

if (K !== 1) {
  const writeHead = ServerResponse.prototype.writeHead;
  ServerResponse.prototype.writeHead = function (status, ...rest) {
    const headers = rest.find((x) => x && typeof x === 'object');
    if (headers && headers['retry-after'] !== undefined && /^\d+(\.\d+)?$/.test(String(headers['retry-after']))) {
      headers['retry-after'] = (Number(headers['retry-after']) / K).toFixed(3);
    }
    return writeHead.call(this, status, ...rest);
  };
}

const sandbox = await startSandbox({
  host: '127.0.0.1',
  port: 0,
  apiKey: opts.apiKey,
  balanceUsd: opts.balanceUsd ?? 1_000_000,
  adminToken: opts.adminToken,
  rateLimits: opts.rateLimits,
  fulfilment: opts.fulfilment,
  answers: opts.answers ?? 'spec',
  now,
});
process.stdout.write(`listening on ${sandbox.url}\n`);
const stop = async () => {
  await sandbox.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
