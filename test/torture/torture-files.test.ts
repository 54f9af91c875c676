/** The torture scenarios of `npm test` (test/torture/quick.ts): resubmitted files, the same CSV twice, swallowed answers. */
import { tortureQuick } from './quick.js';

tortureQuick(['resubmit', 'same-csv', 'swallow']);
