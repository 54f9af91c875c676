/**
 * Each money fix of issue 20 (and those the simulator and the second adversarial review found), undone by a small edit of the
 * source: `npx tsx sim/revert-check.ts` applies one at a time in a scratch copy of the repository
 * and runs the simulator until it fails, to show that the simulator looks where those defects are
 * (docs/simulator.md has the figures). An edit names the exact text it replaces, so a change of
 * that code makes the check say the revert no longer applies instead of testing nothing.
 */
export interface Revert {
  id: string;
  defect: string;
  edits: { file: string; find: string; replace: string }[];
  /** Which schedules to run (run.ts --accounts): a revert of a rule of several accounts needs two. */
  accounts?: 'mixed' | 'one' | 'two';
  /** Which schedules have a shop (run.ts --api-orders): a revert of an order API rule needs one in each. */
  apiOrders?: 'mixed' | 'none' | 'all';
  /** The fault classes the swarm draws from (run.ts --faults): a defect of one class's world needs that class. */
  faults?: string;
}

export const REVERTS: readonly Revert[] = [
  {
    id: 'repeats-before-opening',
    defect: 'issue 20, defect 1: repeats judged before the batch opens, outside its transaction (two openers both buy)',
    edits: [
      {
        file: 'src/claim/load.ts',
        find: '  await rt.clock.yield();\n  const claimed = batch.contentHash.split',
        replace:
          '  rt.db.transaction(() => {\n    rt.rows.insertAll(batch.id, rows, now);\n    rows = [];\n    if (checkRepeats) repeats = skipRepeats(rt, batch, file.header.header.columns, claimedAt - rt.config.repeatWindowMs, rt.clock.now());\n  }).immediate();\n  await rt.clock.yield();\n  const claimed = batch.contentHash.split',
      },
      { file: 'src/claim/load.ts', find: '    if (checkRepeats) repeats = skipRepeats(rt, batch, file.header.header.columns, claimedAt - rt.config.repeatWindowMs, rt.clock.now());\n    if (duplicate)', replace: '    if (duplicate)' },
      { file: 'src/claim/load.ts', find: '  let repeats = 0;\n', replace: '' },
      { file: 'src/claim/load.ts', find: '  const checkRepeats = rt.config.repeatWindowMs > 0 && !orderedAgain(batch);', replace: '  const checkRepeats = rt.config.repeatWindowMs > 0 && !orderedAgain(batch);\n  let repeats = 0;' },
    ],
  },
  {
    id: 'foreign-replay-taken',
    defect: 'issue 20, defect 2: an order replayed on a first send (or made earlier) completes a key/card row',
    edits: [{ file: 'src/dispatch/sender.ts', find: 'const foreign = prove ? foreignOrderProblem(row, placed, names) : null;', replace: 'const foreign = null;' }],
  },
  {
    id: 'history-card-candidate',
    defect: 'issue 20, defect 3: the history check takes a trxid-less order of the same pack for a key/card row',
    edits: [
      {
        file: 'src/poll/verify.ts',
        find: "const candidates = needsCodes(row) ? [] : open.filter((o) => unnamedFields(row, o).length === 0 && originOf(o, row.firstSentAt, 'history', offset) !== 'earlier');",
        replace: "const candidates = open.filter((o) => (needsCodes(row) ? o.pid !== undefined || o.packName !== undefined : unnamedFields(row, o).length === 0));",
      },
    ],
  },
  {
    id: 'sending-stranded',
    defect: 'issue 20, defect 4: a row left `sending` by a stop during a Retry-After hold, the batch released, never resent',
    edits: [
      { file: 'src/store/migrations.ts', find: '  CREATE TRIGGER batches_taken_over AFTER UPDATE OF owner ON batches', replace: '  CREATE TRIGGER batches_taken_over AFTER UPDATE OF owner ON batches WHEN 0' },
      { file: 'src/store/migrations.ts', find: '    WHEN NEW.owner IS NOT NULL AND OLD.owner IS NOT NEW.owner BEGIN', replace: '    AND NEW.owner IS NOT NULL AND OLD.owner IS NOT NEW.owner BEGIN' },
      { file: 'src/dispatch/sender.ts', find: "    if (err instanceof NotSent) return 'not-sent';", replace: "    if (err instanceof NotSent) return 'not-sent';\n    if (signal?.aborted && !(err instanceof ApiError)) return 'not-sent';" },
      { file: 'src/engine/stages/dispatch.ts', find: '    if (batches) this.#rescueStranded(batches, now);', replace: '' },
      { file: 'src/engine/stages/leases.ts', find: "      rt.log.info({ batch: b.id, file: b.sourceName, previousOwner: b.owner }, 'took batch');", replace: "      if (b.owner !== null) rt.rows.takenOver(b.id, now);\n      rt.log.info({ batch: b.id, file: b.sourceName, previousOwner: b.owner }, 'took batch');" },
    ],
  },
  {
    id: 'failure-body-id',
    defect: 'issue 20, defect 5: an id in a failure body taken as the row\'s order',
    edits: [{ file: 'src/api/client.ts', find: '  if (order.orderCreated !== undefined) return order.orderCreated;', replace: '  return order.orderCreated !== false;' }],
  },
  {
    id: 'retry-unchecked',
    defect: 'found by the simulator: an ordinary retry buys rows an edited re-drop bought meanwhile',
    edits: [{ file: 'src/claim/repeats.ts', find: '  if (batch.origin === \'retry\') return batch.retryOf === null;', replace: "  if (batch.origin === 'retry') return true;" }],
  },
  {
    id: 'history-unclear-candidate',
    defect: 'found by the simulator: the history check takes one candidate while another order could be the row\'s',
    edits: [{ file: 'src/poll/verify.ts', find: '  if (candidates.length === 1 && unclear) {', replace: '  if (candidates.length === 1 && unclear && false) {' }],
  },
  {
    id: 'resolve-alias-id',
    defect: 'adversarial review 2: review resolve --charged (with --force) settles a row with an order another row holds under another spelling of its id',
    edits: [
      { file: 'src/ops/review.ts', find: '    if (holder && !(holder.batchId === row.batchId && holder.idx === row.idx)) {', replace: '    if (holder && id === orderId && !(holder.batchId === row.batchId && holder.idx === row.idx)) {' },
      { file: 'src/store/row-reads.ts', find: "AND lower(trim(order_id)) = lower(trim(@orderId))${on} LIMIT 1", replace: "AND order_id = @orderId AND 0${on} LIMIT 1" },
    ],
  },
  {
    id: 'retry-twice',
    defect: 'adversarial review 2: two retries of one batch at once both make a retry batch',
    edits: [{ file: 'src/store/batches.ts', find: '         WHERE @retryOf IS NULL OR NOT EXISTS', replace: '         WHERE @retryOf IS NULL OR 1 OR NOT EXISTS' }],
  },
  {
    id: 'failover-after-doubt',
    defect: 'issue 22, failover only on proof: a row in doubt (its answer lost, `resending`) refused on a resend (UNKNOWN PID, INVALID PACK, out of stock, no balance) moves to another account',
    accounts: 'two',
    edits: [
      {
        file: 'src/dispatch/sender.ts',
        find: "        row.state === 'pending' && !namesAnOrder(err.answer?.body) && movesOnRefusal(",
        replace: "        (row.state === 'pending' || row.state === 'resending') && !namesAnOrder(err.answer?.body) && movesOnRefusal(",
      },
      {
        file: 'src/dispatch/sender.ts',
        find: "{ code: err.apiCode ?? err.codeOrStatus, why: `${row.account} refused it: ${reason}` }, 'sending');",
        replace: "{ code: err.apiCode ?? err.codeOrStatus, why: `${row.account} refused it: ${reason}` }, row.state === 'resending' ? ('resending' as 'sending') : 'sending');",
      },
      { file: 'src/store/row-states.ts', find: "    ...edges(['sending'], 'moved', ['pending'],", replace: "    ...edges(['sending', 'resending'], 'moved', ['pending']," },
      { file: 'src/store/migrations.ts', find: "NEW.state = 'pending' AND OLD.state IN ('pending', 'sending', 'verifying') AND OLD.order_id IS NULL", replace: "NEW.state = 'pending' AND OLD.state IN ('pending', 'sending', 'verifying', 'resending') AND OLD.order_id IS NULL" },
    ],
  },
  {
    id: 'failover-same-trxid',
    defect: 'issue 22: a row moved to another account keeps its trxid (accounts at one supplier share one trxid space)',
    accounts: 'two',
    edits: [
      { file: 'src/dispatch/failover.ts', find: '  const root = row.moves[0]?.trxid ?? row.trxid!;\n', replace: '  if (account !== \'\') return row.trxid!;\n  const root = row.moves[0]?.trxid ?? row.trxid!;\n' },
      { file: 'src/store/migrations.ts', find: 'AND NEW.order_id IS NULL AND NEW.trxid IS NOT OLD.trxid AND NEW.trxid IS NOT NULL', replace: 'AND NEW.order_id IS NULL AND NEW.trxid IS NOT NULL' },
    ],
  },
  {
    id: 'api-body-hash-meta',
    defect: 'issue 23: the body hash leaves out a field (meta): the same trxid with another body is answered as the same order (200)',
    apiOrders: 'all',
    edits: [{ file: 'src/orders/desk.ts', find: ".filter((k) => k !== 'queue' && input[k] !== undefined)", replace: ".filter((k) => k !== 'queue' && k !== 'meta' && input[k] !== undefined)" }],
  },
  {
    id: 'api-day-finished-open',
    defect: 'issue 23: the finishing stage finishes the day\'s API batch once its orders ended, while its day still takes orders',
    apiOrders: 'all',
    edits: [{ file: 'src/engine/stages/finishing.ts', find: 'const openForOrders = apiBatchOpenForOrders(batch, now);', replace: 'const openForOrders = apiBatchOpenForOrders(batch, now) && false;' }],
  },
  {
    id: 'api-event-processing',
    defect: 'issue 23: the order_events trigger misses the change to processing (a change of public status with no event)',
    apiOrders: 'all',
    edits: [{ file: 'src/store/migrations.ts', find: 'CREATE TRIGGER rows_api_event_update AFTER UPDATE OF state ON rows\n    WHEN NEW.api_body_hash IS NOT NULL AND', replace: "CREATE TRIGGER rows_api_event_update AFTER UPDATE OF state ON rows\n    WHEN NEW.api_body_hash IS NOT NULL AND NEW.state NOT IN ('processing', 'unseen') AND" }],
  },
  {
    id: 'api-no-recheck',
    defect: 'issue 23: the desk does not look the trxid up again inside the group commit (two acceptances of one trxid in one group: the store refuses the second and the whole group fails)',
    apiOrders: 'all',
    edits: [
      { file: 'src/orders/desk.ts', find: '    const known = this.#known(p.input.trxid, p.hash);\n    if (known) return known;\n', replace: '' },
      { file: 'src/orders/desk.ts', find: '      const again = this.#known(p.input.trxid, p.hash);\n      if (again) return again;\n', replace: '' },
    ],
  },
  // Issue 31: planted defects of the player checks, one per invariant (30, 31, 32): each must be found.
  {
    id: 'check-not-found-ignored',
    defect: 'issue 31 (planted): a cached not-found answer is ignored when the batch is stored, so the row of a player who does not exist is sent (invariant 30)',
    faults: 'checks,lost,crash',
    edits: [{ file: 'src/claim/load.ts', find: "if (j.kind === 'cached' && j.answer.outcome === 'not-found') {", replace: "if (j.kind === 'cached' && j.answer.outcome === 'not-found' && j.answer.name !== null) {" }],
  },
  {
    id: 'check-sent-as-order',
    defect: 'issue 31 (planted): the player check is posted to the order route (a check that could place an order; invariant 31)',
    faults: 'checks,lost,crash',
    edits: [{ file: 'src/api/client.ts', find: '    const path = CHECK_PATHS[req.kind];\n    let x: Exchange;', replace: "    const path = req.kind === 'ml' ? CHECK_PATHS[req.kind] : '/orders';\n    let x: Exchange;" }],
  },
  {
    id: 'check-cost-found-only',
    defect: 'issue 31 (planted): only checks that found a player are counted at the tariff (a not-found or lost check the supplier charged is not in the money the reseller sees; invariant 32)',
    faults: 'checks,lost,crash',
    edits: [{ file: 'src/claim/player-checks.ts', find: 'store.finish(trxid, { outcome: r.outcome, said: r.said, charged: r.charged,', replace: "store.finish(trxid, { outcome: r.outcome, said: r.said, charged: r.outcome === 'found' ? r.charged : 'no'," }],
  },
  {
    id: 'api-cancel-still-accepting',
    defect: "issue 29's sixth turn (planted): the desk takes orders into the day's API batch an operator cancelled (invariant 36: no order stored into it after the cancel)",
    apiOrders: 'all',
    faults: 'api-cancel',
    edits: [{ file: 'src/orders/desk.ts', find: '          if (day.cancelRequested) outcomes.push(notAccepting(', replace: '          if (day.cancelRequested && !day.cancelRequested) outcomes.push(notAccepting(' }],
  },
  {
    id: 'api-cancel-drops-trxid',
    defect: "adv9 again (planted): a cancel gives up the trxid of a never-sent API order as of a file's row (the shop's order read 404 under the trxid it knows; invariant 36)",
    apiOrders: 'all',
    faults: 'api-cancel',
    edits: [{ file: 'src/store/rows.ts', find: 'trxid = CASE WHEN first_sent_at IS NULL AND api_body_hash IS NULL THEN NULL ELSE trxid END', replace: 'trxid = CASE WHEN first_sent_at IS NULL THEN NULL ELSE trxid END' }],
  },
  {
    id: 'plain-refusal-in-doubt',
    defect: "issue 29's sixth turn (planted, as mutant #296): a plain refusal of a first send read as in doubt (resent until the give-up, then review: a person asked about a row nothing can have charged; invariant 37)",
    faults: 'plain-refusals',
    edits: [{ file: 'src/api/classify.ts', find: "    return result(submit || status === 400 ? 'rejected' : 'ambiguous');", replace: "    return result('ambiguous', true);" }],
  },
  {
    id: 'api-cancel-waits-for-day',
    defect: "adv9 again (planted): a cancelled day's API batch is held open until its day is over (invariant 36, and the run's stall: the batch never finishes while its day lasts)",
    apiOrders: 'all',
    faults: 'api-cancel',
    edits: [{ file: 'src/engine/stages/finishing.ts', find: 'const openForOrders = !batch.cancelRequested && apiBatchOpenForOrders(batch, now);', replace: 'const openForOrders = apiBatchOpenForOrders(batch, now);' }],
  },
  {
    id: 'restore-reconcile-skipped',
    defect: "issue 32 (planted): the reconcile-first start after a restore reads the ledgers but settles none of the copy's rows (its marker still removed): a row that failed over and was bought on the other account after the copy is sent again on the account the copy names (invariant 38, and 1)",
    accounts: 'two',
    faults: 'restore,maintenance',
    edits: [{ file: 'src/ops/restore-reconcile.ts', find: 'const { settled, needsPerson, unchanged } = settleRows(rt, rows, sweeps, removedSince(', replace: 'const { settled, needsPerson, unchanged } = settleRows(rt, [], sweeps, removedSince(' }],
  },
  {
    id: 'restore-journal-skipped',
    defect: "issue 32 (planted): the first start after a restore does not accept the order API journal's orders again: an order answered 202 after the copy was taken is lost with the store it was written to (invariant 14: an answered order is stored, never lost)",
    apiOrders: 'all',
    faults: 'restore',
    edits: [{ file: 'src/ops/restore-reconcile.ts', find: '  if (opts.recoverJournal) await opts.recoverJournal();', replace: '' }],
  },
  // Issue 29's eighth turn: rules the docs state that no invariant checked (survivors of the fresh
  // mutation sample, seed 69913), each planted as its mutant was, and "every daemon of a home eventually sends" (issue 32).
  {
    id: 'verifying-never-cleared',
    defect: "issue 29 (planted, as mutant #2521): every history check settles a row only by its own trxid, so a `verifying` row (an answer lost, then a resend refused) that history clears goes to review instead of ending \"not placed\" (docs/how-it-works.md; invariant 39)",
    faults: 'lost,error,plain-refusals,withdrawn,crash',
    edits: [{ file: 'src/poll/verify.ts', find: "  const ownOnly = row.state === 'searching';", replace: '  const ownOnly = true;' }],
  },
  {
    id: 'resolve-refused',
    defect: "issue 29 (planted, as mutant #4463): `topup review resolve` refuses every well-formed decision (\"say what happened\"), so an operator's answer never takes effect (invariant 42)",
    // `operator` (the ninth turn): a resolve in every schedule, watching until a row reaches review.
    faults: 'lost,error,forever,crash,operator',
    edits: [{ file: 'src/ops/review.ts', find: '  if ((req.chargedOrderId === undefined) === (req.notCharged !== true)) {', replace: '  if ((req.chargedOrderId === undefined) !== (req.notCharged !== true)) {' }],
  },
  {
    id: 'review-without-lease',
    defect: 'issue 29 (planted, as mutant #3965): a move to review is not guarded by the batch lease, so a process that lost the batch (a lease lapsed across a clock step, another daemon took it) writes review over the new owner\'s outcome (invariant 41)',
    // `stall` (the ninth turn): a daemon stopped past its lease while the other takes the batch; the
    // clock steps and crashes alone did not meet it in the eighth turn's 40 schedules.
    faults: 'lost,error,forever,stall',
    edits: [{ file: 'src/store/rows.ts', find: "review_since = @now, next_poll_at = @recheckAt, last_answer = coalesce(@answer, last_answer)`, {\n        guard: LEASED,\n      }),", replace: "review_since = @now, next_poll_at = @recheckAt, last_answer = coalesce(@answer, last_answer)`, {}),"}],
  },
  {
    id: 'restore-second-daemon-gives-up',
    defect: "issue 32 (planted): a daemon whose reconcile after a restore waits for another live process's batches stops retrying (returns as if reconciled by the other), so when that other daemon is gone for good the home never sends (invariant 40)",
    faults: 'restore,maintenance',
    edits: [
      {
        file: 'src/ops/restore-reconcile.ts',
        find: '      return await reconcileOnce(rt, marker, opts);\n    } catch (err) {\n',
        replace: "      return await reconcileOnce(rt, marker, opts);\n    } catch (err) {\n      if (coerceError(err).message.startsWith('another live process')) return null;\n",
      },
    ],
  },
  // Issue 29's ninth turn (reach): a survivor that needed a world to reach it, planted as it was.
  {
    id: 'sn-not-row-number',
    defect: "issue 29 (planted, as mutant #3289): a column named `sn` is not read as a row number, so a re-drop of a numbered sheet sorted again makes a key/card row's repeat look new (its number changed): bought again (invariants 1, 8)",
    accounts: 'one',
    faults: 'renumber',
    edits: [{ file: 'src/claim/repeats.ts', find: "  'sn', 's/n', 'sno',", replace: "  '', 's/n', 'sno'," }],
  },
];
