import type { Scenario } from '../lib.js';
import { sigkillLoop } from './sigkill-loop.js';
import { lostResponses, duplicateInFlight } from './lost-responses.js';
import { rateCompliance, retryAfter } from './rate.js';
import { conditions } from './conditions.js';
import { resubmit } from './resubmit.js';
import { powerCut } from './power-cut.js';
import { sameCsv } from './same-csv.js';
import { swallow } from './swallow.js';
import { accounts } from './accounts.js';
import { api } from './api.js';
import { takeover } from './takeover.js';
import { restore } from './restore.js';

/** In the order of the list. */
export const SCENARIOS: Scenario[] = [sigkillLoop, lostResponses, duplicateInFlight, rateCompliance, retryAfter, conditions, resubmit, powerCut, sameCsv, swallow, accounts, api, restore, takeover];
