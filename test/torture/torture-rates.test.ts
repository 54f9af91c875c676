/** The torture scenarios of `npm test` (test/torture/quick.ts): the rate limits, Retry-After, the supplier's conditions. */
import { tortureQuick } from './quick.js';

tortureQuick(['rate', 'retry-after', 'conditions']);
