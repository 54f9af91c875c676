/**
 * The order desk: accepts API orders into the day's API batch, reads them back, and lists their
 * changes. (Being written by the lead: this placeholder only fixes the constructor's signature.)
 */
import type { Runtime } from '../runtime.js';
import type { OrderDesk } from './types.js';

export function createOrderDesk(_rt: Runtime, _wake: () => void): OrderDesk {
  throw new Error('createOrderDesk: not built yet');
}
