/**
 * Issue 29's ninth turn (reach): the worlds that reach the survivors of the mutation sample, as
 * values. A daemon stopped past its lease (SimScheduler.pause, world.ts `stall`) and a numbered
 * sheet sorted again (world.ts `renumber`, #3289); the operator that waits for review rows is
 * run-schedule.ts's (revert-check `resolve-refused`, docs/simulator.md "The ninth turn: reach").
 */
import { describe, expect, it } from 'vitest';
import { seededEntropy } from '../../src/kernel/entropy.js';
import { applyWorld, type Schedule } from '../../sim/schedule.js';
import { SimScheduler } from '../../sim/scheduler.js';
import type { World } from '../../sim/world.js';

function runAll(sim: SimScheduler): void {
  while (sim.step()) {
    // every event fires synchronously here
  }
}

describe('a process stopped and resumed (SimScheduler.pause)', () => {
  it('holds every event of the stopped process, the world goes on, and what fell due runs first, in order, at the resume', () => {
    const sim = new SimScheduler(seededEntropy(1));
    const log: string[] = [];
    const at = (ms: number, owner: string | null, what: string): void => void sim.at(ms, owner, what, () => log.push(`${sim.mono} ${what}`));
    at(1_000, 'a', 'a renews its lease');
    at(3_000, 'a', 'the answer reaches a');
    at(2_000, 'b', 'b takes the batch');
    at(15_000, 'a', "a's request times out");
    sim.at(500, null, 'a is stopped', () => {
      sim.pause('a', 20_000);
      log.push(`${sim.mono} a stopped`);
      expect(sim.paused('a')).toBe(true);
      // Scheduled for it while it is stopped (an answer arriving): held too.
      at(100, 'a', 'a late answer reaches a');
    });
    at(20_500, 'b', 'b acts at the resume instant');
    runAll(sim);
    expect(log).toEqual([
      '500 a stopped',
      '2000 b takes the batch',
      // Resumed at 20.5 s: in the order they fell due, before b's event of that instant.
      '20500 a late answer reaches a',
      '20500 a renews its lease',
      '20500 the answer reaches a',
      "20500 a's request times out",
      '20500 b acts at the resume instant',
    ]);
    expect(sim.paused('a')).toBe(false);
  });

  it('resume: a stopped process goes on sooner; what falls due after the resume keeps its own time', () => {
    const sim = new SimScheduler(seededEntropy(1));
    const log: string[] = [];
    const at = (ms: number, owner: string | null, what: string): void => void sim.at(ms, owner, what, () => log.push(`${sim.mono} ${what}`));
    at(2_000, 'a', 'the answer reaches a');
    at(12_000, 'a', "a's timer");
    sim.at(1_000, null, 'a is stopped for 60 s', () => sim.pause('a', 60_000));
    sim.at(5_000, 'b', 'b takes the batch', () => {
      log.push(`${sim.mono} b takes the batch`);
      sim.resume('a', 0);
    });
    runAll(sim);
    expect(log).toEqual(['5000 b takes the batch', '5000 the answer reaches a', "12000 a's timer"]);
  });

  it('takes no draw when no process is stopped: events of one instant are ordered by the seed as before', () => {
    const order = (pause: boolean): string[] => {
      const sim = new SimScheduler(seededEntropy(7));
      const log: string[] = [];
      if (pause) sim.pause('nobody', 1_000);
      for (const x of ['x', 'y', 'z', 'w']) sim.at(10, x, x, () => log.push(x));
      runAll(sim);
      return log;
    };
    expect(order(true)).toEqual(order(false));
  });
});

const base = (world: Partial<World>, actions: Schedule['actions']): Schedule =>
  ({
    seed: 1,
    api: { maintenance: [], accountDown: [] },
    daemons: 1,
    restartMs: 100,
    files: [
      { rows: [{ pid: 'STEAM-5', quantity: 1 }, { pid: 'PUBG-60', userId: '5123400002' }], trxidColumn: false, noteColumn: false, delimiter: ',' },
      { rows: [{ pid: 'KEY-PUBG-60', quantity: 1 }, { pid: 'STEAM-5', quantity: 2 }], trxidColumn: false, noteColumn: false, delimiter: ',' },
    ],
    actions,
    foreign: [],
    forbidden: [],
    world: { faults: [], stall: { on: 'history', nth: 0, ms: 25_000 }, renumber: { column: 'SN', afterMs: 60_000 }, ...world },
  }) as unknown as Schedule;

describe('the worlds of the ninth turn', () => {
  it('renumber: every file numbered SN, later gives of a file reordered, a file given once dropped again reordered', () => {
    const s = applyWorld(
      base({ faults: ['renumber'] }, [
        { at: 1_000, kind: 'drop', file: 0, edit: 'none' },
        { at: 2_000, kind: 'drop', file: 1, edit: 'none' },
        { at: 9_000, kind: 'drop', file: 1, edit: 'none' },
        { at: 9_500, kind: 'submit', file: 1, again: false, edit: 'add-column' },
      ]),
    );
    expect(s.files.map((f) => f.numbering)).toEqual(['SN', 'SN']);
    expect(s.actions.map((a) => (a.kind === 'drop' || a.kind === 'submit' ? `${a.at} ${a.kind} ${a.file} ${a.edit}` : a.kind))).toEqual([
      '1000 drop 0 none',
      '2000 drop 1 none',
      // A later give as it is comes reordered; one edited otherwise keeps its edit.
      '9000 drop 1 reorder',
      '9500 submit 1 add-column',
      // File 0 was given once: given again, reordered, afterMs later.
      '61000 drop 0 reorder',
    ]);
  });

  it('renumber off: nothing changes; stall: the home has two daemons', () => {
    const actions: Schedule['actions'] = [{ at: 1_000, kind: 'drop', file: 0, edit: 'none' }];
    const off = applyWorld(base({ faults: [] }, actions));
    expect(off.files.map((f) => f.numbering)).toEqual([undefined, undefined]);
    expect(off.actions).toEqual(actions);
    expect(off.daemons).toBe(1);
    expect(applyWorld(base({ faults: ['stall'] }, actions)).daemons).toBe(2);
  });

  it('operator: a schedule without a resolve gets one at the drawn time; one with a resolve keeps its own', () => {
    const op = { operator: { at: 420_000, slip: 'case' as const } };
    const without = applyWorld(base({ faults: ['operator'], ...op }, [{ at: 1_000, kind: 'drop', file: 0, edit: 'none' }]));
    expect(without.actions.map((a) => a.kind)).toEqual(['drop', 'resolve']);
    expect(without.actions[1]).toEqual({ at: 420_000, kind: 'resolve', slip: 'case' });
    const own: Schedule['actions'] = [{ at: 1_000, kind: 'drop', file: 0, edit: 'none' }, { at: 600_000, kind: 'resolve', slip: 'none' }];
    expect(applyWorld(base({ faults: ['operator'], ...op }, own)).actions).toEqual(own);
  });
});
