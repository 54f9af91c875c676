/**
 * The heap policy (src/kernel/heap-policy.ts) is set with v8.setFlagsFromString after V8 has started,
 * so these tests check, in a fresh child process each, that it really takes effect at run time:
 * under a load shaped like storing a big file (a rolling window of rows kept a while, then
 * dropped), the old generation is collected sooner than with V8's defaults. And that loading the
 * program (cli.js) leaves the young generation at its initial size, which a command's load then
 * grows as V8 does. Relative figures only: no absolute memory bound that a machine could miss.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const ROOT = join(import.meta.dirname, '..', '..');
/** The real CLI, built by test/global-setup.ts (TOPUP_TEST_CLI: another build, to show what this test catches). */
const CLI = process.env.TOPUP_TEST_CLI ?? join(ROOT, 'dist', 'cli.js');

/** Sizes in bytes: the young generation before and at most, young + old at most. */
type Figures = { newBefore: number; newMax: number; heapMax: number; live: number };

function churn(policy: 'lean' | 'throughput'): Figures {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { applyHeapPolicy } from './src/kernel/heap-policy.ts';
    const space = (name) => getHeapSpaceStatistics().find((s) => s.space_name === name).space_size;
    const newBefore = space('new_space');
    applyHeapPolicy(${JSON.stringify(policy)});
    let newMax = 0, heapMax = 0;
    // What a running daemon keeps live (~25 MB: catalog, statements, code, buffers).
    const kept = Array.from({ length: 150_000 }, (_, i) => ({ i, s: 'kept ' + i, a: [i, i + 1] }));
    const window = new Array(20_000);
    for (let i = 0; i < 1_000_000; i++) {
      // One stored row's worth of short-lived data, kept for the next 20,000 rows, long enough to reach the old generation.
      window[i % 20_000] = { i, cells: ['PUBG-60', String(1e9 + i), 'note ' + i], request: JSON.stringify({ pid: 'PUBG-60', userId: String(1e9 + i), trxid: 'tu' + i.toString(16).padStart(30, '0') }) };
      if (i % 1_000 === 0) { newMax = Math.max(newMax, space('new_space')); heapMax = Math.max(heapMax, space('new_space') + space('old_space')); }
    }
    process.stdout.write(JSON.stringify({ newBefore, newMax, heapMax, live: window.length + kept.length - 150_000 }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(out) as Figures;
}

describe('heap policy', () => {
  it('lean (the default) keeps the old generation smaller than V8 defaults do, set at run time; the young generation grows under load either way', () => {
    const lean = churn('lean');
    const throughput = churn('throughput');
    expect(lean.live).toBe(20_000);
    // Both policies leave the young generation to V8 (heap-policy.ts, "Start-up"): a load grows it.
    expect(lean.newMax).toBeGreaterThan(lean.newBefore);
    expect(throughput.newMax).toBeGreaterThan(throughput.newBefore);
    // Young and old together stay well below the defaults': the old generation is collected sooner.
    expect(lean.heapMax).toBeLessThan(throughput.heapMax * 0.75);
  }, 60_000);

  it('loading the program (cli.js, every module a command may use) leaves the young generation at its initial size', () => {
    // A preload reads the young generation's size when the process starts and when it exits:
    // `topup --version` loads every module of the program (program.ts imports them all), then exits.
    const dir = mkdtempSync(join(tmpdir(), 'topup-heap-start-'));
    try {
      const preload = join(dir, 'young.mjs');
      writeFileSync(preload, `
        import { getHeapSpaceStatistics } from 'node:v8';
        const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
        const atStart = young();
        process.on('exit', () => process.stderr.write('YOUNG ' + JSON.stringify({ atStart, atEnd: young() }) + '\\n'));
      `);
      const r = spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, CLI, '--version'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
      const m = /YOUNG (\{.*\})/.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      const { atStart, atEnd } = JSON.parse(m![1]!) as { atStart: number; atEnd: number };
      // V8 doubles the young generation at each collection that finds much of it alive: without the
      // start-up flag the imports take it from 1 MB to 16 MB a semi-space (× 16 and more).
      expect(atEnd).toBeLessThanOrEqual(atStart * 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('TOPUP_HEAP: lean by default, throughput on request, anything else refused naming the setting', () => {
    const home = mkdtempSync(join(tmpdir(), 'topup-heap-'));
    expect(loadConfig({ TOPUP_HOME: home }).heap).toBe('lean');
    expect(loadConfig({ TOPUP_HOME: home, TOPUP_HEAP: 'Throughput' }).heap).toBe('throughput');
    expect(() => loadConfig({ TOPUP_HOME: home, TOPUP_HEAP: 'small' })).toThrow(/TOPUP_HEAP.*"lean" or "throughput"/);
  });
});

