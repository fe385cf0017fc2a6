/** What became of one callback POST. */
export type CallbackResult =
  | { kind: 'answered'; status: number }
  /** Not sent, and never will be to this URL: the egress policy refuses its destination. */
  | { kind: 'refused'; reason: string }
  /** No answer: DNS, connection, TLS or time-out trouble; worth trying again later. */
  | { kind: 'unreachable'; reason: string };

/** POSTs callbacks to the URLs callers gave, guarded like connector HTTP (no private addresses). */
export interface CallbackSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<CallbackResult>;
}
