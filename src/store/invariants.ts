/**
 * What must never happen with money, said once, beside the state table (row-states.ts), each with
 * what enforces it and the tests that hold it. The enforcement is in the store wherever a store
 * can enforce it (an index, a trigger, one transaction), not in a check two processes could both
 * pass; the deterministic simulator (sim/) checks every one of them after every schedule, against
 * its model API's ledger (sim/invariants.ts). test/unit/invariants-list.test.ts holds this list to
 * the code: every test named here exists.
 */

export interface Invariant {
  id: string;
  /** The rule, as a reseller's money sees it. */
  rule: string;
  /** What makes it hold, and where. */
  enforcedBy: string;
  /** Test files and the titles (or parts of titles) of the tests that hold it. */
  tests: readonly { file: string; title: string }[];
  /** The simulator's check of it (sim/invariants.ts). */
  simulator: string;
}

export const INVARIANTS: readonly Invariant[] = Object.freeze([
  {
    id: 'one-row-per-order',
    rule: 'An order id belongs to at most one row.',
    enforcedBy: 'the unique index rows_order_id (migrations.ts); an answer naming an order another row holds sends the row to review (dispatch/sender.ts)',
    tests: [
      { file: 'test/unit/sender-paths.test.ts', title: 'an order another row already holds goes to review' },
      { file: 'test/review/resolve-charged-alias-id.test.ts', title: 'refused, even with --force, naming the row that holds it' },
      { file: 'test/review/resolve-charged-invisible-space.test.ts', title: 'refused, even with --force' },
    ],
    simulator: 'one order, one row, in any letter case (the operator types ids in other case, or slips to a held order with --force); codes on one row only; every charge held by its row',
  },
  {
    id: 'repeats-in-the-opening',
    rule: 'Whether a row repeats an earlier purchase is decided in the transaction that opens its batch: two processes opening edited copies of one file cannot both buy.',
    enforcedBy: 'claim/load.ts opens the batch in one IMMEDIATE transaction that also runs claim/repeats.ts skipRepeats (rows.ts skipAsRepeat: the `repeat` edge, only while the batch is claimed)',
    tests: [
      { file: 'test/unit/money-defects.test.ts', title: 'two loaders reading at the same time' },
      { file: 'test/daemon/money-safety.test.ts', title: 'two submits of edited copies of one file' },
      { file: 'test/claim/repeat-window.test.ts', title: 'an edited re-drop 30 h after the first file was claimed' },
    ],
    simulator: 'no purchase bought twice',
  },
  {
    id: 'foreign-orders-need-proof',
    rule:
      "An order the row's sends did not provably make (created before its first committed send, a replay on its first send, or a replay of unknown origin under a trxid the file gave) completes the row only when it names every field of a top-up, each the same, and says so in a note; a key/card row never takes codes that way without a person (review, saying why).",
    enforcedBy: 'dispatch/order-match.ts originOf, mustProve, foreignOrderProblem, used by dispatch/sender.ts, poll/verify.ts and poll/review-recheck.ts',
    tests: [
      { file: 'test/unit/money-defects.test.ts', title: 'the first send answered with a replay' },
      { file: 'test/unit/money-defects.test.ts', title: 'first send lost behind a proxy 502' },
      { file: 'test/dispatch/created-at-and-replays.test.ts', title: 'the first send is cut by a proxy' },
      { file: 'test/unit/sender-paths.test.ts', title: 'a replay on the first send is noted' },
    ],
    simulator: 'no row holds an order its sends did not make unless it says so (never a key/card row)',
  },
  {
    id: 'order-id-only-from-an-order',
    rule: 'An order id is read only from an answer that says an order exists, never from a failure body.',
    enforcedBy: 'api/client.ts saysOrderExists; api/classify.ts (an order id under its own key in a failure body leaves the order in doubt)',
    tests: [
      { file: 'test/unit/money-defects.test.ts', title: 'the row stays in doubt and the same trxid is sent again' },
      { file: 'test/dispatch/failure-body-order-id.test.ts', title: 'never read as "nothing charged" on a first send' },
    ],
    simulator: 'every row holding an order holds one the API made',
  },
  {
    id: 'sending-is-owned',
    rule: 'A row left `sending` by an owner that is gone (crashed, or released without an answer) is resent with its trxid; one whose send ended without an answer is resent by its owner.',
    enforcedBy: 'the trigger batches_taken_over (migration 9: the taken-over edge whenever a batch changes hands); engine/stages/dispatch.ts rescues its own stranded rows; a stop before the request left puts the row back (NotDispatchedError)',
    tests: [
      { file: 'test/unit/state-machine.test.ts', title: 'a batch changing hands moves its rows by the taken-over edges' },
      { file: 'test/unit/money-defects.test.ts', title: 'taken over by whoever takes the lease next' },
      { file: 'test/unit/money-defects.test.ts', title: 'resent by the process that holds it' },
      { file: 'test/daemon/money-safety.test.ts', title: 'finished by the next daemon, bought once' },
    ],
    simulator: 'every row final (no stall)',
  },
  {
    id: 'intent-before-request',
    rule: 'No POST /orders leaves without its intent (the row `sending`, its exact body and trxid) committed with a full sync, under the batch lease.',
    enforcedBy: 'rows.ts markSending (lease-guarded UPDATE), called by the client before the request (dispatch/sender.ts beforeSend)',
    tests: [
      { file: 'test/unit/sender-paths.test.ts', title: 'the intent is committed before the request leaves' },
      { file: 'test/unit/state-machine.test.ts', title: 'the intent to send needs both' },
    ],
    simulator: 'every charge held by its row',
  },
  {
    id: 'charged-never-read-as-not',
    rule: 'An answer that may mean "charged" is never read as "not charged": the row is resent with its trxid, checked in history, or reviewed; "not placed" needs history reaching certainly back before the first attempt.',
    enforcedBy: 'api/classify.ts (mayExist), rows.ts edges (a refusal of a row in doubt goes to `verifying`), poll/verify.ts (surelyBefore: 15 h, zones read only when named)',
    tests: [
      { file: 'test/unit/verify-paths.test.ts', title: 'the oldest order is more than 15 h older' },
      { file: 'test/dispatch/created-at-and-replays.test.ts', title: 'never `rejected`' },
    ],
    simulator: 'every charge held by its row, or its row in review',
  },
  {
    id: 'outcomes-by-the-lease-holder',
    rule: 'Outcomes of sends and polls are written only by the process holding the batch lease (an order in hand excepted: it proves a charge).',
    enforcedBy: 'rows.ts: every move but `placed` is guarded by the lease (LEASED)',
    tests: [{ file: 'test/unit/state-machine.test.ts', title: 'not applied by a process whose lease lapsed' }],
    simulator: 'result files = store = ledger',
  },
  {
    id: 'settled-rows-reach-their-results',
    rule: "A review row settled later (its order found by the recheck, or an operator's decision) reaches its batch's results as the next version: never a settled row in a `done` batch whose file still says review.",
    enforcedBy: 'store/settle.ts settleAndReopen: the row settled and its batch reopened in one transaction (poll/review-recheck.ts, ops/review.ts)',
    tests: [
      { file: 'test/ops/settle-and-reopen.test.ts', title: 'topup review resolve: a crash between leaves the row in review' },
      { file: 'test/ops/settle-and-reopen.test.ts', title: 'the review recheck: a crash between leaves the row in review' },
    ],
    simulator: 'result files = store = ledger',
  },
  {
    id: 'one-retry-per-batch',
    rule: 'A batch is retried once: two retries at once (a double click, the console beside the CLI) make one retry batch; the other is refused naming it.',
    enforcedBy: 'store/batches.ts create: the INSERT of a retry batch carries the rule (INSERT … SELECT … WHERE NOT EXISTS a live retry of the same batch), one statement',
    tests: [{ file: 'test/retry/two-retries-at-once.test.ts', title: 'one retry batch is made; the other call is refused' }],
    simulator: 'a batch is retried once (one retry in four is a double click)',
  },
  {
    id: 'one-account-at-a-time',
    rule: 'A row is on one supplier account at a time, and leaves it only where it is proven that nothing was created there (never sent, a send turned away before any order, a first send refused because the account cannot sell the pack, or history proving no order after such a refusal), always with a new trxid, never when the file pinned it; the trxid it leaves stays used: never live on two accounts, never bought on a second while the first may have charged.',
    enforcedBy: 'rows.account is one column; the trigger rows_account_moves (migrations.ts) refuses any other change of account whatever writes it; the edge `moved` leaves only pending and sending (row-states.ts), RowStore.move is guarded by the lease, the state, the account and the trxid; the intent (markSending) commits only for the trxid and account the sender read (dispatch/failover.ts)',
    tests: [
      { file: 'test/store/account-moves.test.ts', title: 'the trigger refuses a change of account' },
      { file: 'test/store/account-moves.test.ts', title: 'the intent of a send built for the account a row left is refused' },
      { file: 'test/unit/state-machine.test.ts', title: 'every event has a store method' },
      { file: 'test/store/account-moves.test.ts', title: 'the trxid a row left on an account stays used' },
      { file: 'test/store/account-moves.test.ts', title: 'a row pinned to its account by the file never changes account' },
      { file: 'test/accounts/crash-before-move.test.ts', title: 'the row is still moved to the account that sells the pack' },
    ],
    simulator: 'one schedule in three has two accounts (two model APIs and ledgers, faults per account, pinned rows, a shared trxid space): invariants 10–13 — each order maps to one row by account and trxid (trxids a row left included), a moved row has a new trxid and left no order behind, a row\'s order is in its own account\'s ledger, results show the account and a pinned row never moves',
  },
  {
    id: 'api-order-stored-before-answer',
    rule: 'An API order is on disk, with its trxid, before the shop is told it was accepted; one trxid is one order whoever sends it how often: the same body is answered as that order, any other body (or a trxid a file row or a moved row holds, in any letter case) is refused, never stored twice.',
    enforcedBy: 'orders/desk.ts stores it in a transaction on disk before the 202 (synchronous=FULL, or committed and its log fdatasynced off the event loop, store/wal-sync.ts), re-checking the trxid inside it; the unique index rows_trxid and the folded-trxid triggers (migration 11, the one fold since migration 13) refuse a second row whatever inserts it; rows.api_body_hash tells the same body from another',
    tests: [
      { file: 'test/orders/desk.test.ts', title: 'accepts an order durably (202)' },
      { file: 'test/orders/desk.test.ts', title: 'concurrent acceptances of one trxid store one order' },
    ],
    simulator: 'API orders in one schedule in four (sim/): each accepted trxid one row, never bought twice, not lost by a crash after its answer',
  },
  {
    id: 'one-trxid-one-fold',
    rule: 'A trxid is used once in every spelling: two trxids are the same when their folds are equal (NFKC, case mapping to a fixpoint: ÄB-7 is äb-7, ＡＢ-７ is ab-7, STRASSE is straße), the same fold in the store and in every JavaScript comparison.',
    enforcedBy: 'kernel/identity.ts foldTrxid, registered as the deterministic SQL function trxid_fold() on every connection (store/db.ts openDb, metrics/read-worker.ts); the index rows_trxid_folded and the triggers rows_trxid_not_left_* (migration 13) refuse a new row or a move onto a trxid a row has or left in any spelling; the folded indexes are rebuilt when the engine\'s Unicode tables change (db.ts refoldIfUnicodeChanged)',
    tests: [
      { file: 'test/store/trxid-fold.test.ts', title: 'SQLite trxid_fold() equals the JavaScript fold on arbitrary text' },
      { file: 'test/store/trxid-fold.test.ts', title: "the store's uniqueness is the fold's" },
      { file: 'test/store/trxid-fold.test.ts', title: 'migrates without failing, keeps both rows' },
      { file: 'test/claim/trxid-spellings.test.ts', title: 'file 1 with ÄB-7, file 2 with äb-7' },
      { file: 'test/orderapi/identity.test.ts', title: 'ÖD-9 then öd-9 is one trxid' },
    ],
    simulator: 'not yet drawn from the whole of Unicode by the simulator (issue 29, item 3): held by the property tests named here',
  },
  {
    id: 'an-account-is-its-endpoint-and-key',
    rule: 'A row that may have been charged (in flight, in doubt, placed and not ended, in review) is sent again, followed and settled only at the endpoint and key it was sent to, whatever the accounts file calls them: re-pointing its account elsewhere never buys it at a second supplier.',
    enforcedBy: 'every send records rows.sent_origin and rows.sent_key_fp in the intent\'s commit, and RowStore.markSending refuses a row not pending whose record names another identity; the start (runtime.ts, store/account-identity.ts reconcileAccounts, one IMMEDIATE transaction) refuses an accounts file re-pointing an account with unsettled rows and moves a renamed account\'s rows, and every other stored reference to it (the accounts rows left, left_trxids, and every per-account record of store/account-keys.ts: its pause, call log, learned limits), to its new name (account_renames, which the trigger rows_account_moves reads); topup accounts confirm is the audited exception',
    tests: [
      { file: 'test/accounts/re-pointed.test.ts', title: 're-pointing an account that holds a row in doubt to another host refuses the start' },
      { file: 'test/accounts/re-pointed.test.ts', title: 'a renamed account (the same URL and key under a new name) keeps its rows' },
      { file: 'test/accounts/re-pointed.test.ts', title: 'is the operator\'s audited word' },
      { file: 'test/accounts/renamed-account-left-by-a-row.test.ts', title: 'a row that left the account before the rename names it by its new name' },
      { file: 'test/accounts/rename-keeps-state.test.ts', title: 'its pause, its rate use, what it learned from 429s' },
    ],
    simulator: 'sim/world.ts config-rename and config-repoint (accounts.toml edited between restarts): invariants 10, 11 and 24 judge by the account (its model API), not its name, and 13 reads the names each result file was written with',
  },
  {
    id: 'api-batch-open-until-settled',
    rule: 'An API order is stored only in the open API batch of its day, and an API batch is done only when every order in it has ended: no order is appended to a batch nobody sends from.',
    enforcedBy: 'the triggers rows_api_insert_open and batches_api_done_settled, and the unique index batches_api_day (migration 12); the finishing stage leaves a day\'s batch open until a minute after its day (orders/api-batch.ts)',
    tests: [
      { file: 'test/store/api-orders.test.ts', title: 'an API order is stored only in an open API batch' },
      { file: 'test/store/api-orders.test.ts', title: 'an API batch is done only when every order in it has ended' },
    ],
    simulator: 'schedules crossing midnight: every day\'s API batch ends done with one result row per order',
  },
  {
    id: 'api-change-has-its-event',
    rule: 'Every change of an API order\'s public status is recorded, in the transaction that makes it, as an event the feed lists and the webhooks deliver: no code path can change an order and forget to tell the shop.',
    enforcedBy: 'the triggers rows_api_event_insert and rows_api_event_update (migration 12), with the mapping of orders/types.ts publicStatus',
    tests: [
      { file: 'test/store/api-orders.test.ts', title: 'every change of public status is an event' },
      { file: 'test/store/api-orders.test.ts', title: 'a file row changes no event; an event is undone with its change' },
    ],
    simulator: 'every API order\'s events are the statuses it went through, ending with its current one',
  },
]);
