/**
 * Completion routing: how a finished run gets back to whoever waits for it. This module owns the
 * protocol, its states and the order of its steps; the adapters hold the mechanism: the bus binds
 * completion partitions and carries direct replies (`JobBus.watchCompletion`, `reply`,
 * `publishCompletion`), the store keeps the `watched` mark and orders it with the completion
 * (`InvocationStore.watch`, `complete().watched`), and the embedded cluster carries notices between its
 * processes (apps/services completion-relay.ts). The callers go through here: the gateway and results wait
 * with `awaitFinished` (a sync call with `syncCallWait`), the executor announces with `announceRecorded`,
 * `replyCancelled` and `replySuspended`, the embedded relay asks `RelayLedger` and `watchDelayOf`.
 *
 * **Waiter** (`awaitFinished`): the states of one wait.
 *
 * | state    | hears                                     | how it got there                                                        |
 * |----------|-------------------------------------------|-------------------------------------------------------------------------|
 * | standby  | the direct reply to this process only     | a new sync call's gateway: its job asks for a direct reply; binds nothing |
 * | bound    | events by partition                       | any other wait (a repeat of a sync call, a poll), or a standby promoted  |
 * | watched  | events by partition, which the executor now publishes | a bound wait for a sync call marked the store                  |
 * | answered | -                                         | an event, a finished state read, or the deadline (then one store read)  |
 *
 * | from            | on                                                        | to                   | rule (a case of completion-routing.test.ts)           |
 * |-----------------|-----------------------------------------------------------|----------------------|-------------------------------------------------------|
 * | -               | a new sync call                                           | standby              | the wait is registered before the job is published    |
 * | -               | a repeat, a poll                                          | bound                | the partition is bound before the store is read       |
 * | bound           | its state: a sync call, unfinished                        | watched              | the watch is marked after the partition is bound; the state is the mark's, read after it; a sync call's waiter marks it watched |
 * | bound, watched  | its state: finished                                       | answered             | -                                                      |
 * | standby         | a direct reply with an outcome                            | answered             | -                                                      |
 * | standby         | its reply cannot come: the job's publish failed, the connection was lost, or the run suspended (a direct reply `Waiting`) | bound, then `onPromoted` | the bus binds first, then tells the wait |
 * | bound (promoted)| `onPromoted`: the mark finds it unfinished / finished     | watched / answered   | promotion marks watched, then ends if it finished       |
 * | bound, watched  | an event by partition                                     | answered             | -                                                      |
 * | any             | the deadline, a hang-up                                   | answered             | one store read                                         |
 *
 * **Announcer** (`announceRecorded`, the executor): what a finished run sends.
 *
 * | the job                          | the run                                            | direct reply                   | event by partition  | rule                                      |
 * |----------------------------------|----------------------------------------------------|--------------------------------|---------------------|-------------------------------------------|
 * | no reply address (async; a sync job published again without it) | recorded an outcome | -                      | always              | an async outcome is always published      |
 * | a reply address (a sync call)    | recorded an outcome, `complete()` says watched     | yes, a loss logged             | yes                 | a sync outcome is published only when watched |
 * | a reply address                  | recorded an outcome, not watched                   | yes, a loss requeues the job   | no                  | a lost reply alone requeues the job       |
 * | a reply address                  | found it finished (a redelivery), or gave up       | yes                            | yes                 | an outcome announced again goes to all    |
 * | a reply address                  | was stopped by a cancellation                      | `Cancelled`                    | no (the canceller published it) | a cancelled sync run replies Cancelled directly |
 * | a reply address                  | suspended (a durable wait)                         | `Waiting`: promotes the wait   | no                  | a suspended sync run replies Waiting      |
 *
 * The store orders a mark and a completion of one invocation (the store contract's case "orders marks with
 * the completion"): either the completion sees the mark (the event is published) or the mark returns the
 * outcome.
 *
 * **Relay** (`RelayLedger`, between the processes of an embedded cluster): a process that waits asks the
 * others with a watch (a poll at once, a sync call's wait where its job runs after LATE_WATCH_MS); a
 * process sends a completion, without its facts, when it is watched, when a watch comes within RECENT_MS
 * after it, or when it had announced a watch itself; otherwise it sends nothing.
 */
export * from './await-finished';
export * from './announce-completion';
export * from './relay-ledger';
