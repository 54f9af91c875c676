/** The torture scenarios of `npm test` (test/torture/quick.ts): SIGKILL, lost answers, a duplicate in flight. */
import { tortureQuick } from './quick.js';

tortureQuick(['sigkill', 'lost-responses', 'duplicate-in-flight']);
