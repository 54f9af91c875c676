/**
 * Randomness, injected like time (kernel/clock.ts): the jitter of a resend's back-off, the salt of a batch
 * id, the random part of a lease owner's name, a staging folder's name. The system's source in a
 * process; a seeded one in the simulator (src/sim/), so that a seed replays the same run.
 *
 * Nothing outside this module draws random numbers for the engine (test/unit/world.test.ts);
 * secrets (the console's session keys and tokens) come from node:crypto directly and never from
 * here: a seeded source must never make one.
 */
import { randomBytes } from 'node:crypto';

export interface Entropy {
  /** A number in [0, 1). */
  random(): number;
  /** `bytes` random bytes as lower-case hex (2 × bytes characters). */
  hex(bytes: number): string;
}

export const systemEntropy: Entropy = Object.freeze({
  random: () => Math.random(),
  hex: (bytes: number) => randomBytes(bytes).toString('hex'),
});

/**
 * A seeded source (sfc32, seeded through splitmix32): small, fast, and the same sequence for the
 * same seed on every machine. Not for secrets.
 */
export function seededEntropy(seed: number): Entropy {
  let s = seed >>> 0;
  const split = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    random: () => next() / 4_294_967_296,
    hex: (bytes: number) => {
      let out = '';
      for (let i = 0; i < bytes; i++) out += (next() & 0xff).toString(16).padStart(2, '0');
      return out;
    },
  };
}
